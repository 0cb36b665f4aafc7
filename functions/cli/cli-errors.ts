/**
 * What the CLI prints and exits with when something fails: one line a person can act on (the error
 * code, the message, the fix where there is one), an exit code a script can branch on, and a stack
 * trace only with --debug. The codes are documented in docs/cli.md.
 */
import { AgentHostError } from '../../sdk/src/errors.ts';
import { ConfigError } from '../platform/config-error.ts';
import { VaultConfigurationError } from '../ports/secret-vault.ts';
import { PlatformError } from '../shared/errors.ts';
import { escapeControls, escapeControlsKeepingLayout } from './terminal-text.ts';

/** Exit codes, by what went wrong. */
export const EXIT = {
  ok: 0,
  /** The server failed (5xx), could not be reached, or anything unexpected. */
  server: 1,
  /** The command line or the input was wrong (unknown option, missing argument, 400, 413, 415, 422). */
  usage: 2,
  /** 409: the thing exists already, or changed meanwhile. */
  conflict: 3,
  /** 401, 403: no key, a bad key, or a role that may not. */
  auth: 4,
  /** 404. */
  notFound: 5,
  /** 429: a rate limit or quota. */
  rateLimited: 6,
  /** 402: not enough credits for a paid agent. */
  credits: 7,
} as const;

/**
 * The code a failure of the CLI's own is named by: the platform's code for the same exit code, so
 * a script that matches `NOT_FOUND` finds a missing agent whether the CLI or the API said so.
 */
const CODE_OF_EXIT: Readonly<Record<number, string>> = {
  [EXIT.server]: 'INTERNAL_ERROR',
  [EXIT.usage]: 'INVALID_INPUT',
  [EXIT.conflict]: 'CONFLICT',
  [EXIT.auth]: 'UNAUTHORIZED',
  [EXIT.notFound]: 'NOT_FOUND',
  [EXIT.rateLimited]: 'RATE_LIMITED',
  [EXIT.credits]: 'INSUFFICIENT_CREDITS',
  130: 'CANCELLED',
};

/** An error of the CLI's own (bad flags, a missing file), with its exit code, its code and a fix. */
export class CliError extends Error {
  override name = 'CliError';
  readonly exitCode: number;
  readonly hint: string | undefined;
  readonly code: string;
  constructor(message: string, exitCode: number = EXIT.usage, hint?: string, code?: string) {
    super(message);
    this.exitCode = exitCode;
    this.hint = hint;
    this.code = code ?? CODE_OF_EXIT[exitCode] ?? 'INTERNAL_ERROR';
  }
}

/** The code of a command-line mistake commander found (an unknown option, a missing argument). */
export const USAGE_CODE = CODE_OF_EXIT[EXIT.usage] as string;

const HINTS: Partial<Record<string, string>> = {
  // From a call, a service deploy or restart: the agent declares secrets the workspace's vault lacks.
  MISSING_SECRETS:
    'put each in the workspace vault with `agenthost secrets set NAME` (value from stdin or a prompt)',
  INSUFFICIENT_CREDITS: 'top up with `agenthost billing topup --credits N`',
  FORBIDDEN: 'ask a workspace owner, or use a key of an account with that role',
  PAID_AGENT_SERVER_ONLY: 'call paid agents with a server key, not a client key',
};

/**
 * A fix for a refusal its code alone does not tell apart (INVALID_INPUT is every kind of bad
 * input), told by the field the platform names.
 */
function refusalHint(err: AgentHostError): string | undefined {
  const fields = err.details?.fields ?? [];
  // A tool or agent published with no required_secrets (spec "Validation on publish").
  if (
    err.code === 'INVALID_INPUT' &&
    fields.some((f) => /(^|\.)required_secrets$/.test(f.field) && f.message.startsWith('must be declared'))
  )
    return 'list the secrets it needs in required_secrets, or if it needs none, publish with --allow-no-secrets';
  if (err.code === 'MISSING_SECRETS') {
    const missing = err.details?.missing;
    if (Array.isArray(missing) && missing.length > 0 && missing.every((n) => typeof n === 'string'))
      return `put ${missing.length === 1 ? 'it' : 'each'} in the workspace vault with ${missing.map((n) => `\`agenthost secrets set ${n}\``).join(', ')} (value from stdin or a prompt)`;
  }
  return undefined;
}

export function exitCodeOf(status: number): number {
  if (status === 400 || status === 405 || status === 413 || status === 415 || status === 422)
    return EXIT.usage;
  if (status === 401 || status === 403) return EXIT.auth;
  if (status === 402) return EXIT.credits;
  if (status === 404) return EXIT.notFound;
  if (status === 409) return EXIT.conflict;
  if (status === 429) return EXIT.rateLimited;
  return EXIT.server;
}

/**
 * The line to print and the exit code, for any error a command threw. Its controls are shown
 * escaped (terminal-text.ts): the platform's messages carry names and values anyone may have set.
 * Only the platform's settings errors keep their newlines (a bad variable a line, the CLI's own).
 */
export function describeError(
  err: unknown,
  context: { url?: string; signInHint?: string },
): { line: string; exitCode: number } {
  const { line, exitCode } = failure(err, context);
  const own = err instanceof ConfigError || err instanceof VaultConfigurationError;
  return { line: own ? escapeControlsKeepingLayout(line) : escapeControls(line), exitCode };
}

function failure(
  err: unknown,
  context: { url?: string; signInHint?: string },
): { line: string; exitCode: number } {
  if (err instanceof AgentHostError) {
    const fields = (err.details?.fields ?? []).map((f) => `${f.field}: ${f.message}`);
    const fieldText =
      fields.length && !fields.every((f) => err.message.includes(f)) ? ` (${fields.join('; ')})` : '';
    let hint = refusalHint(err) ?? HINTS[err.code];
    if (err.code === 'UNAUTHORIZED') hint = context.signInHint ?? 'sign in with `agenthost login`';
    if (err.code === 'RATE_LIMITED' && err.suggestedWaitTime !== undefined)
      hint = `retry in ${err.suggestedWaitTime} s`;
    return {
      line: `${err.code}: ${err.message}${fieldText}${hint ? ` (fix: ${hint})` : ''}`,
      exitCode: exitCodeOf(err.status),
    };
  }
  // Operator commands that use the store directly (accounts create) fail with the platform's own errors.
  if (err instanceof PlatformError)
    return { line: `${err.code}: ${err.message}`, exitCode: exitCodeOf(err.status) };
  // The platform's settings (start, accounts create, run) are the user's to fix.
  if (err instanceof ConfigError || err instanceof VaultConfigurationError)
    return { line: `INVALID_CONFIG: ${err.message}`, exitCode: EXIT.usage };
  if (err instanceof CliError)
    return {
      line: `${err.code}: ${err.message}${err.hint ? ` (fix: ${err.hint})` : ''}`,
      exitCode: err.exitCode,
    };
  const unreachable = unreachableReason(err);
  if (unreachable)
    return {
      line: `UNREACHABLE: cannot reach agenthost at ${context.url ?? 'its URL'}: ${unreachable} (fix: start it with \`agenthost start\`, or point the CLI at it with --url, AGENTHOST_URL or \`agenthost login --url\`)`,
      exitCode: EXIT.server,
    };
  return {
    line: `INTERNAL_ERROR: ${err instanceof Error ? err.message : String(err)}`,
    exitCode: EXIT.server,
  };
}

/** fetch fails with a TypeError whose cause is the socket's error (ECONNREFUSED, ENOTFOUND …). */
function unreachableReason(err: unknown): string | undefined {
  if (!(err instanceof TypeError) || err.message !== 'fetch failed') return undefined;
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code ?? (cause as { errors?: { code?: string }[] } | undefined)?.errors?.[0]?.code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND') return 'no such host';
  return cause?.message || code || 'the request failed';
}

/**
 * commander's usage errors repeat what was typed: every excess argument (`secrets set NAME VALUE`,
 * `login ahk_…`) and an unknown `--option=value`. Those can be a secret typed where it does not
 * belong, so the values are left out of the line (the shell history is the user's; logs of CI
 * runs, which keep stderr, are not).
 */
export function withoutTypedValues(text: string): string {
  return text
    .replace(
      /^(error: too many arguments.*? but got \d+): .*\.$/m,
      '$1 (not repeated here, in case one is a secret).',
    )
    .replace(/^(error: unknown option '-{1,2}[^=']*)=[^']*'/m, "$1=…'");
}

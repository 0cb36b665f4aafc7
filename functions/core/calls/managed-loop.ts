import type { CoreDeps } from '../../ports/core-deps.ts';
import {
  LlmAbortedError,
  LlmError,
  LlmNotConfiguredError,
  type LlmTool,
  type LlmToolLoopResult,
} from '../../ports/llm-gateway.ts';
import { type ExecResult, SandboxPathError, type SandboxSession } from '../../ports/sandbox.ts';
import { PlatformError } from '../../shared/errors.ts';
import { redactSecrets, redactSecretsInJson } from '../../shared/redact-secrets.ts';
import { TIER_LIMITS } from '../accounts/tiers.ts';
import type { AgentVersion } from '../agents/agent-record.ts';
import {
  type CustomTool,
  compileInputValidator,
  DEFAULT_MAX_TURNS,
  MAX_TURNS_LIMIT,
  type Warning,
} from '../agents/manifest.ts';
import { fillCommand } from '../agents/placeholders.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import type { CallFile } from './call-input.ts';
import {
  type CallOptions,
  chooseModel,
  chooseProvider,
  renderTemplate,
  skillTexts,
  tokenUsage,
} from './direct-llm.ts';
import { openRunSession, type RunExtras } from './sandbox-run.ts';

export interface ManagedLoopResult {
  data: Record<string, unknown>;
  warnings: Warning[];
  provider: string;
  model: string;
  usage: { input_tokens: number; output_tokens: number; total_tokens: number };
  /** Summed run time of the commands the tools executed in the sandbox. */
  computeMs: number;
  /** One line per tool call (redacted, shortened) and a summary, for the agent's owners. */
  logs: { level: 'info' | 'error'; message: string }[];
}

/** The tool whose call ends the loop with its arguments as the result. */
export const SUBMIT_TOOL = 'submit_result';
/** Characters of a command's stdout the model sees (the head); stderr: the tail. */
const MAX_STDOUT_CHARS = 16_000;
const MAX_STDERR_CHARS = 4_000;
/** Characters of a file read_file returns; write_file's content limit. */
const MAX_READ_CHARS = 64_000;
const MAX_WRITE_BYTES = 1024 * 1024;
/** Paths list_files returns. */
const MAX_LISTED = 500;
/** Tool-call log lines kept per run (the rest are counted in the summary line). */
const MAX_TOOL_LOG_LINES = 100;

/**
 * The managed_loop engine: an LLM tool-use loop (LlmGateway.runToolLoop) whose tools run in one
 * sandbox session for the whole call: the agent's bundle unpacked, the call's files under input/,
 * the declared secrets only, no network. Built-in tools bash, read_file, write_file, list_files and
 * submit_result, plus the manifest's custom_tools (arguments validated against input_schema, then
 * shell-quoted into the command's placeholders). Strict orchestration mode drops bash.
 *
 * Outcomes: the arguments of submit_result are `data` (checked against output_schema: a mismatch is
 * 502 LLM_ERROR, retryable, as in direct_llm, since the model produced it); all loop.max_turns turns
 * used without a submission is 422 UNPROCESSABLE; the model ending without a tool call and without
 * submitting is 502 LLM_ERROR; the run's time limit (the call's deadline, capped by the tier's
 * sandbox limit like the code runtime) is 504 TIMEOUT. Errors carry computeMs and logs.
 */
export async function runManagedLoop(
  deps: CoreDeps,
  auth: AuthContext,
  agent: AgentVersion,
  input: Record<string, unknown>,
  files: CallFile[],
  metadata: Record<string, unknown> | undefined,
  options: CallOptions,
  deadlineMs: number,
  requestId: string,
  signal: AbortSignal,
  extras?: RunExtras,
): Promise<ManagedLoopResult> {
  const m = agent.manifest;
  const runToolLoop = deps.llm.runToolLoop?.bind(deps.llm);
  if (!runToolLoop) {
    throw new PlatformError('INTERNAL_ERROR', 'This platform’s LLM gateway cannot run tool-use loops');
  }
  const provider = chooseProvider(deps, agent, options.provider);
  const model = chooseModel(deps, agent, provider, options.model);
  const maxTurns = Math.min(Math.max(1, m.loop?.max_turns ?? DEFAULT_MAX_TURNS), MAX_TURNS_LIMIT);
  const { session, secrets, runDeadline, placed } = await openRunSession(deps, auth, agent, {
    files,
    requestId,
    deadlineMs,
    extras,
  });
  const runSignal = AbortSignal.any([signal, AbortSignal.timeout(Math.max(0, runDeadline - Date.now()))]);
  const state: LoopState = {
    session,
    secrets,
    runDeadline,
    signal: runSignal,
    computeMs: 0,
    logs: [],
    omittedLogs: 0,
    submitted: undefined,
    dependencies: m.manifest?.dependencies ?? [],
    callDependency: extras?.callDependency,
  };
  const fail = (err: PlatformError, summary: string) =>
    Object.assign(err, {
      computeMs: state.computeMs,
      logs: [...finishedLogs(state), { level: 'error' as const, message: summary }],
    });
  try {
    // Rendered inside the try: a missing template variable (400) still closes the session.
    const variables =
      files.length > 0
        ? {
            ...input,
            files: placed.map((p) => ({
              path: p.path,
              original_name: p.file.original_name,
              content_type: p.file.content_type,
              size_bytes: p.file.size_bytes,
            })),
            ...(metadata ? { metadata } : {}),
          }
        : input;
    const prompt = m.prompt_template
      ? renderTemplate(m.prompt_template, variables)
      : JSON.stringify(variables);
    // Strict mode: the agent's own (with dependencies), or forced by a strict parent.
    const strict =
      extras?.strict === true ||
      ((m.manifest?.dependencies.length ?? 0) > 0 && m.manifest?.orchestration_mode === 'strict');
    // In strict mode an orchestrator must call at least one dependency before it submits.
    state.requireSubCall =
      strict && (m.manifest?.dependencies.length ?? 0) > 0 ? extras?.subCalls : undefined;
    const outputSchema = m.output_schema as Record<string, unknown> | undefined;
    const tools = [
      ...builtInTools(state, outputSchema).filter((t) => !(strict && t.name === 'bash')),
      ...m.custom_tools.map((t) => customTool(state, t)),
    ];
    const skillWarnings: Warning[] = [];
    const skills = await skillTexts(deps, agent, options, skillWarnings);
    const system = [
      systemText(agent, session.workDir, maxTurns, placed.length > 0, outputSchema, strict),
      ...skills,
    ].join('\n\n');
    let loop: LlmToolLoopResult;
    try {
      loop = await runToolLoop({
        provider,
        model,
        system,
        prompt,
        tools,
        maxTurns,
        submitTool: SUBMIT_TOOL,
        signal: runSignal,
      });
    } catch (err) {
      if (err instanceof LlmAbortedError || runSignal.aborted) {
        throw fail(
          new PlatformError(
            'TIMEOUT',
            signal.aborted
              ? 'The call exceeded its deadline'
              : `The agent’s loop exceeded its time limit (${TIER_LIMITS[auth.tier].sandboxMaxTimeoutSeconds} s for sandboxed runs on this tier, or the call’s deadline)`,
          ),
          'loop stopped at the deadline',
        );
      }
      if (err instanceof LlmNotConfiguredError)
        throw fail(new PlatformError('LLM_ERROR', err.message), 'provider not configured');
      if (err instanceof LlmError) {
        throw fail(
          new PlatformError('LLM_ERROR', `The ${provider} provider failed: ${err.message}`, {
            provider,
            upstream_status: err.status,
          }),
          `provider error: ${redactSecrets(err.message, secrets)}`,
        );
      }
      throw err;
    }
    const summary = `loop ended (${loop.stoppedBy}) after ${loop.turns} turn${loop.turns === 1 ? '' : 's'}, ${state.computeMs} ms of commands`;
    if (loop.stoppedBy === 'max_turns') {
      throw fail(
        new PlatformError(
          'UNPROCESSABLE',
          `The agent used all ${maxTurns} turns (loop.max_turns) without submitting a result`,
          { max_turns: maxTurns },
        ),
        summary,
      );
    }
    const submitted = state.submitted;
    if (loop.stoppedBy !== 'submit' || submitted === undefined) {
      throw fail(
        new PlatformError('LLM_ERROR', 'The model ended the loop without calling submit_result', {
          provider,
        }),
        summary,
      );
    }
    if (outputSchema) {
      const validate = compileInputValidator(outputSchema);
      if (!validate(submitted)) {
        const why = (validate.errors ?? [])
          .map((e) => `${e.instancePath || '/'} ${e.message}`)
          .slice(0, 3)
          .join('; ');
        throw fail(
          new PlatformError(
            'LLM_ERROR',
            `The result the model submitted does not match the agent's output_schema (${why})`,
            { provider },
          ),
          summary,
        );
      }
    }
    const warnings: Warning[] = [...skillWarnings];
    return {
      // The model saw redacted tool output, but it can rebuild a value from pieces (a reversed or
      // split print): the result is redacted too, in every encoded form, before anyone sees it.
      data: redactSecretsInJson(submitted, state.secrets) as Record<string, unknown>,
      warnings,
      provider,
      model,
      usage: tokenUsage(loop.usage),
      computeMs: state.computeMs,
      logs: [...finishedLogs(state), { level: 'info', message: summary }],
    };
  } finally {
    await session.close();
  }
}

interface LoopState {
  session: SandboxSession;
  secrets: Record<string, string>;
  runDeadline: number;
  signal: AbortSignal;
  computeMs: number;
  logs: { level: 'info' | 'error'; message: string }[];
  omittedLogs: number;
  /** The last submit_result's arguments. */
  submitted: Record<string, unknown> | undefined;
  /** Strict orchestration: submit_result is refused until a dependency has been called. */
  requireSubCall?: (() => Promise<number>) | undefined;
  /** The orchestrator's dependencies, and the platform-side call their matching custom tools make. */
  dependencies: { id: string; version: string }[];
  callDependency?: RunExtras['callDependency'];
}

function finishedLogs(state: LoopState): LoopState['logs'] {
  return state.omittedLogs > 0
    ? [...state.logs, { level: 'info', message: `${state.omittedLogs} more tool calls not logged` }]
    : state.logs;
}

function log(state: LoopState, level: 'info' | 'error', message: string): void {
  if (state.logs.length >= MAX_TOOL_LOG_LINES) {
    state.omittedLogs++;
    return;
  }
  state.logs.push({ level, message: shorten(redactSecrets(message, state.secrets), 500) });
}

function shorten(text: string, max: number): string {
  const one = text.replace(/\s+/g, ' ');
  return one.length > max ? `${one.slice(0, max)}…` : one;
}

/** Runs a command in the session, counting its time; the result as the model sees it. */
async function execForModel(state: LoopState, command: string, label: string): Promise<string> {
  const remaining = state.runDeadline - Date.now();
  if (remaining <= 0 || state.signal.aborted) throw new Error('The run’s time limit has passed');
  let result: ExecResult;
  try {
    result = await state.session.exec(command, { timeoutMs: remaining, signal: state.signal });
  } catch (err) {
    log(state, 'error', `${label} → could not run: ${(err as Error).message}`);
    throw new Error('The command could not be run in the sandbox');
  }
  state.computeMs += result.durationMs;
  const ended = result.timedOut
    ? 'stopped at the time limit'
    : result.signal
      ? `killed by ${result.signal}`
      : `exit code ${result.exitCode}`;
  log(state, result.exitCode === 0 ? 'info' : 'error', `${label} → ${ended} in ${result.durationMs} ms`);
  let stdout = redactSecrets(result.stdout, state.secrets);
  let cut = result.stdoutTruncated;
  if (stdout.length > MAX_STDOUT_CHARS) {
    stdout = stdout.slice(0, MAX_STDOUT_CHARS);
    cut = true;
  }
  let stderr = redactSecrets(result.stderrTail, state.secrets);
  if (stderr.length > MAX_STDERR_CHARS) stderr = `…${stderr.slice(-MAX_STDERR_CHARS)}`;
  const parts = [ended];
  if (stdout) parts.push(`stdout:\n${stdout}${cut ? '\n[stdout cut at the output limit]' : ''}`);
  if (stderr.trim()) parts.push(`stderr:\n${stderr}`);
  return parts.join('\n');
}

/** A session file operation's failure, in words safe for the model (no host paths). */
function fileError(err: unknown, path: string, verb: string): Error {
  const e = err as NodeJS.ErrnoException;
  if (err instanceof SandboxPathError) return new Error(err.message);
  const why =
    e?.code === 'ENOENT'
      ? 'it does not exist'
      : e?.code === 'EISDIR'
        ? 'it is a directory'
        : e?.code === 'EACCES' || e?.code === 'EPERM'
          ? 'permission denied'
          : e?.code
            ? e.code
            : 'an unexpected error';
  return new Error(`Could not ${verb} ${JSON.stringify(path)}: ${why}`);
}

function record(args: unknown): Record<string, unknown> {
  return args !== null && typeof args === 'object' && !Array.isArray(args)
    ? (args as Record<string, unknown>)
    : {};
}

function stringArg(args: unknown, name: string, required: boolean): string | undefined {
  const v = record(args)[name];
  if (v === undefined && !required) return undefined;
  if (typeof v !== 'string') throw new Error(`The argument ${name} must be a string`);
  return v;
}

function builtInTools(state: LoopState, outputSchema: Record<string, unknown> | undefined): LlmTool[] {
  const { session } = state;
  const submitSchema =
    outputSchema && outputSchema.type === 'object'
      ? outputSchema
      : { type: 'object', description: 'The final result: a JSON object', additionalProperties: true };
  return [
    {
      name: 'bash',
      description:
        'Runs a shell command (/bin/sh -c) in the working directory and returns its exit code, stdout and the tail of stderr. There is no network.',
      inputSchema: {
        type: 'object',
        properties: { command: { type: 'string', description: 'The command line' } },
        required: ['command'],
      },
      execute: async (args) => {
        const command = stringArg(args, 'command', true)!;
        return execForModel(state, command, `bash ${JSON.stringify(shorten(command, 200))}`);
      },
    },
    {
      name: 'read_file',
      description: 'Reads a text file; the path is relative to the working directory.',
      inputSchema: {
        type: 'object',
        properties: { path: { type: 'string' } },
        required: ['path'],
      },
      execute: async (args) => {
        const path = stringArg(args, 'path', true)!;
        let data: Buffer;
        try {
          data = await session.readFile(path);
        } catch (err) {
          log(state, 'info', `read_file ${JSON.stringify(path)} → refused`);
          throw fileError(err, path, 'read');
        }
        log(state, 'info', `read_file ${JSON.stringify(path)} → ${data.length} bytes`);
        const text = redactSecrets(data.toString('utf8'), state.secrets);
        return text.length > MAX_READ_CHARS
          ? `${text.slice(0, MAX_READ_CHARS)}\n[cut: the file has ${data.length} bytes]`
          : text;
      },
    },
    {
      name: 'write_file',
      description:
        'Writes a text file (creating directories, replacing an existing file); the path is relative to the working directory.',
      inputSchema: {
        type: 'object',
        properties: { path: { type: 'string' }, content: { type: 'string' } },
        required: ['path', 'content'],
      },
      execute: async (args) => {
        const path = stringArg(args, 'path', true)!;
        const content = stringArg(args, 'content', true)!;
        const bytes = Buffer.byteLength(content);
        if (bytes > MAX_WRITE_BYTES) throw new Error(`The content is over ${MAX_WRITE_BYTES} bytes`);
        try {
          await session.writeFile(path, content);
        } catch (err) {
          log(state, 'info', `write_file ${JSON.stringify(path)} → refused`);
          throw fileError(err, path, 'write');
        }
        log(state, 'info', `write_file ${JSON.stringify(path)} → ${bytes} bytes`);
        return `Wrote ${bytes} bytes to ${path}`;
      },
    },
    {
      name: 'list_files',
      description:
        'Lists the regular files under a directory (default: the whole working directory), as paths relative to the working directory.',
      inputSchema: {
        type: 'object',
        properties: { path: { type: 'string', description: 'A directory; omit for the working directory' } },
      },
      execute: async (args) => {
        const path = stringArg(args, 'path', false);
        let found: string[];
        try {
          found = await session.listFiles(path || undefined);
        } catch (err) {
          log(state, 'info', `list_files ${JSON.stringify(path ?? '')} → refused`);
          throw fileError(err, path ?? '', 'list');
        }
        log(state, 'info', `list_files ${JSON.stringify(path ?? '')} → ${found.length} files`);
        const shown = found.slice(0, MAX_LISTED).join('\n');
        return found.length === 0
          ? '(no files)'
          : found.length > MAX_LISTED
            ? `${shown}\n[${found.length - MAX_LISTED} more not shown]`
            : shown;
      },
    },
    {
      name: SUBMIT_TOOL,
      description:
        'Submits the final result (a JSON object) and ends the task. Call it exactly once, when you are done.',
      inputSchema: submitSchema,
      execute: async (args) => {
        if (args === null || typeof args !== 'object' || Array.isArray(args)) {
          throw new Error('The result must be a JSON object');
        }
        if (state.requireSubCall && (await state.requireSubCall()) === 0) {
          throw new Error('Strict orchestration mode: call at least one dependency before submit_result');
        }
        state.submitted = args as Record<string, unknown>;
        log(state, 'info', `submit_result → ${JSON.stringify(args).length} characters`);
        return 'Result received.';
      },
    },
  ];
}

function customTool(state: LoopState, t: CustomTool): LlmTool {
  const schema = t.input_schema as Record<string, unknown> | undefined;
  return {
    name: t.name,
    description: t.description,
    inputSchema: schema ?? { type: 'object', properties: {} },
    execute: async (args) => {
      if (schema) {
        const validate = compileInputValidator(schema);
        if (!validate(args)) {
          const why = (validate.errors ?? [])
            .map((e) => {
              const missing =
                e.keyword === 'required'
                  ? `/${(e.params as { missingProperty: string }).missingProperty}`
                  : '';
              return `${e.instancePath}${missing || ''} ${e.message ?? 'is invalid'}`.trim();
            })
            .slice(0, 5)
            .join('; ');
          log(state, 'info', `${t.name} → invalid arguments (${why})`);
          throw new Error(`Invalid arguments for ${t.name}: ${why}`);
        }
      }
      // A dependency's matching custom tool is the call of that dependency, made by the platform
      // with the run's service key: no network or key is needed inside the sandbox for it.
      const dependency = matchingDependency(t.command, state.dependencies);
      if (dependency && state.callDependency) {
        log(state, 'info', `${t.name} → calls ${dependency.id}@${dependency.version}`);
        return redactSecrets(await state.callDependency(dependency, record(args)), state.secrets);
      }
      const command = fillCommand(t.command, record(args));
      return execForModel(state, command, `${t.name} ${shorten(JSON.stringify(args ?? {}), 200)}`);
    },
  };
}

/** The dependency a custom tool's command names as a whole `org/agent` word (the manifest's matching rule). */
function matchingDependency(
  command: string,
  dependencies: { id: string; version: string }[],
): { id: string; version: string } | undefined {
  return dependencies.find((d) => {
    const escaped = d.id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    return new RegExp(`(^|[^a-z0-9-])${escaped}($|[^a-z0-9-])`).test(command);
  });
}

function systemText(
  agent: AgentVersion,
  workDir: string,
  maxTurns: number,
  hasFiles: boolean,
  outputSchema: Record<string, unknown> | undefined,
  strict: boolean,
): string {
  const lines = [
    agent.manifest.description,
    '',
    `You work in a sandboxed Linux working directory (${workDir}) that holds the agent's files${hasFiles ? ' and, under input/, the files the caller sent' : ''}. There is no network. Use the tools to do the task${strict ? '' : '; bash runs shell commands'}. Tool paths are relative to the working directory.`,
    `When you are done, call ${SUBMIT_TOOL} once with the final result as its arguments (a JSON object): only that is returned to the caller. You have at most ${maxTurns} turns.`,
  ];
  if (outputSchema) {
    lines.push(`The result must match this JSON Schema: ${JSON.stringify(outputSchema)}`);
  }
  return lines.join('\n');
}

/**
 * How a managed loop ends, as the caller sees it: the submitted result (checked against
 * output_schema, redacted in every encoded form) or the error it comes to (all turns used, no
 * submission, the time limit, the provider's failure), each carrying the run's compute time and
 * tool-call log for the call record.
 */

import type { Tier } from '../../ports/config.ts';
import {
  LlmAbortedError,
  LlmError,
  LlmNotConfiguredError,
  type LlmToolLoopResult,
} from '../../ports/llm-gateway.ts';
import { PlatformError } from '../../shared/errors.ts';
import { redactSecrets, redactSecretsInJson } from '../../shared/redact-secrets.ts';
import { TIER_LIMITS } from '../accounts/tiers.ts';
import type { Warning } from '../agents/manifest.ts';
import { userSchemaValidator } from '../agents/user-schema-validator.ts';
import { type CallLogLine, measuredLine } from './call-log-lines.ts';
import { type EngineResult, tokenUsage } from './direct-llm.ts';
import { providerFailure } from './llm-failure.ts';
import { finishedLogs, type LoopState } from './loop-state.ts';

export interface ManagedLoopResult extends EngineResult {
  /** Summed run time of the commands the tools executed in the sandbox. */
  computeMs: number;
  /** One line per tool call (redacted, shortened) and a summary, for the agent's owners. */
  logs: CallLogLine[];
}

/** `err` with the run's compute time and its log, `summary` (a measured line, or one with its outline) last. */
function fail(state: LoopState, err: PlatformError, summary: string | CallLogLine) {
  return Object.assign(err, {
    computeMs: state.computeMs,
    logs: [...finishedLogs(state), typeof summary === 'string' ? measuredLine('error', summary) : summary],
  });
}

/**
 * What a loop that threw becomes: 504 TIMEOUT at the deadline (the call's, or the tier's sandbox
 * limit), 502 LLM_ERROR for the provider's failure; anything else is returned as it is.
 */
export function loopFailure(
  state: LoopState,
  err: unknown,
  run: { callSignal: AbortSignal; tier: Tier },
): unknown {
  if (err instanceof LlmAbortedError || state.signal.aborted) {
    return fail(
      state,
      new PlatformError(
        'TIMEOUT',
        run.callSignal.aborted
          ? 'The call exceeded its deadline'
          : `The agent’s loop exceeded its time limit (${TIER_LIMITS[run.tier].sandboxMaxTimeoutSeconds} s for sandboxed runs on this tier, or the call’s deadline)`,
      ),
      'loop stopped at the deadline',
    );
  }
  if (err instanceof LlmNotConfiguredError)
    return fail(state, new PlatformError('LLM_ERROR', err.message), 'provider not configured');
  if (err instanceof LlmError) {
    const { error, log } = providerFailure(err, (text) => redactSecrets(text, state.secrets));
    return fail(state, error, log);
  }
  return err;
}

/**
 * The result of a loop that ended: the arguments of submit_result as `data`; all turns used is
 * 422 UNPROCESSABLE; ending without submitting, or a result that does not match output_schema, is
 * 502 LLM_ERROR (the model produced it).
 */
export async function loopResult(
  state: LoopState,
  loop: LlmToolLoopResult,
  run: {
    provider: string;
    model: string;
    maxTurns: number;
    outputSchema: Record<string, unknown> | undefined;
    warnings: Warning[];
  },
): Promise<ManagedLoopResult> {
  const { provider, maxTurns, outputSchema } = run;
  const summary = `loop ended (${loop.stoppedBy}) after ${loop.turns} turn${loop.turns === 1 ? '' : 's'}, ${state.computeMs} ms of commands`;
  if (loop.stoppedBy === 'max_turns') {
    throw fail(
      state,
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
      state,
      new PlatformError('LLM_ERROR', 'The model ended the loop without calling submit_result', {
        provider,
      }),
      summary,
    );
  }
  if (outputSchema) {
    const validate = await userSchemaValidator(outputSchema);
    if (!validate(submitted)) {
      const why = (validate.errors ?? [])
        .map((e) => `${e.instancePath || '/'} ${e.message}`)
        .slice(0, 3)
        .join('; ');
      throw fail(
        state,
        new PlatformError(
          'LLM_ERROR',
          `The result the model submitted does not match the agent's output_schema (${why})`,
          { provider },
        ),
        summary,
      );
    }
  }
  return {
    // The model saw redacted tool output, but it can rebuild a value from pieces (a reversed or
    // split print): the result is redacted too, in every encoded form, before anyone sees it.
    data: redactSecretsInJson(submitted, state.secrets) as Record<string, unknown>,
    warnings: [...run.warnings],
    provider,
    model: run.model,
    usage: tokenUsage(loop.usage),
    computeMs: state.computeMs,
    logs: [...finishedLogs(state), measuredLine('info', summary)],
  };
}

import type { CoreDeps } from '../../ports/core-deps.ts';
import type { RunSteps } from '../../ports/run-steps.ts';
import type { AgentVersion } from '../agents/agent-record.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { chargeCall } from './call-billing.ts';
import type { CallContext, CallRequest } from './call-context.ts';
import { isOrchestrator } from './orchestration.ts';
import { type Admission, admitCall, resumedAdmission } from './quotas.ts';

/*
 * The steps of a call that is a run (ports/run-steps.ts), before its engine's: what a replay of
 * the call (edge/run-resume.ts) must find as the first process left it rather than do again. Its
 * input, with the call's own headers, to call again with; its admission, whose slot it holds
 * again under the same lease, without counting the call twice; its charge, not taken twice.
 */

/** The step that holds a run's input; a call with files records none, and is not carried on. */
export const CALL_INPUT_STEP = 'input';

/**
 * Whether a run of `agent` can be made again from its steps: not a code tool that orchestrates
 * (its one command calls its dependencies itself, over HTTP: made again, it would call them again
 * and its caller pay twice). A managed loop's sub-agent calls are its steps.
 */
export function carriedOnWhole(agent: AgentVersion): boolean {
  return !(isOrchestrator(agent) && agent.manifest.execution_engine !== 'managed_loop');
}

/** The headers a call reads (X-Platform-*, traceparent), as a replay sends them again. */
const CALL_HEADERS = [
  'x-platform-provider',
  'x-platform-model',
  'x-platform-skills',
  'x-platform-skills-only',
  'x-platform-no-skills',
  'x-platform-max-hops',
  'x-platform-tenant',
];

export interface RecordedCallInput {
  input: Record<string, unknown>;
  headers: Record<string, string>;
}

/** Records the call's input and headers as the run's input step. */
export async function recordCallInput(
  steps: RunSteps,
  request: CallRequest,
  input: Record<string, unknown>,
): Promise<void> {
  await steps.step<RecordedCallInput>(CALL_INPUT_STEP, async () => {
    const headers: Record<string, string> = {};
    for (const name of CALL_HEADERS) {
      const value = request.headers(name);
      if (value !== undefined) headers[name] = value;
    }
    return { input, headers };
  });
}

/**
 * The run's recorded input, or undefined when it has none (a call with files, a code tool that
 * orchestrates): read, never written here (a step that throws records nothing).
 */
export function recordedInput(steps: RunSteps): Promise<RecordedCallInput | undefined> {
  return steps
    .step<RecordedCallInput>(CALL_INPUT_STEP, async () => {
      throw new Error('no input recorded');
    })
    .catch(() => undefined);
}

/**
 * chargeCall as the run's step `charge`. A first process that died after its charge was written
 * and before its step was leaves the charge's guard: the replay's charge finds it and takes
 * nothing, and the call is billed what that one took.
 */
export function recordedCharge(deps: CoreDeps, steps: RunSteps, call: CallContext): Promise<number> {
  return steps.step('charge', async () => {
    const billed = await chargeCall(deps, call);
    return billed === 0 && call.price > 0 ? call.price : billed;
  });
}

/**
 * admitCall as the run's step `admission`: a replay holds the slot its first process took. A
 * process that died between its admission and this step's record leaves a second slot taken and the
 * call counted twice, until that lease expires.
 */
export async function recordedAdmission(
  deps: CoreDeps,
  steps: RunSteps,
  auth: AuthContext,
  deadlineMs: number,
  kind: 'llm' | 'sandbox' | 'paid',
): Promise<Admission> {
  let admitted: Admission | undefined;
  const lease = await steps.step('admission', async () => {
    admitted = await admitCall(deps, auth, deadlineMs, kind);
    return admitted.lease;
  });
  return admitted ?? resumedAdmission(deps, auth, lease);
}

import { randomBytes } from 'node:crypto';
import type { CoreDeps } from '../../ports/core-deps.ts';
import type { RunSteps } from '../../ports/run-steps.ts';
import { accountKeys } from '../accounts/account-keys.ts';
import { apiKeyEntity, apiKeyKeys } from '../api-keys/api-key-items.ts';
import { type AuthContext, authContextOf } from '../api-keys/api-keys.ts';
import type { CallRequest } from '../calls/call-context.ts';
import { recordedInput } from '../calls/recorded-call.ts';
import type { CallRunRecord } from './call-run-record.ts';

/*
 * The call a run is made again from, in a process other than the one that started it
 * (edge/run-resume.ts; docs/runs.md, "Carried on"): the same caller by the key that started it,
 * the same version and endpoint, the input and headers its first process recorded, the same
 * request id (its call record and charge are the first process's, which never wrote them) and the
 * same trace, within what is left of the same deadline. Its steps answer what that process
 * finished: its admission, its charge, its model requests and tool calls.
 */

/** Why a run cannot be made again: it is left to be read as interrupted (docs/runs.md). */
export type NotReplayable = 'no input recorded' | 'key deleted' | 'deadline passed';

export async function replayedCall(
  deps: CoreDeps,
  run: CallRunRecord,
  steps: RunSteps,
): Promise<{ auth: AuthContext; request: CallRequest } | NotReplayable> {
  const deadlineMs = Date.parse(run.deadline_at);
  if (deadlineMs <= deps.clock.now().getTime()) return 'deadline passed';
  const recorded = await recordedInput(steps);
  if (!recorded) return 'no input recorded';
  const keyItem = await deps.store.get(apiKeyKeys.ofAccount(run.account_id, run.key_id));
  const accountItem = keyItem && (await deps.store.get(accountKeys.account(run.account_id)));
  if (!keyItem || !accountItem) return 'key deleted';
  const auth = authContextOf(accountItem, run.key_id, apiKeyEntity.fromItem(keyItem).agent);
  const [org = '', agent = '', version = ''] = run.agent.split('/');
  const headers: Record<string, string> = {
    ...recorded.headers,
    // The run's deadline (epoch ms, platform clock), not a new one.
    'x-platform-deadline-ms': String(deadlineMs),
  };
  const request: CallRequest = {
    org,
    agent,
    version,
    endpoint: run.endpoint,
    body: Buffer.from(JSON.stringify(recorded.input)),
    contentType: 'application/json',
    headers: (name) => headers[name.toLowerCase()],
    requestId: run.request_id,
    ...(run.trace_id
      ? { traceParent: { traceId: run.trace_id, spanId: randomBytes(8).toString('hex') } }
      : {}),
  };
  return { auth, request };
}

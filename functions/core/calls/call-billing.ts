/**
 * What a call is billed (docs/billing.md): the agent's price for this caller, the charge taken
 * before the call runs (402 and nothing runs without the credits), and the refund of a charge
 * when the platform's side failed.
 */
import type { CoreDeps } from '../../ports/core-deps.ts';
import type { AgentVersion } from '../agents/agent-record.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { charge, refund } from '../billing/ledger.ts';
import { memberKeys } from '../workspaces/member-record.ts';
import type { CallContext } from './call-context.ts';
import { type CallReport, callIdentity } from './call-report.ts';
import { spendDownstreamBudget } from './service-keys.ts';

/** Failures on the platform's side, refunded (docs/billing.md). */
const REFUNDED_ON = ['INTERNAL_ERROR', 'LLM_ERROR', 'TIMEOUT', 'UNPROCESSABLE'];

/**
 * What the caller pays per call: the agent's price_credits, except for members of the agent's own
 * workspace (authors and their teams run their agents free).
 */
export async function priceFor(
  deps: CoreDeps,
  auth: AuthContext,
  agent: AgentVersion,
  /** The caller's membership when an earlier step of the call established it (not read again). */
  knownMember?: boolean,
): Promise<number> {
  const price = agent.manifest.price_credits ?? 0;
  if (price <= 0) return 0;
  const member =
    knownMember ??
    (await deps.store.get(memberKeys.member(agent.workspace_id, auth.accountId))) !== undefined;
  return member ? 0 : price;
}

/**
 * Charges a paid call before it runs (a sub-call first spends its orchestrator's downstream
 * budget). Returns the credits billed: the price, or 0 when nothing was charged.
 */
export async function chargeCall(deps: CoreDeps, call: CallContext): Promise<number> {
  if (call.price <= 0) return 0;
  const { auth, agent } = call;
  if (auth.service && auth.serviceKeyHash) {
    await spendDownstreamBudget(deps, auth.serviceKeyHash, call.price, auth.service.budget);
  }
  const charged = await charge(deps, {
    accountId: auth.accountId,
    amount: call.price,
    requestId: call.request.requestId,
    agent: `${agent.org}/${agent.name}/${agent.version}`,
    authorWorkspaceId: agent.workspace_id,
    deadlineMs: call.deadline.platformMs(),
    call: callIdentity(call),
  });
  return charged ? call.price : 0;
}

/**
 * A billed call that failed with `code` on the platform's side is not billed either way: refunded
 * now, or, if this write fails, left pending for reconciliation to refund (no record settles it).
 * Unless some of the agent's output reached the caller first (a streamed call's delta): then the
 * caller has the agent's work, and its charge stands however the call ended (else a caller that
 * hung up after the text, or chose a deadline that cut it, would get a paid answer free).
 */
export async function refundIfOwed(deps: CoreDeps, report: CallReport, code: string): Promise<void> {
  if (report.billed <= 0 || report.delivered || !REFUNDED_ON.includes(code)) return;
  report.billed = 0;
  const requestId = report.call.request.requestId;
  await refund(deps, requestId, code).catch((e) => {
    deps.logger.error('refund failed; reconciliation will retry', {
      request_id: requestId,
      error: String(e),
    });
  });
}

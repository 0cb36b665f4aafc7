/**
 * Which client method each operation of the OpenAPI document becomes: `client.<resource>.<method>`.
 * The rule names most of them; the map below names the rest as the SDK always has (its README, the
 * docs, the dashboard and applications call them), so regenerating never renames the public API.
 */

export interface MethodName {
  resource: string;
  method: string;
}

/** Operations the rule would name otherwise: their resource and method, as the SDK has them. */
export const NAMED: Record<string, string> = {
  getOpenApi: 'platform.openapi',
  listWorkspaceTasks: 'tasks.listInWorkspace',
  inviteMember: 'workspaces.invite',
  // The invited account's side: a resource of its own (/invitations), under the Workspaces tag.
  listInvitations: 'invitations.list',
  acceptInvitation: 'invitations.accept',
  declineInvitation: 'invitations.decline',
  listPublicAgents: 'public.list',
  publicAgentDetails: 'public.get',
  downloadPublicAgent: 'public.download',
  // The author's side of usage (/author-usage), under the Usage tag.
  authorUsageSummary: 'authorUsage.summary',
  authorUsageTimeseries: 'authorUsage.timeseries',
  authorUsageBreakdown: 'authorUsage.breakdown',
  authorUsageLogs: 'authorUsage.logs',
  sendScheduleTestAlert: 'schedules.testAlert',
  createCheckout: 'billing.checkout',
};

/**
 * Operations whose method is written by hand in sdk/src/client.ts, because one generated method
 * cannot express them: an agent call takes a typed ref, sends files as multipart and retries at
 * the agent's own default endpoint (sdk/src/call.ts).
 */
export const HAND_WRITTEN: Record<string, string> = {
  callAgent: 'agents.call',
};

/**
 * Operations whose JSON body may be left out (its method defaults it to `{}`): an empty object is a
 * whole request here (fork with the defaults, run with the schedule's own input, move to the
 * newest version). The document cannot say it: a body with no required field may still need one
 * of several (an invitation's account_id or email), and a PATCH of nothing changes nothing.
 */
export const OPTIONAL_BODY = new Set(['forkAgent', 'triggerSchedule', 'updateService']);

const words = (camel: string): string[] => camel.split(/(?=[A-Z])/).filter(Boolean);
const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);
const singular = (word: string) => word.replace(/s$/, '');

/** A tag as a resource: `API keys` → `apiKeys`, `Schedules` → `schedules`, `MCP` → `mcp`. */
export function resourceOfTag(tag: string): string {
  return tag
    .split(/\s+/)
    .map((w, i) => (i === 0 ? w.toLowerCase() : w.charAt(0).toUpperCase() + w.slice(1).toLowerCase()))
    .join('');
}

/**
 * The rule: the resource is the operation's tag; the method is the operationId without the words
 * naming the resource (`createTask` → `tasks.create`, `agentLogs` → `agents.logs`), and `list…` or
 * `get…` of something else is that thing (`listScheduleRuns` → `schedules.runs`, `getBalance` →
 * `billing.balance`).
 */
export function methodName(operationId: string, tag: string): MethodName {
  const named = NAMED[operationId] ?? HAND_WRITTEN[operationId];
  if (named) {
    const [resource = '', method = ''] = named.split('.');
    return { resource, method };
  }
  const resource = resourceOfTag(tag);
  const noun = words(resource).map((w) => singular(w.toLowerCase()));
  const parts = words(operationId);
  const at = parts.findIndex((_, i) =>
    noun.every((n, j) => singular(parts[i + j]?.toLowerCase() ?? '') === n),
  );
  const rest = at < 0 ? parts : [...parts.slice(0, at), ...parts.slice(at + noun.length)];
  const [verb = '', ...thing] = rest;
  const method = (verb === 'list' || verb === 'get') && thing.length > 0 ? thing.join('') : rest.join('');
  return { resource, method: lowerFirst(method) };
}

/**
 * The agent registry's fixture (test/api/agents.test.ts, agent-directory.test.ts,
 * agent-bundles.test.ts): a platform with an owner, a member of the owner's workspace and an
 * outsider (all Pro), `publish` as one of them, and the manifests of a prompt agent and a tool.
 */
import { createAccount } from '../../functions/core/accounts/account.ts';
import { joinWorkspace } from './membership.ts';
import { type ApiResponse, startTestPlatform, type TestPlatform } from './platform.ts';

export type Agent = Record<string, unknown> & {
  id: string;
  version: string;
  status: string;
  deprecated_at: string | null;
  sunset_at: string | null;
  bundle: { sha256: string; size_bytes: number; format: string } | null;
};

export const prompt = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: `the ${name} agent`,
  supported_providers: ['any'],
  prompt_template: 'Summarise {{text}}',
  input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  ...extra,
});

export const tool = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  type: 'tool',
  description: `the ${name} tool`,
  supported_providers: ['any'],
  runtime: { command: 'node index.js' },
  required_secrets: ['API_TOKEN'],
  ...extra,
});

export interface Registry {
  p: TestPlatform;
  owner: { key: string; id: string; ws: string; org: string };
  member: { key: string };
  outsider: { key: string };
  /** POST /agents (`query` appended, e.g. `?allow_no_secrets=true`), as the owner unless `key`. */
  publish: (
    body: unknown,
    key?: string,
    query?: string,
  ) => Promise<ApiResponse<Agent & { warnings?: { code: string; field?: string }[] }>>;
}

export async function startRegistry(): Promise<Registry> {
  // In memory: no test of the registry's needs a socket. Its 12 concurrent publishes
  // (agents.test.ts) then land in one turn, the race publish.ts's backoff is for.
  const p = await startTestPlatform({}, 'sqlite', {}, { inMemory: true });
  const o = await createAccount(p.deps, { org: 'reg-owner', tier: 'pro' });
  const m = await createAccount(p.deps, { org: 'reg-member', tier: 'pro' });
  const x = await createAccount(p.deps, { org: 'reg-outsider', tier: 'pro' });
  const owner = { key: o.api_key, id: o.account.id, ws: o.workspace_id, org: 'reg-owner' };
  await joinWorkspace(p.request, owner.ws, owner.key, { key: m.api_key, id: m.account.id });
  const publish: Registry['publish'] = (body, key = owner.key, query = '') =>
    p.request<Agent & { warnings?: { code: string; field?: string }[] }>('POST', `/agents${query}`, {
      key,
      body,
    });
  return { p, owner, member: { key: m.api_key }, outsider: { key: x.api_key }, publish };
}

/**
 * The usage API's fixture (test/api/usage.test.ts, author-usage.test.ts): a platform whose clock is
 * at NOW, accounts that author and call agents, and call records seeded at chosen times (the
 * caller side reads them; the author side reads those of the agents it owns).
 */
import assert from 'node:assert/strict';
import { type CallRecord, writeCallRecord } from '../../functions/core/usage/call-records.ts';
import { joinWorkspace } from './membership.ts';
import { type ApiResponse, type Backend, startTestPlatform, type TestPlatform } from './platform.ts';

export const NOW = '2026-06-15T12:00:00.000Z';

export type Stats = {
  calls: number;
  successes: number;
  errors: number;
  timeouts: number;
  errors_by_code: Record<string, number>;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  avg_duration_ms: number | null;
  p95_duration_ms: number | null;
};
export type Summary = {
  from: string;
  to: string;
  totals: Stats;
  quota: { tier: string; limit: number; used: number; remaining: number; reset: number; reset_at: string };
};
export type AuthorSummary = {
  from: string;
  to: string;
  workspaces: string[];
  callers: number;
  totals: Stats;
};
export type Timeseries = {
  from: string;
  to: string;
  granularity: string;
  buckets: (Stats & { start: string })[];
};
export type Breakdown = { group_by: string; groups: (Stats & { key: string })[] };
export type Tenants = { tenants: (Stats & { tenant: string })[] };
export type Logs = { from: string; to: string; logs: Record<string, unknown>[]; next_cursor: string | null };
export type Compute = {
  sandbox_calls: number;
  compute_ms: number;
  compute_hours: number;
  agents: { agent: string; sandbox_calls: number; compute_ms: number }[];
};

export type Account = { key: string; accountId: string; workspaceId: string };

export interface UsagePlatform {
  p: TestPlatform;
  /** Author: agents maker/summarize (personal workspace) and maker-team/translate. */
  maker: Account;
  /** Author of other/echo. */
  other: Account;
  /** Callers; pager has many calls, for paging. */
  alice: Account;
  bob: Account;
  pager: Account;
  teamWs: string;
  /** Every record seeded, in the order written. */
  seeded: CallRecord[];
  /** Writes one more call record (its request id the next in sequence), and adds it to `seeded`. */
  seed: (
    caller: Account,
    at: string,
    agent: { org: string; name: string; ws: string },
    more?: Partial<CallRecord> & { compute_ms?: number },
  ) => Promise<CallRecord>;
  get: <T = Record<string, unknown>>(path: string, who: Account) => Promise<ApiResponse<T>>;
  ok: <T>(path: string, who: Account) => Promise<T>;
}

export const byKey = (groups: { key: string; calls: number }[]) =>
  Object.fromEntries(groups.map((g) => [g.key, g.calls]));

export async function startUsagePlatform(backend: Backend): Promise<UsagePlatform> {
  const p = await startTestPlatform({}, backend, {}, { inMemory: true });
  const seeded: CallRecord[] = [];
  let n = 0;
  const seed = async (
    caller: Account,
    at: string,
    agent: { org: string; name: string; ws: string },
    more: Partial<CallRecord> & { compute_ms?: number } = {},
  ) => {
    n++;
    const status = more.status ?? 'success';
    const record: CallRecord = {
      request_id: `req_${String(n).padStart(4, '0')}`,
      at: new Date(at).toISOString(),
      caller_account_id: caller.accountId,
      caller_key_id: `key-of-${caller.accountId}`,
      tenant: null,
      agent_id: `${agent.org}-${agent.name}-id`,
      org: agent.org,
      agent: agent.name,
      version: 'v1',
      workspace_id: agent.ws,
      endpoint: 'run',
      status,
      error_code: null,
      http_status: status === 'success' ? 200 : status === 'timeout' ? 504 : 500,
      duration_ms: 100,
      provider: 'openai',
      model: 'gpt-4o',
      input_tokens: 0,
      output_tokens: 0,
      total_tokens: 0,
      ...more,
    };
    record.total_tokens = record.input_tokens + record.output_tokens;
    await writeCallRecord(p.deps, record);
    seeded.push(record);
    return record;
  };

  p.clock.set(NOW);
  const maker = await p.createAccount('maker');
  const other = await p.createAccount('other');
  const alice = await p.createAccount('alice');
  const bob = await p.createAccount('bob');
  const pager = await p.createAccount('pager');
  const team = await p.request<{ id: string }>('POST', '/workspaces', {
    key: maker.key,
    body: { name: 'Maker team', slug: 'maker-team' },
  });
  assert.equal(team.status, 201);
  const teamWs = team.body.id;
  // bob is a member (not an owner) of the team workspace.
  await joinWorkspace(p.request, teamWs, maker.key, { key: bob.key, id: bob.accountId });

  const summarize = { org: 'maker', name: 'summarize', ws: maker.workspaceId };
  const translate = { org: 'maker-team', name: 'translate', ws: teamWs };
  const echo = { org: 'other', name: 'echo', ws: other.workspaceId };

  // alice: 8 calls, 7 of them in the default range (the last 7 days).
  await seed(alice, '2026-06-15T10:15:00Z', summarize, {
    version: 'v2',
    tenant: 'acme',
    input_tokens: 100,
    output_tokens: 50,
    duration_ms: 200,
  });
  await seed(alice, '2026-06-15T10:45:00Z', summarize, {
    version: 'v2',
    tenant: 'acme',
    status: 'error',
    error_code: 'LLM_ERROR',
    http_status: 502,
    input_tokens: 10,
    duration_ms: 400,
  });
  await seed(alice, '2026-06-15T08:05:00Z', translate, {
    tenant: 'globex',
    provider: 'anthropic',
    model: 'claude-sonnet',
    input_tokens: 300,
    output_tokens: 100,
    duration_ms: 1000,
  });
  await seed(alice, '2026-06-14T09:00:00Z', summarize, {
    status: 'timeout',
    error_code: 'TIMEOUT',
    duration_ms: 300_000,
  });
  await seed(alice, '2026-06-12T23:59:59.999Z', echo, {
    provider: null,
    model: null,
    duration_ms: 50,
    compute_ms: 1200,
  });
  await seed(alice, '2026-06-10T00:00:00.000Z', summarize, {
    endpoint: 'summarize',
    tenant: 'acme',
    input_tokens: 20,
    output_tokens: 20,
    duration_ms: 100,
  });
  await seed(alice, '2026-06-01T12:00:00Z', summarize, {
    tenant: 'acme',
    input_tokens: 1,
    duration_ms: 10,
  });
  await seed(alice, '2026-06-15T11:59:59Z', translate, {
    tenant: 'globex',
    provider: null,
    model: null,
    input_tokens: 40,
    output_tokens: 10,
    duration_ms: 500,
    compute_ms: 3000,
  });
  // bob: 2 calls; maker calls its own agent once.
  await seed(bob, '2026-06-15T09:30:00Z', summarize, {
    version: 'v2',
    model: 'gpt-4o-mini',
    input_tokens: 5,
    output_tokens: 5,
    duration_ms: 30,
  });
  await seed(bob, '2026-06-13T15:00:00Z', translate, {
    tenant: 'bob-t',
    status: 'error',
    error_code: 'INVALID_INPUT',
    http_status: 400,
    duration_ms: 5,
  });
  await seed(maker, '2026-06-14T20:00:00Z', summarize, { version: 'v2', duration_ms: 70 });
  // pager: 23 calls, three of them at the same instant (the request id breaks the tie).
  for (let i = 0; i < 20; i++) {
    await seed(pager, new Date(Date.parse(NOW) - (i + 1) * 3_600_000).toISOString(), echo);
  }
  for (let i = 0; i < 3; i++) await seed(pager, '2026-06-14T00:00:00Z', translate);

  const get = <T = Record<string, unknown>>(path: string, who: Account) =>
    p.request<T>('GET', path, { key: who.key });
  const ok = async <T>(path: string, who: Account): Promise<T> => {
    const res = await get<T>(path, who);
    assert.equal(res.status, 200, `${path}: ${res.text.slice(0, 400)}`);
    return res.body;
  };
  return { p, maker, other, alice, bob, pager, teamWs, seeded, seed, get, ok };
}

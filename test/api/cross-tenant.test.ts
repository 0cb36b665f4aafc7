import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { packDirectory } from '../../functions/cli/pack.ts';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { resolveSecretsForRun } from '../../functions/core/secrets/secrets.ts';
import { type OperationId, type RouteDef, routeList } from '../../functions/platform/routes.ts';
import { joinWorkspace } from '../helpers/membership.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/**
 * Every workspace-scoped route (those with a workspaceRole in the route table), called with
 * another tenant's key against tenant A's ids, and with a plain member's key. A route added to the
 * table without a sample here fails the test, so the matrix keeps up with the API.
 */
interface Ids {
  ws: string;
  task: string;
  secret: string;
  account: string;
  agent: string;
  schedule: string;
  service: string;
  invitation: string;
}

interface Sample {
  query?: string;
  body?: unknown;
  rawBody?: Buffer;
  headers?: Record<string, string>;
}

let bundle: Buffer;

const toolManifest = {
  name: 'a-tool',
  type: 'tool',
  description: 'A’s tool',
  supported_providers: ['any'],
  runtime: { command: 'node index.js' },
  required_secrets: ['A_SECRET'],
  is_public: true,
  allow_local_download: true,
};

const samples: Record<string, (ids: Ids) => Sample> = {
  createTask: (ids) => ({ body: { title: 'planted', workspace_id: ids.ws } }),
  listTasks: (ids) => ({ query: `workspace_id=${ids.ws}` }),
  getTask: () => ({}),
  updateTask: () => ({ body: { title: 'changed' } }),
  completeTask: () => ({}),
  deleteTask: () => ({}),
  listWorkspaceTasks: () => ({}),
  listMembers: () => ({}),
  inviteMember: () => ({ body: { account_id: '00000000-0000-4000-8000-000000000001' } }),
  removeMember: () => ({}),
  listWorkspaceInvitations: () => ({}),
  revokeInvitation: () => ({}),
  listSecrets: () => ({}),
  putSecret: () => ({ body: { name: 'A_SECRET', value: 'overwritten' } }),
  deleteSecret: () => ({}),
  publishAgent: (ids) => ({ query: `workspace_id=${ids.ws}`, body: { ...toolManifest, name: 'planted' } }),
  getAgent: () => ({}),
  patchAgent: () => ({ body: { description: 'changed' } }),
  uploadBundle: () => ({ rawBody: bundle, headers: { 'content-type': 'application/gzip' } }),
  agentLogs: () => ({}),
  deleteCheck: () => ({}),
  deleteAgent: () => ({}),
  forkAgent: (ids) => ({ body: { workspace_id: ids.ws, new_name: 'forked-copy' } }),
  listSchedules: () => ({}),
  createSchedule: () => ({ body: { agent: 'tenant-alpha/a-tool', cron_expression: '0 9 * * 1' } }),
  getSchedule: () => ({}),
  updateSchedule: () => ({ body: { enabled: false } }),
  deleteSchedule: () => ({}),
  triggerSchedule: () => ({ body: { input_data: { planted: true } } }),
  listScheduleEvents: () => ({}),
  listScheduleRuns: () => ({ query: 'status=failed&fields=run_id,status' }),
  sendScheduleTestAlert: () => ({}),
  listServices: () => ({}),
  deployService: () => ({ body: { agent: 'tenant-alpha/a-tool', name: 'planted' } }),
  getService: () => ({}),
  patchService: () => ({ body: { alert_webhook_url: null } }),
  restartService: () => ({}),
  updateService: () => ({ body: {} }),
  deleteService: () => ({}),
  serviceLogs: () => ({ query: 'limit=10' }),
  authorUsageSummary: (ids) => ({ query: `workspace_id=${ids.ws}` }),
  authorUsageTimeseries: (ids) => ({ query: `workspace_id=${ids.ws}` }),
  authorUsageBreakdown: (ids) => ({ query: `workspace_id=${ids.ws}&group_by=caller` }),
  authorUsageLogs: (ids) => ({ query: `workspace_id=${ids.ws}` }),
};

function pathFor(route: RouteDef, ids: Ids): string {
  return route.path
    .replace('{workspace_id}', ids.ws)
    .replace('{task_id}', ids.task)
    .replace('{name}', ids.secret)
    .replace('{account_id}', ids.account)
    .replace('{id}', ids.agent)
    .replace('{schedule_id}', ids.schedule)
    .replace('{service_id}', ids.service)
    .replace('{invitation_id}', ids.invitation);
}

describe('cross-tenant matrix', () => {
  let p: TestPlatform;
  let a: { key: string; id: string; ws: string };
  let b: { key: string };
  let m: { key: string; id: string };
  const scoped = routeList.filter(([, r]) => r.workspaceRole !== undefined);
  let serviceId = '';

  const fresh = async (): Promise<Ids> => {
    const task = await p.request<{ id: string }>('POST', '/tasks', {
      key: a.key,
      body: { title: 'A’s task', workspace_id: a.ws },
    });
    await p.request('PUT', `/workspaces/${a.ws}/secrets`, {
      key: a.key,
      body: { name: 'A_SECRET', value: 'a-value' },
    });
    const agent = await p.request<{ id: string }>('POST', '/agents', { key: a.key, body: toolManifest });
    assert.equal(agent.status, 201, agent.text);
    const schedule = await p.request<{ id: string }>('POST', `/workspaces/${a.ws}/schedules`, {
      key: a.key,
      body: { agent: 'tenant-alpha/a-tool', cron_expression: '0 9 * * 1' },
    });
    assert.equal(schedule.status, 201, schedule.text);
    const invitation = await p.request<{ id: string }>('POST', `/workspaces/${a.ws}/invite`, {
      key: a.key,
      body: { email: `invitee-${randomUUID()}@example.test` },
    });
    assert.equal(invitation.status, 201, invitation.text);
    return {
      ws: a.ws,
      task: task.body.id,
      secret: 'A_SECRET',
      account: a.id,
      agent: agent.body.id,
      schedule: schedule.body.id,
      service: serviceId,
      invitation: invitation.body.id,
    };
  };

  const call = (key: string, id: OperationId, route: RouteDef, ids: Ids) => {
    const sample = (samples[id] as (ids: Ids) => Sample)(ids);
    const path = pathFor(route, ids) + (sample.query ? `?${sample.query}` : '');
    return p.request(route.method, path, {
      key,
      body: sample.body,
      ...(sample.rawBody ? { rawBody: sample.rawBody } : {}),
      ...(sample.headers ? { headers: sample.headers } : {}),
    });
  };

  before(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agenthost-xt-'));
    await writeFile(join(dir, 'index.js'), 'console.log("{}")\n');
    bundle = (await packDirectory(dir)).data;
    await rm(dir, { recursive: true, force: true });
    p = await startTestPlatform({}, 'sqlite', {}, { inMemory: true });
    const ca = await createAccount(p.deps, { org: 'tenant-alpha', tier: 'pro' });
    const cb = await createAccount(p.deps, { org: 'tenant-bravo', tier: 'pro' });
    const cm = await createAccount(p.deps, { org: 'tenant-member', tier: 'pro' });
    a = { key: ca.api_key, id: ca.account.id, ws: ca.workspace_id };
    b = { key: cb.api_key };
    m = { key: cm.api_key, id: cm.account.id };
    await joinWorkspace(p.request, a.ws, a.key, m);
    // One always-on service of A's, running throughout (outbound-only: no port).
    const svcDir = await mkdtemp(join(tmpdir(), 'agenthost-xt-svc-'));
    await writeFile(join(svcDir, 'index.js'), 'setInterval(() => {}, 1000);\n');
    const svcBundle = (await packDirectory(svcDir)).data;
    await rm(svcDir, { recursive: true, force: true });
    const svcAgent = await p.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', {
      key: a.key,
      body: { ...toolManifest, name: 'a-service', required_secrets: [], is_public: false },
    });
    assert.equal(svcAgent.status, 201, svcAgent.text);
    const up = await p.request('POST', `/agents/${svcAgent.body.id}/upload`, {
      key: a.key,
      rawBody: svcBundle,
      headers: { 'content-type': 'application/gzip' },
    });
    assert.equal(up.status, 200, up.text);
    const svc = await p.request<{ id: string }>('POST', `/workspaces/${a.ws}/services`, {
      key: a.key,
      body: { agent: 'tenant-alpha/a-service', http: false },
    });
    assert.equal(svc.status, 201, svc.text);
    serviceId = svc.body.id;
  });
  after(() => p.close());

  it('has a sample for every workspace-scoped route', () => {
    assert.ok(scoped.length >= 20);
    for (const [id] of scoped) assert.ok(samples[id], `a cross-tenant sample for ${id}`);
  });

  it('gives another tenant’s key nothing: not one successful response, and A’s data unchanged', async (t) => {
    const ids = await fresh();
    let successes = 0;
    for (const [id, route] of scoped) {
      const res = await call(b.key, id, route, ids);
      if (res.status < 300) successes++;
      assert.equal(
        res.status,
        404,
        `${id} (${route.method} ${route.path}) by another tenant: ${res.text.slice(0, 200)}`,
      );
    }
    const summary = `cross-tenant matrix: ${scoped.length} workspace-scoped routes tried with another tenant's key, ${successes} successful responses`;
    t.diagnostic(summary);
    console.log(summary);
    assert.equal(successes, 0);

    const task = await p.request<{ title: string; status: string }>('GET', `/tasks/${ids.task}`, {
      key: a.key,
    });
    assert.equal(task.body.title, 'A’s task');
    assert.equal(task.body.status, 'open', 'not completed by B');
    assert.deepEqual((await resolveSecretsForRun(p.deps, a.ws, ['A_SECRET'])).values, {
      A_SECRET: 'a-value',
    });
    const members = await p.request<{ members: unknown[] }>('GET', `/workspaces/${a.ws}/members`, {
      key: a.key,
    });
    assert.equal(members.body.members.length, 2);
    const tasks = await p.request<{ total: number }>('GET', `/workspaces/${a.ws}/tasks`, { key: a.key });
    assert.equal(tasks.body.total, 1, 'nothing was planted');
    const agent = await p.request<{ description: string; bundle: unknown }>('GET', `/agents/${ids.agent}`, {
      key: a.key,
    });
    assert.equal(agent.status, 200, `A’s agent is still there: ${agent.text}`);
    assert.equal(agent.body.description, 'A’s tool');
    assert.equal(agent.body.bundle, null);
    const agents = await p.request<{ agents: { name: string }[] }>('GET', `/agents?workspace_id=${a.ws}`, {
      key: a.key,
    });
    assert.deepEqual(
      [...new Set(agents.body.agents.map((x) => x.name))],
      ['a-service', 'a-tool'],
      'nothing was published or forked in',
    );
  });

  /*
   * POST /mcp is not scoped to one workspace (it covers the caller's), so it is not in the matrix
   * above: another tenant gets 200 with its own tools. What it must not get is A's private agent,
   * in the list or by tool name, even when naming it in ?public=.
   */
  it('gives another tenant’s key none of A’s private agents over MCP, listed or called by name', async () => {
    const headers = { accept: 'application/json, text/event-stream' };
    const rpc = (key: string, query: string, method: string, params: unknown) =>
      p.request<{ result?: { tools: { name: string }[] }; error?: { code: number; message: string } }>(
        'POST',
        `/mcp${query}`,
        { key, headers, body: { jsonrpc: '2.0', id: 1, method, params } },
      );
    const own = await rpc(a.key, '', 'tools/list', {});
    assert.ok(
      own.body.result?.tools.some((t) => t.name === 'tenant-alpha__a-service'),
      `A sees its private agent: ${own.text}`,
    );
    for (const query of ['', '?public=tenant-alpha/a-service']) {
      const listed = await rpc(b.key, query, 'tools/list', {});
      assert.equal(listed.status, 200, listed.text);
      assert.ok(!listed.text.includes('a-service'), `B's tools name nothing private of A's: ${listed.text}`);
      const called = await rpc(b.key, query, 'tools/call', {
        name: 'tenant-alpha__a-service',
        arguments: {},
      });
      assert.equal(called.body.error?.code, -32602, called.text);
      assert.match(called.body.error?.message ?? '', /Unknown tool/);
    }
    const calls = await p.request<{ logs: unknown[] }>('GET', '/usage/logs', { key: b.key });
    assert.deepEqual(calls.body.logs, [], 'B made no call');
  });

  it('gives a member 403 on every owner-only route and access to the member routes', async (t) => {
    let forbidden = 0;
    const ownerOnly = scoped.filter(([, r]) => r.workspaceRole === 'owner');
    for (const [id, route] of scoped) {
      const ids = await fresh();
      // removeMember is a member route only for leaving; removing someone else needs owner.
      const res = await call(m.key, id, route, ids);
      if (route.workspaceRole === 'owner' || id === 'removeMember') {
        assert.equal(res.status, 403, `${id} by a member: ${res.text.slice(0, 200)}`);
        forbidden++;
      } else {
        assert.ok(
          res.status >= 200 && res.status < 300,
          `${id} by a member: ${res.status} ${res.text.slice(0, 200)}`,
        );
      }
    }
    t.diagnostic(`member matrix: ${ownerOnly.length} owner-only routes, ${forbidden} answered 403`);
    assert.ok(ownerOnly.length >= 3);
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type * as z from 'zod';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { type OperationId, routeList } from '../../functions/platform/routes.ts';
import { type ApiResponse, errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { fastNotifier } from '../helpers/schedules.ts';
import { publishAlwaysOn } from '../helpers/services.ts';
import {
  bodyCases,
  type Case,
  defOf,
  type Fixture,
  fillPath,
  inner,
  type Json,
  queryWrongs,
} from './wrong-field-values.ts';

/*
 * A 400 INVALID_INPUT names the field the client sent (`body.<path>`,
 * `query.<name>`), never a neighbour, a parent or a field it did not send. Driven by the route
 * table: for every route with a JSON body, every field its zod schema declares (and the nested
 * objects and array elements of the valid body) is sent wrong on its own, from a wrong type to a
 * value out of the schema's range or format; the answer must be 400 naming exactly that field.
 * The same for every query parameter. Zod cannot see the checks the core makes (an agent that
 * does not exist, a cron expression, instance caps, cross-field manifest rules): those are the
 * explicit table further down. A route with a JSON body and no valid body below fails the first
 * test, so a new route gets one. The single-field cases are derived in wrong-field-values.ts.
 */

// ---------------------------------------------------------------------------------------------

describe('400 INVALID_INPUT names exactly the field that was sent', () => {
  let p: TestPlatform;
  let key: string;
  let org: string;
  const ids: Record<string, string> = {};
  let fixtures: Record<string, Fixture>;

  const send = (c: Pick<Case, 'method' | 'path' | 'body'>): Promise<ApiResponse> =>
    p.request(c.method, c.path, c.body === undefined ? { key } : { key, body: c.body });

  /** The cases whose answer is not a 400 naming exactly c.field, described one per line. */
  async function mismatches(cases: Case[]): Promise<string[]> {
    const found: string[] = [];
    for (const c of cases) {
      const res = await send(c);
      const fields = res.status === 400 ? [...new Set(errorOf(res).fields)] : [];
      if (res.status !== 400 || errorOf(res).code !== 'INVALID_INPUT' || fields.join() !== c.field) {
        found.push(
          `${c.method} ${c.path} ${c.field} (${c.why}): ${res.status} ${res.status === 400 ? fields.join(', ') : res.text.slice(0, 200)}`,
        );
      }
    }
    return found;
  }

  before(async () => {
    p = await startTestPlatform({}, 'sqlite', { notifier: fastNotifier() }, { inMemory: true });
    org = 'fieldnames';
    const owner = await p.createAccount(org, 'pro');
    key = owner.key;
    ids.workspace_id = owner.workspaceId;
    const invitee = await p.createAccount('fieldnames-invitee', 'pro');
    await createAccount(p.deps, { org: 'fieldnames-mail', tier: 'free', email: 'invitee@example.com' });

    const publish = async (body: Json) => {
      const res = await p.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', { key, body });
      assert.equal(res.status, 201, res.text);
      return res.body.id;
    };
    ids.id = await publish({
      name: 'greeter',
      description: 'Greets',
      supported_providers: ['anthropic'],
      prompt_template: 'Greet {{who}}',
      input_schema: { type: 'object', properties: { who: { type: 'string' } } },
    });
    ids.open = await publish({
      name: 'open',
      description: 'Open to forks',
      supported_providers: ['any'],
      prompt_template: 'Hello',
      is_public: true,
      allow_local_download: true,
    });
    await publish({ type: 'skill', skill_md: '---\nname: tone\ndescription: A tone\n---\nBe kind.\n' });
    await publish({
      name: 'leaf',
      type: 'agent',
      description: 'A dependency',
      supported_providers: ['anthropic'],
    });
    await publishAlwaysOn(p, key, {
      name: 'svc',
      description: 'A service',
      files: { 'server.mjs': 'setInterval(() => {}, 1000);\n' },
    });

    const team = await p.request<{ id: string }>('POST', '/workspaces', { key, body: { name: 'Team' } });
    assert.equal(team.status, 201, team.text);
    ids.team = team.body.id;

    const service = await p.request<{ id: string }>('POST', `/workspaces/${ids.workspace_id}/services`, {
      key,
      body: { agent: `${org}/svc`, name: 'svc-a', http: false, min_instances: 2, max_instances: 2 },
    });
    assert.equal(service.status, 201, service.text);
    ids.service_id = service.body.id;

    const schedule = await p.request<{ id: string }>('POST', `/workspaces/${ids.workspace_id}/schedules`, {
      key,
      body: { agent: `${org}/greeter`, cron_expression: '0 * * * *', enabled: false },
    });
    assert.equal(schedule.status, 201, schedule.text);
    ids.schedule_id = schedule.body.id;
    const webhook = await p.request<{ id: string }>('POST', `/workspaces/${ids.workspace_id}/schedules`, {
      key,
      body: { agent: `${org}/greeter`, type: 'webhook' },
    });
    assert.equal(webhook.status, 201, webhook.text);
    ids.webhook_schedule = webhook.body.id;

    const task = await p.request<{ id: string }>('POST', '/tasks', { key, body: { title: 'A task' } });
    assert.equal(task.status, 201, task.text);
    ids.task_id = task.body.id;
    // A run's id: its query is judged before the run is looked up.
    ids.run_id = '01900000-0000-7000-8000-00000000f1e1';

    const ws = `/workspaces/${ids.workspace_id}`;
    fixtures = {
      createApiKey: { path: '/api-keys', bodies: [{ name: 'a key', agent: 'bot' }] },
      createCheckout: { path: '/billing/checkout', bodies: [{ credits: 1000 }] },
      createTask: {
        path: '/tasks',
        bodies: [
          {
            title: 'T',
            description: 'D',
            due_date: '2026-03-01',
            project: 'P',
            priority: 'high',
            status: 'open',
            workspace_id: ids.workspace_id,
          },
        ],
      },
      updateTask: { path: `/tasks/${ids.task_id}`, bodies: [{ title: 'Renamed' }] },
      createWorkspace: { path: '/workspaces', bodies: [{ name: 'Another', slug: 'fieldnames-another' }] },
      inviteMember: {
        path: `/workspaces/${ids.team}/invite`,
        bodies: [{ account_id: invitee.accountId, role: 'member' }, { email: 'invitee@example.com' }],
      },
      putSecret: { path: `${ws}/secrets`, bodies: [{ name: 'MY_SECRET', value: 'v' }] },
      publishAgent: {
        path: '/agents',
        bodies: [
          {
            name: 'prompted',
            description: 'A prompt agent',
            supported_providers: ['anthropic'],
            default_models: { anthropic: 'claude-test' },
            prompt_template: 'Say {{what}}',
            input_schema: { type: 'object', properties: { what: { type: 'string' } } },
            tags: ['demo'],
            optional_secrets: ['EXTRA_KEY'],
            default_skills: [`${org}/tone`],
          },
          {
            name: 'orchestrator',
            type: 'agent',
            description: 'Calls leaf',
            supported_providers: ['anthropic'],
            required_secrets: ['ORCH_KEY'],
            loop: { max_turns: 5 },
            custom_tools: [
              {
                name: 'call_leaf',
                description: 'calls the leaf',
                command: `call ${org}/leaf {{q}}`,
                input_schema: { type: 'object', properties: { q: { type: 'string' } } },
              },
            ],
            manifest: {
              manifest_version: 1,
              dependencies: [{ id: `${org}/leaf`, version: 'v1' }],
              max_hops: 2,
              timeout_ms: 60_000,
              orchestration_mode: 'flexible',
              region: 'eu-west-1',
            },
          },
          {
            name: 'tooled',
            type: 'tool',
            description: 'A tool',
            supported_providers: ['any'],
            required_secrets: ['TOOL_KEY'],
            runtime: { command: 'node main.mjs' },
            accepted_file_types: ['application/pdf'],
            bundle: { exclude: ['tmp'], include: ['src'] },
          },
        ],
      },
      patchAgent: { path: `/agents/${ids.id}`, bodies: [{ description: 'Greets warmly' }] },
      forkAgent: { path: `/agents/${ids.open}/fork`, bodies: [{ new_name: 'forked' }] },
      deployService: {
        path: `${ws}/services`,
        bodies: [
          {
            agent: `${org}/svc@v1`,
            name: 'svc-b',
            command: 'node server.mjs',
            env: { GREETING: 'hi' },
            secrets: [],
            min_instances: 1,
            max_instances: 1,
            auto_update: false,
            http: false,
            alert_webhook_url: 'http://127.0.0.1:9/alerts',
            max_restart_failures: 5,
          },
        ],
      },
      patchService: { path: `${ws}/services/${ids.service_id}`, bodies: [{ auto_update: false }] },
      updateService: { path: `${ws}/services/${ids.service_id}/update`, bodies: [{ version: 'v1' }] },
      createSchedule: {
        path: `${ws}/schedules`,
        bodies: [
          {
            agent: `${org}/greeter`,
            type: 'cron',
            cron_expression: '30 6 * * 1',
            timezone: 'Europe/Paris',
            input_data: { who: 'Ada' },
            provider: 'anthropic',
            enabled: false,
            auto_update: true,
            alert_webhook_url: 'http://127.0.0.1:9/alerts',
            alert_on_failure_count: 3,
            max_consecutive_failures: 5,
          },
        ],
      },
      updateSchedule: { path: `${ws}/schedules/${ids.schedule_id}`, bodies: [{ enabled: false }] },
      triggerSchedule: {
        path: `${ws}/schedules/${ids.schedule_id}/trigger`,
        bodies: [{ input_data: { who: 'Ada' } }],
        noSanityCheck: 'it would run the agent, and this platform has no model provider',
      },
    };
  });

  after(async () => {
    await p?.close();
  });

  const jsonBodyRoutes = () => routeList.filter(([, r]) => r.body !== undefined);

  it('every route with a JSON body has a valid body here, and it is accepted', async () => {
    const missing = jsonBodyRoutes()
      .map(([id]) => id)
      .filter((id) => !fixtures[id]);
    assert.deepEqual(missing, [], 'add a fixture for each new route with a JSON body');
    for (const [id, r] of jsonBodyRoutes()) {
      const f = fixtures[id] as Fixture;
      if (f.noSanityCheck) continue;
      for (const body of f.bodies) {
        const path = id === 'publishAgent' ? '/agents?allow_no_secrets=true' : f.path;
        const res = await send({ method: r.method, path, body });
        assert.ok(res.status >= 200 && res.status < 300, `${id} ${JSON.stringify(body)}: ${res.text}`);
      }
    }
  });

  it('each body field sent wrong on its own (type, range, format, unknown) is the one field named', async () => {
    const cases = jsonBodyRoutes().flatMap(([id, r]) => bodyCases(r, fixtures[id] as Fixture));
    assert.ok(cases.length > 300, `only ${cases.length} cases were derived`);
    assert.deepEqual(await mismatches(cases), []);
  });

  it('checks zod does not see (the core’s) name the field that was sent', async () => {
    const ws = `/workspaces/${ids.workspace_id}`;
    const f = (id: OperationId) => fixtures[id] as Fixture;
    const body = (id: OperationId, change: Json, i = 0) => ({ ...(f(id).bodies[i] as Json), ...change });
    const at = (id: OperationId, change: Json, field: string, why: string, i = 0): Case => ({
      method: routeList.find(([rid]) => rid === id)?.[1].method as string,
      path: id === 'publishAgent' ? '/agents' : f(id).path,
      body: body(id, change, i),
      field,
      why,
    });
    const cases: Case[] = [
      // Schedules
      at('createSchedule', { cron_expression: '61 * * * *' }, 'body.cron_expression', 'minute 61'),
      at('createSchedule', { cron_expression: undefined }, 'body.cron_expression', 'missing for cron'),
      at('createSchedule', { type: 'webhook' }, 'body.cron_expression', 'a cron for a webhook'),
      at('createSchedule', { timezone: 'EST' }, 'body.timezone', 'an abbreviation'),
      at('createSchedule', { agent: `${org}/nope` }, 'body.agent', 'no such agent'),
      at('createSchedule', { agent: `${org}/greeter@v9` }, 'body.agent', 'no such version'),
      at('createSchedule', { agent: `${org}/tone` }, 'body.agent', 'a skill'),
      at('createSchedule', { alert_webhook_url: 'ftp://127.0.0.1/x' }, 'body.alert_webhook_url', 'not http'),
      at('updateSchedule', { version: 'v9' }, 'body.version', 'no such version'),
      at('updateSchedule', { cron_expression: 'every day' }, 'body.cron_expression', 'not cron'),
      at('updateSchedule', { timezone: 'Mars/Olympus' }, 'body.timezone', 'no such zone'),
      at('updateSchedule', { alert_webhook_url: 'ftp://127.0.0.1/x' }, 'body.alert_webhook_url', 'not http'),
      {
        method: 'PATCH',
        path: `${ws}/schedules/${ids.webhook_schedule}`,
        body: { cron_expression: '0 * * * *' },
        field: 'body.cron_expression',
        why: 'a cron for a webhook schedule',
      },
      // Services
      at('deployService', { agent: `${org}/nope` }, 'body.agent', 'no such agent'),
      at('deployService', { agent: `${org}/svc@v9` }, 'body.agent', 'no such version'),
      at('deployService', { agent: `${org}/greeter` }, 'body.agent', 'a prompt agent'),
      at('deployService', { env: { '1BAD': 'x' } }, 'body.env.1BAD', 'not a variable name'),
      at('deployService', { env: { API_TOKEN: 'x' } }, 'body.env.API_TOKEN', 'a sensitive name'),
      at('deployService', { env: { PORT: '1' } }, 'body.env.PORT', 'set by the platform'),
      at('deployService', { min_instances: 3, max_instances: 2 }, 'body.min_instances', 'min above max'),
      at('deployService', { max_instances: 5 }, 'body.max_instances', 'above the plan’s cap'),
      at(
        'deployService',
        { min_instances: 5, max_instances: undefined },
        'body.min_instances',
        'cap, no max',
      ),
      at('deployService', { alert_webhook_url: 'ftp://127.0.0.1/x' }, 'body.alert_webhook_url', 'not http'),
      at('patchService', { max_instances: 1 }, 'body.max_instances', 'below the service’s min of 2'),
      at('patchService', { min_instances: 3, max_instances: 2 }, 'body.min_instances', 'min above max'),
      at('patchService', { min_instances: 5 }, 'body.min_instances', 'above the plan’s cap'),
      at('patchService', { max_instances: 5 }, 'body.max_instances', 'above the plan’s cap'),
      at('patchService', { env: { API_TOKEN: 'x' } }, 'body.env.API_TOKEN', 'a sensitive name'),
      at('updateService', { version: 'v9' }, 'body.version', 'no such version'),
      // Agents: references, immutable fields, and the manifest's rules across fields
      at('publishAgent', { default_skills: [`${org}/nope`] }, 'body.default_skills.0', 'no such skill'),
      at(
        'publishAgent',
        {
          manifest: {
            ...(f('publishAgent').bodies[1]?.manifest as Json),
            dependencies: [{ id: `${org}/nope`, version: 'v1' }],
          },
        },
        'body.manifest.dependencies.0',
        'no such dependency',
        1,
      ),
      at('publishAgent', { prompt_template: 'Say {{other}}' }, 'body.prompt_template', 'unknown placeholder'),
      at('publishAgent', { timeout_seconds: 0 }, 'body.timeout_seconds', '0 on demand'),
      at(
        'publishAgent',
        { supported_providers: ['anthropic', 'anthropic'] },
        'body.supported_providers.1',
        'twice',
      ),
      at('patchAgent', { name: 'renamed' }, 'body.name', 'immutable'),
      at('patchAgent', { run_mode: 'always_on' }, 'body.run_mode', 'immutable'),
      at('patchAgent', { timeout_seconds: 0 }, 'body.timeout_seconds', '0 on demand'),
      at('patchAgent', { default_skills: [`${org}/nope`] }, 'body.default_skills.0', 'no such skill'),
      at(
        'patchAgent',
        { supported_providers: ['anthropic', 'anthropic'] },
        'body.supported_providers.1',
        'twice',
      ),
      at('patchAgent', { price_credits: 5 }, 'body.price_credits', 'paid, and the version is downloadable'),
      at(
        'patchAgent',
        { input_schema: { type: 'object', properties: { other: { type: 'string' } } } },
        'body.input_schema',
        'drops the template’s placeholder',
      ),
      at(
        'patchAgent',
        { supported_providers: ['openai'] },
        'body.supported_providers',
        'drops a default model’s provider',
      ),
    ];
    // The patch cases run against a version that is downloadable and has a default model.
    const setup = await p.request('PATCH', `/agents/${ids.id}`, {
      key,
      body: { allow_local_download: true, default_models: { anthropic: 'claude-test' } },
    });
    assert.equal(setup.status, 200, setup.text);
    assert.deepEqual(await mismatches(cases), []);
  });

  it('each query parameter sent wrong on its own (format, range, unknown, repeated) is the one field named', async () => {
    const pathIds = { ...ids, org, agent: 'greeter', version: 'v1' };
    const cases: Case[] = [];
    for (const [id, r] of routeList) {
      if (!r.query) continue;
      const base = fillPath(r.path, pathIds);
      const body = r.body
        ? (fixtures[id]?.bodies[0] ?? {})
        : r.binaryBody
          ? { jsonrpc: '2.0', id: 1, method: 'ping' }
          : undefined;
      const q = (params: string) => `${base}?${params}`;
      const shape = defOf(inner(r.query)).shape as Record<string, z.ZodType>;
      for (const [name, schema] of Object.entries(shape)) {
        for (const w of queryWrongs(schema)) {
          cases.push({
            method: r.method,
            path: q(`${name}=${encodeURIComponent(String(w.value))}`),
            body,
            field: `query.${name}`,
            why: w.why,
          });
        }
      }
      cases.push({
        method: r.method,
        path: q('zz_unknown=1'),
        body,
        field: 'query.zz_unknown',
        why: 'unknown',
      });
      const first = Object.keys(shape)[0] as string;
      cases.push({
        method: r.method,
        path: q(`${first}=1&${first}=2`),
        body,
        field: `query.${first}`,
        why: 'twice',
      });
    }
    // Checks zod does not see: a cursor that no page gave, a range the clock refuses.
    const svc = `/workspaces/${ids.workspace_id}/services/${ids.service_id}`;
    for (const path of [`/agents/${ids.id}/logs`, `${svc}/logs`, '/usage/logs', '/author-usage/logs']) {
      cases.push({
        method: 'GET',
        path: `${path}?cursor=not-a-cursor`,
        field: 'query.cursor',
        why: 'not a next_cursor',
      });
    }
    const now = p.clock.now();
    const day = (offset: number) => new Date(now.getTime() + offset * 86_400_000).toISOString().slice(0, 10);
    for (const path of ['/usage', '/usage/timeseries', '/author-usage']) {
      cases.push({
        method: 'GET',
        path: `${path}?from=${day(2)}`,
        field: 'query.from',
        why: 'in the future',
      });
      cases.push({
        method: 'GET',
        path: `${path}?from=${day(-400)}`,
        field: 'query.from',
        why: 'before retention',
      });
      cases.push({
        method: 'GET',
        path: `${path}?from=${day(-2)}&to=${day(-3)}`,
        field: 'query.to',
        why: 'before from',
      });
      cases.push({ method: 'GET', path: `${path}?from=yesterday`, field: 'query.from', why: 'not a date' });
    }
    cases.push({
      method: 'POST',
      path: '/mcp?public=Not%20A%20Ref',
      body: { jsonrpc: '2.0', id: 1, method: 'ping' },
      field: 'query.public',
      why: 'not org/name',
    });
    assert.ok(cases.length > 100, `only ${cases.length} cases were derived`);
    assert.deepEqual(await mismatches(cases), []);
  });

  it('a JSON body that is not an object is a 400 on body, never a 500', async () => {
    const found: string[] = [];
    for (const [id, r] of jsonBodyRoutes()) {
      const path = (fixtures[id] as Fixture).path;
      for (const raw of ['[]', '"text"', '42', 'null', 'true', '{"a":', '[{}]']) {
        const res = await p.request(r.method, path, {
          key,
          rawBody: raw,
          headers: { 'content-type': 'application/json' },
        });
        const fields = res.status === 400 ? errorOf(res).fields : [];
        if (res.status !== 400 || fields.join() !== 'body')
          found.push(`${r.method} ${path} ${raw}: ${res.status} ${res.text.slice(0, 200)}`);
      }
    }
    assert.deepEqual(found, []);
  });
});

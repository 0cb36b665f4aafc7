import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BACKENDS_WITH_FAULTS, errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

type Task = Record<string, unknown> & { id: string; status: string; completed_at: string | null };
type TaskList = { tasks: Task[]; total: number; metadata?: unknown };

for (const backend of BACKENDS_WITH_FAULTS) {
  describe(`Tasks API (end to end over HTTP, ${backend} store)`, () => {
    let p: TestPlatform;
    before(async () => {
      p = await startTestPlatform({}, backend, {}, { inMemory: true });
    });
    after(() => p.close());

    it('creates a task with defaults and answers 201 with the spec fields', async () => {
      const res = await p.request<Task>('POST', '/tasks', { body: { title: 'Write the report' } });
      assert.equal(res.status, 201);
      for (const field of [
        'id',
        'title',
        'status',
        'priority',
        'due_date',
        'project',
        'created_by',
        'created_at',
      ]) {
        assert.ok(field in res.body, `response has ${field}`);
      }
      assert.match(res.body.id, /^[0-9a-f-]{36}$/);
      assert.equal(res.body.status, 'open');
      assert.equal(res.body.priority, 'normal');
      assert.equal(res.body.created_by, null);
      assert.equal(res.body.created_at, p.clock.now().toISOString());
      assert.equal((res.body.metadata as { request_id: string }).request_id, res.headers.get('x-request-id'));
    });

    it('creates with every field and an explicit status; done sets completed_at', async () => {
      const res = await p.request<Task>('POST', '/tasks', {
        body: {
          title: 'Ship',
          description: '# Notes\nmarkdown',
          due_date: '2026-07-01',
          project: 'launch',
          priority: 'urgent',
          status: 'done',
        },
      });
      assert.equal(res.status, 201);
      assert.equal(res.body.status, 'done');
      assert.equal(res.body.priority, 'urgent');
      assert.equal(res.body.due_date, '2026-07-01');
      assert.equal(res.body.project, 'launch');
      assert.equal(res.body.completed_at, p.clock.now().toISOString());
    });

    it('gets, patches and deletes a task; completed_at follows the status', async () => {
      const created = (await p.request<Task>('POST', '/tasks', { body: { title: 'Lifecycle' } })).body;
      const got = await p.request<Task>('GET', `/tasks/${created.id}`);
      assert.equal(got.status, 200);
      assert.equal(got.body.title, 'Lifecycle');

      p.clock.advance(60_000);
      const done = await p.request<Task>('PATCH', `/tasks/${created.id}`, { body: { status: 'done' } });
      assert.equal(done.status, 200);
      assert.equal(done.body.completed_at, p.clock.now().toISOString());
      const doneAt = done.body.completed_at;

      p.clock.advance(60_000);
      const again = await p.request<Task>('PATCH', `/tasks/${created.id}`, {
        body: { status: 'done', title: 'Renamed' },
      });
      assert.equal(again.body.completed_at, doneAt, 'a second done keeps the first completion time');
      assert.equal(again.body.title, 'Renamed');

      const reopened = await p.request<Task>('PATCH', `/tasks/${created.id}`, {
        body: { status: 'in_progress' },
      });
      assert.equal(reopened.body.status, 'in_progress');
      assert.equal(reopened.body.completed_at, null);

      await p.request('PATCH', `/tasks/${created.id}`, { body: { status: 'done' } });
      const open = await p.request<Task>('PATCH', `/tasks/${created.id}`, { body: { status: 'open' } });
      assert.equal(open.body.completed_at, null);

      const cleared = await p.request<Task>('PATCH', `/tasks/${created.id}`, {
        body: { project: 'x', due_date: '2026-08-01' },
      });
      assert.equal(cleared.body.project, 'x');
      const nulls = await p.request<Task>('PATCH', `/tasks/${created.id}`, {
        body: { project: null, due_date: null },
      });
      assert.equal(nulls.body.project, null);
      assert.equal(nulls.body.due_date, null);

      // The state table's "or complete": POST …/complete sets done and completed_at, once.
      p.clock.advance(60_000);
      const completed = await p.request<Task>('POST', `/tasks/${created.id}/complete`);
      assert.equal(completed.status, 200, completed.text);
      assert.equal(completed.body.status, 'done');
      assert.equal(completed.body.completed_at, p.clock.now().toISOString());
      p.clock.advance(60_000);
      const twice = await p.request<Task>('POST', `/tasks/${created.id}/complete`);
      assert.equal(twice.body.completed_at, completed.body.completed_at, 'completing again keeps the time');
      assert.equal((await p.request('POST', '/tasks/no-such-task/complete')).status, 404);

      const del = await p.request('DELETE', `/tasks/${created.id}`);
      assert.equal(del.status, 204);
      assert.equal(del.text, '');
      const gone = await p.request('GET', `/tasks/${created.id}`);
      assert.equal(gone.status, 404);
      assert.equal(errorOf(gone).code, 'NOT_FOUND');
      assert.equal((await p.request('DELETE', `/tasks/${created.id}`)).status, 404);
      assert.equal((await p.request('PATCH', `/tasks/${created.id}`, { body: { title: 'x' } })).status, 404);
    });

    it('lists with filters, limit, offset and total, newest first', async () => {
      const q = await p.createAccount('lister');
      const make = async (body: Record<string, unknown>) => {
        p.clock.advance(1000);
        return (await p.request<Task>('POST', '/tasks', { key: q.key, body })).body;
      };
      const a = await make({ title: 'a', project: 'alpha', priority: 'high' });
      const b = await make({ title: 'b', project: 'alpha', status: 'in_progress' });
      const c = await make({ title: 'c', project: 'beta', priority: 'high' });
      const d = await make({ title: 'd', status: 'done' });

      const all = await p.request<TaskList>('GET', '/tasks', { key: q.key });
      assert.equal(all.status, 200);
      assert.equal(all.body.total, 4);
      assert.deepEqual(
        all.body.tasks.map((t) => t.id),
        [d.id, c.id, b.id, a.id],
      );

      const page = await p.request<TaskList>('GET', '/tasks?limit=2&offset=1', { key: q.key });
      assert.deepEqual(
        page.body.tasks.map((t) => t.id),
        [c.id, b.id],
      );
      assert.equal(page.body.total, 4);
      assert.equal(
        (page.body as { next_offset?: number | null }).next_offset,
        3,
        'where the next page starts',
      );

      const alpha = await p.request<TaskList>('GET', '/tasks?project=alpha', { key: q.key });
      assert.deepEqual(alpha.body.tasks.map((t) => t.id).sort(), [a.id, b.id].sort());
      assert.equal(alpha.body.total, 2);

      const high = await p.request<TaskList>('GET', '/tasks?priority=high&status=open', { key: q.key });
      assert.deepEqual(high.body.tasks.map((t) => t.id).sort(), [a.id, c.id].sort());

      const ws = await p.request<TaskList>('GET', `/workspaces/${q.workspaceId}/tasks?status=done`, {
        key: q.key,
      });
      assert.equal(ws.status, 200);
      assert.deepEqual(
        ws.body.tasks.map((t) => t.id),
        [d.id],
      );

      const beyond = await p.request<TaskList>('GET', '/tasks?offset=10', { key: q.key });
      assert.deepEqual(beyond.body, {
        tasks: [],
        total: 4,
        next_offset: null,
        metadata: beyond.body.metadata,
      });
    });

    it('overdue lists only open tasks whose due date has passed (by the platform clock, UTC)', async () => {
      const q = await p.createAccount('overdue-org');
      p.clock.set('2026-06-15T12:00:00Z');
      const late = (
        await p.request<Task>('POST', '/tasks', {
          key: q.key,
          body: { title: 'late', due_date: '2026-06-14' },
        })
      ).body;
      await p.request('POST', '/tasks', { key: q.key, body: { title: 'today', due_date: '2026-06-15' } });
      await p.request('POST', '/tasks', { key: q.key, body: { title: 'no date' } });
      await p.request('POST', '/tasks', {
        key: q.key,
        body: { title: 'late done', due_date: '2026-06-01', status: 'done' },
      });
      const res = await p.request<TaskList>('GET', '/tasks?overdue=true', { key: q.key });
      assert.deepEqual(
        res.body.tasks.map((t) => t.id),
        [late.id],
      );
      p.clock.set('2026-06-16T00:00:01Z');
      const next = await p.request<TaskList>('GET', '/tasks?overdue=true', { key: q.key });
      assert.equal(next.body.total, 2, 'the task due yesterday is now overdue too');
      const notFiltered = await p.request<TaskList>('GET', '/tasks?overdue=false', { key: q.key });
      assert.equal(notFiltered.body.total, 4);
    });

    it('records the agent as created_by for tasks created with an agent key', async () => {
      const key = await p.request<{ api_key: string }>('POST', '/api-keys', {
        body: { name: 'bot', agent: 'triage-bot' },
      });
      assert.equal(key.status, 201);
      const res = await p.request<Task>('POST', '/tasks', {
        key: key.body.api_key,
        body: { title: 'from an agent' },
      });
      assert.equal(res.status, 201);
      assert.equal(res.body.created_by, 'triage-bot');
    });

    describe('bad input answers a 4xx envelope naming the field, never a 500', () => {
      const cases: [
        string,
        () => Promise<import('../helpers/platform.ts').ApiResponse>,
        number,
        string,
        string,
      ][] = [];
      const add = (
        name: string,
        run: () => Promise<import('../helpers/platform.ts').ApiResponse>,
        status: number,
        code: string,
        field: string,
      ) => cases.push([name, run, status, code, field]);

      add(
        'malformed JSON',
        () =>
          p.request('POST', '/tasks', {
            rawBody: '{"title": ',
            headers: { 'content-type': 'application/json' },
          }),
        400,
        'INVALID_INPUT',
        'body',
      );
      add(
        'wrong content type',
        () =>
          p.request('POST', '/tasks', {
            rawBody: 'title=x',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
          }),
        415,
        'UNSUPPORTED_TYPE',
        'header.content-type',
      );
      add(
        'missing title',
        () => p.request('POST', '/tasks', { body: { project: 'x' } }),
        400,
        'INVALID_INPUT',
        'body.title',
      );
      add(
        'empty title',
        () => p.request('POST', '/tasks', { body: { title: '   ' } }),
        400,
        'INVALID_INPUT',
        'body.title',
      );
      add(
        'title of the wrong type',
        () => p.request('POST', '/tasks', { body: { title: 42 } }),
        400,
        'INVALID_INPUT',
        'body.title',
      );
      add(
        'unknown field',
        () => p.request('POST', '/tasks', { body: { title: 'x', colour: 'red' } }),
        400,
        'INVALID_INPUT',
        'body.colour',
      );
      add(
        'impossible date',
        () => p.request('POST', '/tasks', { body: { title: 'x', due_date: '2026-02-30' } }),
        400,
        'INVALID_INPUT',
        'body.due_date',
      );
      add(
        'month 13',
        () => p.request('POST', '/tasks', { body: { title: 'x', due_date: '2026-13-01' } }),
        400,
        'INVALID_INPUT',
        'body.due_date',
      );
      add(
        'not a date',
        () => p.request('POST', '/tasks', { body: { title: 'x', due_date: 'tomorrow' } }),
        400,
        'INVALID_INPUT',
        'body.due_date',
      );
      add(
        'bad priority',
        () => p.request('POST', '/tasks', { body: { title: 'x', priority: 'asap' } }),
        400,
        'INVALID_INPUT',
        'body.priority',
      );
      add(
        'bad status',
        () => p.request('POST', '/tasks', { body: { title: 'x', status: 'finished' } }),
        400,
        'INVALID_INPUT',
        'body.status',
      );
      add(
        'body is an array',
        () => p.request('POST', '/tasks', { body: [{ title: 'x' }] }),
        400,
        'INVALID_INPUT',
        'body',
      );
      add('limit 0', () => p.request('GET', '/tasks?limit=0'), 400, 'INVALID_INPUT', 'query.limit');
      add('limit 201', () => p.request('GET', '/tasks?limit=201'), 400, 'INVALID_INPUT', 'query.limit');
      add(
        'limit not a number',
        () => p.request('GET', '/tasks?limit=ten'),
        400,
        'INVALID_INPUT',
        'query.limit',
      );
      add(
        'negative offset',
        () => p.request('GET', '/tasks?offset=-1'),
        400,
        'INVALID_INPUT',
        'query.offset',
      );
      add(
        'overdue not boolean',
        () => p.request('GET', '/tasks?overdue=yes'),
        400,
        'INVALID_INPUT',
        'query.overdue',
      );
      add(
        'unknown query parameter',
        () => p.request('GET', '/tasks?colour=red'),
        400,
        'INVALID_INPUT',
        'query.colour',
      );
      add(
        'repeated query parameter',
        () => p.request('GET', '/tasks?limit=1&limit=2'),
        400,
        'INVALID_INPUT',
        'query.limit',
      );
      add(
        'empty PATCH',
        () => p.request('PATCH', '/tasks/00000000-0000-4000-8000-000000000000', { body: {} }),
        400,
        'INVALID_INPUT',
        'body',
      );
      add(
        'oversized body',
        () => p.request('POST', '/tasks', { body: { title: 'x', description: 'y'.repeat(1_100_000) } }),
        413,
        'DOCUMENT_TOO_LARGE',
        'body',
      );
      add(
        'workspace_id not a uuid',
        () => p.request('POST', '/tasks', { body: { title: 'x', workspace_id: 'nope' } }),
        400,
        'INVALID_INPUT',
        'body.workspace_id',
      );

      it('every case', async () => {
        for (const [name, run, status, code, field] of cases) {
          const res = await run();
          assert.equal(res.status, status, `${name}: status (${res.text.slice(0, 300)})`);
          const err = errorOf(res);
          assert.equal(err.code, code, `${name}: code`);
          assert.equal(err.is_retryable, false, `${name}: not retryable`);
          assert.ok(err.fields.includes(field), `${name}: names ${field}, got ${err.fields.join(', ')}`);
          assert.ok(err.message.length > 0);
        }
      });
    });

    it('keeps each workspace’s tasks from other accounts (404, as if absent)', async () => {
      const a = await p.createAccount('tenant-a');
      const b = await p.createAccount('tenant-b');
      const task = (await p.request<Task>('POST', '/tasks', { key: a.key, body: { title: 'private' } })).body;

      for (const [method, path, body] of [
        ['GET', `/tasks/${task.id}`, undefined],
        ['PATCH', `/tasks/${task.id}`, { title: 'stolen' }],
        ['POST', `/tasks/${task.id}/complete`, undefined],
        ['DELETE', `/tasks/${task.id}`, undefined],
        ['GET', `/workspaces/${a.workspaceId}/tasks`, undefined],
        ['GET', `/tasks?workspace_id=${a.workspaceId}`, undefined],
        ['POST', '/tasks', { title: 'planted', workspace_id: a.workspaceId }],
      ] as const) {
        const res = await p.request(method, path, { key: b.key, body });
        assert.equal(res.status, 404, `${method} ${path} by B`);
        assert.equal(errorOf(res).code, 'NOT_FOUND');
      }
      const still = await p.request<Task>('GET', `/tasks/${task.id}`, { key: a.key });
      assert.equal(still.body.title, 'private');
      assert.equal(still.body.status, 'open', 'B could not complete it');
      const listA = await p.request<TaskList>('GET', '/tasks', { key: a.key });
      assert.equal(listA.body.total, 1, 'nothing was planted in A’s workspace');
      const listB = await p.request<TaskList>('GET', '/tasks', { key: b.key });
      assert.equal(listB.body.total, 0);
    });

    it('concurrent PATCHes of different fields both land', async () => {
      const t = (await p.request<Task>('POST', '/tasks', { body: { title: 'race' } })).body;
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          p.request<Task>('PATCH', `/tasks/${t.id}`, {
            body: i % 2 ? { project: 'p' } : { priority: 'high' },
          }),
        ),
      );
      assert.ok(results.every((r) => r.status === 200));
      const final = (await p.request<Task>('GET', `/tasks/${t.id}`)).body;
      assert.equal(final.project, 'p');
      assert.equal(final.priority, 'high');
    });
  });
}

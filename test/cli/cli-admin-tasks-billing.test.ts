import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeAgentDir } from '../helpers/agent-dir.ts';
import { type Account, type CliAdminPlatform, startCliAdminPlatform } from '../helpers/cli-admin-platform.ts';
import type { FakeLlmProviders } from '../helpers/fake-llm-providers.ts';
import type { TestPlatform } from '../helpers/platform.ts';

/**
 * The CLI's tasks, usage and billing commands against the local platform (as cli-admin.test.ts),
 * and the key every account command needs.
 */

describe('the CLI’s admin commands against the local platform', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let home: string;
  let alpha: Account;
  let bravo: Account;
  let dave: Account;
  let run: CliAdminPlatform['run'];
  let envOf: CliAdminPlatform['envOf'];
  let fails: CliAdminPlatform['fails'];
  let json: CliAdminPlatform['json'];

  before(async () => {
    ({ p, fake, home, alpha, bravo, dave, run, envOf, fails, json } = await startCliAdminPlatform());
  });
  after(async () => {
    await p?.close();
    await fake?.close();
    await rm(home, { recursive: true, force: true });
  });

  describe('tasks', () => {
    it('creates, shows, lists with the API’s filters, pages, updates, completes and deletes tasks', async () => {
      const env = envOf(alpha.key);
      const created = json<Record<string, unknown> & { id: string }>(
        await run(
          [
            'tasks',
            'create',
            'Write the report',
            '--description',
            'Q2 numbers',
            '--due',
            '2026-06-01',
            '--project',
            'reports',
            '--priority',
            'high',
            '--json',
          ],
          env,
        ),
      );
      assert.deepEqual(
        { ...created, id: undefined, created_at: undefined, updated_at: undefined, metadata: undefined },
        {
          id: undefined,
          workspace_id: alpha.workspaceId,
          title: 'Write the report',
          description: 'Q2 numbers',
          due_date: '2026-06-01',
          project: 'reports',
          priority: 'high',
          status: 'open',
          created_by: null,
          created_at: undefined,
          updated_at: undefined,
          completed_at: null,
          metadata: undefined,
        },
      );
      p.clock.advance(1000);
      const other = await run(['tasks', 'create', 'Plan the offsite', '--due', '2026-07-01'], env);
      assert.equal(other.code, 0, other.stderr);
      assert.match(other.stdout, /^title +Plan the offsite$/m);
      assert.match(other.stdout, /^priority +normal$/m);
      assert.match(other.stdout, /^project +-$/m);
      p.clock.advance(1000);
      const third = json<{ id: string }>(
        await run(['tasks', 'create', 'Low one', '--priority', 'low', '--project', 'reports', '--json'], env),
      );

      const shown = await run(['tasks', 'get', created.id], env);
      assert.match(shown.stdout, /^due +2026-06-01$/m);
      assert.match(shown.stdout, /^description +Q2 numbers$/m);

      const titles = async (args: string[]) =>
        json<{ tasks: { title: string }[]; total: number }>(
          await run(['tasks', 'list', ...args, '--json'], env),
        );
      const all = await titles([]);
      assert.deepEqual(
        all.tasks.map((t) => t.title),
        ['Low one', 'Plan the offsite', 'Write the report'],
      );
      assert.equal(all.total, 3);
      assert.deepEqual(
        (await titles(['--project', 'reports'])).tasks.map((t) => t.title),
        ['Low one', 'Write the report'],
      );
      assert.deepEqual(
        (await titles(['--priority', 'high'])).tasks.map((t) => t.title),
        ['Write the report'],
      );
      // The platform's clock is 2026-06-15: only the June 1st task is overdue.
      assert.deepEqual(
        (await titles(['--overdue'])).tasks.map((t) => t.title),
        ['Write the report'],
      );

      const page = await run(['tasks', 'list', '--limit', '2'], env);
      assert.equal(page.code, 0, page.stderr);
      assert.match(page.stdout, /^ID +STATUS +PRIORITY +DUE +PROJECT +TITLE$/m);
      assert.equal(page.stdout.trim().split('\n').length, 3, 'the header and two tasks');
      assert.match(page.stderr, /3 in all: --all to list every one, or --offset 2/);
      const second = await titles(['--limit', '2', '--offset', '2']);
      assert.deepEqual(
        second.tasks.map((t) => t.title),
        ['Write the report'],
      );
      const everyPage = await titles(['--all', '--limit', '1']);
      assert.deepEqual(everyPage, { tasks: everyPage.tasks, total: 3 });
      assert.deepEqual(
        everyPage.tasks.map((t) => t.title),
        ['Low one', 'Plan the offsite', 'Write the report'],
      );

      const updated = json<{
        status: string;
        due_date: string | null;
        title: string;
        description: string | null;
      }>(
        await run(
          [
            'tasks',
            'update',
            created.id,
            '--status',
            'in_progress',
            '--no-due',
            '--title',
            'Write the Q2 report',
            '--json',
          ],
          env,
        ),
      );
      assert.deepEqual(
        [updated.status, updated.due_date, updated.title, updated.description],
        ['in_progress', null, 'Write the Q2 report', 'Q2 numbers'],
      );
      assert.deepEqual(
        (await titles(['--status', 'in_progress'])).tasks.map((t) => t.title),
        ['Write the Q2 report'],
      );

      const done = await run(['tasks', 'complete', created.id], env);
      assert.equal(done.code, 0, done.stderr);
      assert.match(done.stdout, /^status +done$/m);
      assert.match(done.stdout, /^completed +2026-06-\d\dT/m);

      const del = await run(['tasks', 'delete', third.id, '--json'], env);
      assert.deepEqual(json(del), { deleted: third.id });
      await fails(['tasks', 'get', third.id], env, 5, /^agenthost: NOT_FOUND: /);
      await fails(['tasks', 'delete', third.id], env, 5);
    });

    it('refuses bad flag values (exit 2) and another account’s tasks and workspace (exit 5)', async () => {
      const env = envOf(alpha.key);
      const task = json<{ id: string }>(await run(['tasks', 'create', 'Private', '--json'], env));
      await fails(['tasks', 'update', task.id], env, 2, /nothing to change/);
      await fails(
        ['tasks', 'update', task.id, '--priority', 'asap'],
        env,
        2,
        /Allowed choices are low, normal, high, urgent/,
      );
      await fails(['tasks', 'list', '--status', 'later'], env, 2);
      await fails(
        ['tasks', 'list', '--limit', '0'],
        env,
        2,
        /option '--limit <n>' argument '0' is invalid. must be a whole number from 1 to 200/,
      );
      await fails(['tasks', 'list', '--limit', 'ten'], env, 2);
      await fails(['tasks', 'list', '--all', '--offset', '5'], env, 2);
      await fails(
        ['tasks', 'create', 'Bad date', '--due', '2026-02-30'],
        env,
        2,
        /INVALID_INPUT: .*due_date/,
      );
      await fails(['tasks', 'create', ''], env, 2, /INVALID_INPUT/);

      await fails(['tasks', 'get', task.id], envOf(bravo.key), 5);
      await fails(['tasks', 'update', task.id, '--title', 'Mine now'], envOf(bravo.key), 5);
      await fails(['tasks', 'complete', task.id], envOf(bravo.key), 5);
      await fails(['tasks', 'delete', task.id], envOf(bravo.key), 5);
      await fails(['tasks', 'list', '-w', alpha.workspaceId], envOf(bravo.key), 5, /NOT_FOUND/);
      await fails(['tasks', 'create', 'Sneaky', '-w', alpha.workspaceId], envOf(bravo.key), 5, /NOT_FOUND/);
      assert.equal(
        json<{ title: string }>(await run(['tasks', 'get', task.id, '--json'], env)).title,
        'Private',
      );
    });
  });

  describe('usage', () => {
    before(async () => {
      const dir = await writeAgentDir(home, {
        name: 'hello',
        description: 'Says hello.',
        supported_providers: ['openai'],
        default_models: { openai: 'gpt-test-mini' },
        prompt_template: 'Say hello to {{who}}',
        input_schema: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] },
        is_public: true,
      });
      const published = await run(['publish', dir], envOf(alpha.key));
      assert.equal(published.code, 0, published.stderr);
      // Two calls by bravo today (one ok, one failing on the model), one yesterday.
      p.clock.advance(-86_400_000);
      fake.enqueue({ text: 'Hello yesterday' });
      assert.equal(
        (await run(['call', 'adm-alpha/hello@v1', '--input', '{"who":"A"}'], envOf(bravo.key))).code,
        0,
      );
      p.clock.advance(86_400_000);
      fake.enqueue({ text: 'Hello today' });
      assert.equal(
        (await run(['call', 'adm-alpha/hello@v1', '--input', '{"who":"B"}'], envOf(bravo.key))).code,
        0,
      );
      fake.enqueue({ status: 500 });
      assert.notEqual(
        (await run(['call', 'adm-alpha/hello@v1', '--input', '{"who":"C"}'], envOf(bravo.key))).code,
        0,
      );
    });

    it('shows the totals and today’s quotas', async () => {
      const summary = json<{
        totals: { calls: number; successes: number; errors: number };
        quota: { used: number; limit: number; tier: string };
        sandbox_quota: { limit: number };
      }>(await run(['usage', '--json'], envOf(bravo.key)));
      assert.deepEqual([summary.totals.calls, summary.totals.successes, summary.totals.errors], [3, 2, 1]);
      assert.equal(summary.quota.tier, 'pro');
      assert.equal(summary.quota.used, 2, 'today’s two calls');
      const human = await run(['usage'], envOf(bravo.key));
      assert.equal(human.code, 0, human.stderr);
      assert.match(human.stdout, /^calls +3 \(2 ok, 1 errors, 0 timeouts\)$/m);
      assert.match(human.stdout, /^errors by code +LLM_ERROR 1$/m);
      assert.match(
        human.stdout,
        new RegExp(
          `^calls today +2 of ${summary.quota.limit} used, ${summary.quota.limit - 2} left \\(resets 2026-06-1\\dT00:00:00.000Z\\)$`,
          'm',
        ),
      );
      assert.match(human.stdout, /^sandbox runs today +0 of \d+ used/m);
      // --from/--to as the API takes them: today only.
      const today = json<{ totals: { calls: number }; from: string }>(
        await run(['usage', '--from', '2026-06-15', '--to', '2026-06-15', '--json'], envOf(bravo.key)),
      );
      assert.equal(today.totals.calls, 2);
      assert.equal(today.from, '2026-06-15T00:00:00.000Z');
      // alpha called nothing: the caller's side only.
      assert.equal(
        json<{ totals: { calls: number } }>(await run(['usage', '--json'], envOf(alpha.key))).totals.calls,
        0,
      );
    });

    it('shows calls per day and per agent', async () => {
      const series = json<{ granularity: string; buckets: { start: string; calls: number }[] }>(
        await run(['usage', '--by', 'day', '--from', '2026-06-13', '--json'], envOf(bravo.key)),
      );
      assert.equal(series.granularity, 'day');
      assert.deepEqual(
        series.buckets.map((b) => [b.start.slice(0, 10), b.calls]),
        [
          ['2026-06-13', 0],
          ['2026-06-14', 1],
          ['2026-06-15', 2],
        ],
      );
      const table = await run(['usage', '--by', 'day', '--from', '2026-06-13'], envOf(bravo.key));
      assert.match(table.stdout, /^DAY +CALLS +OK +ERRORS +TIMEOUTS +TOKENS +AVG MS +P95 MS$/m);
      assert.match(table.stdout, /^2026-06-14 +1 +1 +0 +0 +\d+ /m);
      assert.match(table.stdout, /^2026-06-15 +2 +1 +1 +0 +\d+ /m);
      assert.match(table.stderr, /UTC days from 2026-06-13T00:00:00.000Z/);
      const hours = json<{ granularity: string; buckets: unknown[] }>(
        await run(['usage', '--by', 'hour', '--from', '2026-06-15T10:00:00Z', '--json'], envOf(bravo.key)),
      );
      assert.equal(hours.granularity, 'hour');
      assert.equal(hours.buckets.length, 3, '10:00, 11:00 and 12:00');

      const byAgent = json<{ group_by: string; groups: { key: string; calls: number; errors: number }[] }>(
        await run(['usage', '--by', 'agent', '--json'], envOf(bravo.key)),
      );
      assert.equal(byAgent.group_by, 'agent');
      assert.deepEqual(
        byAgent.groups.map((g) => [g.key, g.calls, g.errors]),
        [['adm-alpha/hello', 3, 1]],
      );
      const agentTable = await run(['usage', '--by', 'agent'], envOf(bravo.key));
      assert.match(agentTable.stdout, /^AGENT +CALLS +OK +ERRORS/m);
      assert.match(agentTable.stdout, /^adm-alpha\/hello +3 +2 +1 +0 /m);
      const empty = await run(['usage', '--by', 'agent'], envOf(alpha.key));
      assert.equal(empty.code, 0, empty.stderr);
      assert.equal(empty.stdout, '');
      assert.match(empty.stderr, /no calls from /);
    });

    it('refuses bad ranges and choices with exit 2', async () => {
      await fails(['usage', '--by', 'week'], envOf(bravo.key), 2, /Allowed choices are hour, day, agent/);
      await fails(['usage', '--from', 'yesterday'], envOf(bravo.key), 2, /INVALID_INPUT: .*query\.from/);
      await fails(['usage', '--from', '2026-07-01'], envOf(bravo.key), 2, /must not be in the future/);
      await fails(['usage', '--from', '2026-06-15', '--to', '2026-06-10'], envOf(bravo.key), 2, /query\.to/);
      await fails(['usage', '--agent', 'no-slash', '--by', 'day'], envOf(bravo.key), 2, /query\.agent/);
    });
  });

  describe('billing', () => {
    it('shows the balance, tops up through a local checkout and confirms it, lists transactions', async () => {
      const env = envOf(dave.key);
      const zero = await run(['billing', 'balance'], env);
      assert.equal(zero.code, 0, zero.stderr);
      assert.match(zero.stdout, /^credits +0$/m);
      const zeroJson = json<{ balance_credits: number; currency: string }>(
        await run(['billing', 'balance', '--json'], env),
      );
      assert.deepEqual([zeroJson.balance_credits, zeroJson.currency], [0, 'credits']);

      const topup = await run(['billing', 'topup', '--credits', '2500'], env);
      assert.equal(topup.code, 0, topup.stderr);
      const url = /^checkout_url +(\S+)$/m.exec(topup.stdout)?.[1] as string;
      const session = /^session +(\S+)$/m.exec(topup.stdout)?.[1] as string;
      assert.equal(url, `${p.url}/billing/checkout/${session}`);
      assert.match(topup.stdout, /^amount +25\.00 USD$/m);
      assert.match(topup.stderr, new RegExp(`local payments .*\\n +agenthost billing confirm ${session}`));
      // Nothing lands until the checkout is paid.
      assert.equal(
        json<{ balance_credits: number }>(await run(['billing', 'balance', '--json'], env)).balance_credits,
        0,
      );

      const confirmed = await run(['billing', 'confirm', session], env);
      assert.equal(confirmed.code, 0, confirmed.stderr);
      assert.match(confirmed.stdout, /^landed +yes$/m);
      assert.match(confirmed.stdout, /^balance +2500$/m);
      const again = json<{ landed: boolean; balance_credits: number }>(
        await run(['billing', 'confirm', session, '--json'], env),
      );
      assert.deepEqual([again.landed, again.balance_credits], [false, 2500], 'a checkout lands once');

      p.clock.advance(1000);
      const second = json<{
        session_id: string;
        checkout_url: string;
        credits: number;
        amount_cents: number;
      }>(await run(['billing', 'topup', '--credits', '500', '--json'], env));
      assert.deepEqual([second.credits, second.amount_cents], [500, 500]);
      assert.equal(
        json<{ landed: boolean }>(await run(['billing', 'confirm', second.session_id, '--json'], env)).landed,
        true,
      );
      const balance = await run(['billing', 'balance'], env);
      assert.match(balance.stdout, /^credits +3000$/m);
      assert.match(balance.stdout, /^worth +\$30\.00$/m);

      const entries = json<{
        transactions: { type: string; amount: number; reference: string }[];
        total: number;
      }>(await run(['billing', 'transactions', '--json'], env));
      assert.equal(entries.total, 2);
      assert.deepEqual(
        entries.transactions.map((t) => [t.type, t.amount, t.reference]),
        [
          ['topup', 500, `checkout:${second.session_id}`],
          ['topup', 2500, `checkout:${session}`],
        ],
      );
      const table = await run(['billing', 'transactions', '--limit', '1'], env);
      assert.match(table.stdout, /^CREATED +TYPE +CREDITS +AGENT +REFERENCE$/m);
      assert.match(table.stdout, /^\S+ +topup +\+500 +- +checkout:/m);
      assert.equal(table.stdout.trim().split('\n').length, 2);
      assert.match(table.stderr, /2 in all: --all to list every one, or --offset 1/);
      const everyPage = json<{ transactions: unknown[]; total: number }>(
        await run(['billing', 'transactions', '--all', '--limit', '1', '--json'], env),
      );
      assert.equal(everyPage.transactions.length, 2);
      const rest = json<{ transactions: { amount: number }[] }>(
        await run(['billing', 'transactions', '--offset', '1', '--json'], env),
      );
      assert.deepEqual(
        rest.transactions.map((t) => t.amount),
        [2500],
      );

      // Another account's balance and ledger are its own.
      assert.equal(
        json<{ balance_credits: number }>(await run(['billing', 'balance', '--json'], envOf(bravo.key)))
          .balance_credits,
        0,
      );
      assert.equal(
        json<{ total: number }>(await run(['billing', 'transactions', '--json'], envOf(bravo.key))).total,
        0,
      );
    });

    it('refuses bad top-ups and unknown checkouts', async () => {
      const env = envOf(dave.key);
      await fails(['billing', 'topup'], env, 2, /required option '--credits <n>'/);
      await fails(
        ['billing', 'topup', '--credits', '100'],
        env,
        2,
        /option '--credits <n>' argument '100' is invalid. must be a whole number from 500 to 1000000/,
      );
      await fails(['billing', 'topup', '--credits', '12.5'], env, 2);
      await fails(['billing', 'topup', '--credits', 'lots'], env, 2);
      await fails(['billing', 'transactions', '--limit', '501'], env, 2);
      await fails(['billing', 'confirm', 'lcs_doesnotexist0000'], env, 5, /NOT_FOUND/);
      await fails(['billing', 'confirm', 'bad id!'], env, 2, /not a checkout session id/);
    });
  });

  it('needs a key for every command that reads or changes an account (exit 4, with the fix)', async () => {
    const env = { AGENTHOST_URL: p.url, XDG_CONFIG_HOME: join(home, 'none'), AGENTHOST_API_KEY: '' };
    for (const args of [
      ['secrets', 'list'],
      ['secrets', 'set', 'NAME'],
      ['secrets', 'delete', 'NAME'],
      ['keys', 'list'],
      ['keys', 'create'],
      ['keys', 'revoke', 'x'],
      ['workspaces', 'list'],
      ['workspaces', 'create', 'x'],
      ['workspaces', 'members'],
      ['workspaces', 'invite', 'a@example.com'],
      ['workspaces', 'invitations'],
      ['workspaces', 'revoke', 'x'],
      ['invitations', 'list'],
      ['invitations', 'accept', 'x'],
      ['invitations', 'decline', 'x'],
      ['workspaces', 'use', 'x'],
      ['tasks', 'list'],
      ['tasks', 'get', 'x'],
      ['tasks', 'create', 'x'],
      ['tasks', 'update', 'x', '--title', 'y'],
      ['tasks', 'complete', 'x'],
      ['tasks', 'delete', 'x'],
      ['usage'],
      ['billing', 'balance'],
      ['billing', 'topup', '--credits', '500'],
      ['billing', 'transactions'],
    ]) {
      await fails(
        args,
        env,
        4,
        /no API key for http:\/\/127\.0\.0\.1:\d+ \(fix: sign in with `agenthost login`/,
      );
    }
    await fails(['keys', 'list'], envOf('ahk_wrong'), 4, /^agenthost: UNAUTHORIZED: /);
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { verifyWebhook } from '../../sdk/src/webhooks.ts';
import { startAlertReceiver } from '../helpers/alert-receiver.ts';
import { runCliInProcess } from '../helpers/cli-in-process.ts';
import { type CliPlatform, startCliPlatform } from '../helpers/cli-platform.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * The CLI's runs (docs/runs.md): `call --async` starts one and prints its id; `runs list`, `get`,
 * `follow` and `cancel` read, follow and stop it, each failure with its exit code; `runs
 * webhook-secret` makes the secret a run's completion webhook (`call --async --webhook`) is signed with.
 */

describe('the CLI’s runs', () => {
  let platform: CliPlatform | undefined;
  let cli: (args: string[]) => ReturnType<typeof runCliInProcess>;

  before(async () => {
    platform = await startCliPlatform();
    const { bravo, envOf } = platform;
    cli = (args) => runCliInProcess(args, envOf(bravo.key));
  });
  after(() => platform?.close());

  it('starts a call with --async; lists, shows and follows its run to its result', async () => {
    const fake = platform!.fake;
    fake.enqueue({ text: 'Hello, Ada!', chunks: ['Hello, ', 'Ada!'], chunkDelayMs: 300 });
    const started = await cli(['call', 'cli-alpha/greet', '--input', '{"who":"Ada"}', '--async']);
    assert.equal(started.code, 0, started.stderr);
    const id = started.stdout.trim();
    assert.match(id, /^[0-9a-f-]{36}$/);
    assert.match(started.stderr, new RegExp(`agenthost runs follow ${id}`));

    const followed = await cli(['runs', 'follow', id]);
    assert.equal(followed.code, 0, followed.stderr);
    assert.equal(followed.stdout, 'Hello, Ada!\n');

    const got = await cli(['runs', 'get', id, '--json']);
    assert.equal(got.code, 0, got.stderr);
    const run = JSON.parse(got.stdout) as { status: string; result: { body: { data: unknown } } };
    assert.equal(run.status, 'succeeded');
    assert.deepEqual(run.result.body.data, { text: 'Hello, Ada!' });
    const shown = await cli(['runs', 'get', id]);
    assert.match(shown.stdout, /status\s+succeeded/);
    assert.match(shown.stdout, /result\s+200 ok/);

    const listed = await cli(['runs', 'list', '--status', 'succeeded']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`${id}\\s+succeeded\\s+cli-alpha/greet/v2`));

    const again = await cli(['runs', 'follow', id, '--json']);
    const events = again.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: number; event: string });
    assert.deepEqual(
      events.map((e) => e.id),
      events.map((_, i) => i + 1),
    );
    assert.equal(events.at(-1)?.event, 'result');

    const refused = await cli(['runs', 'cancel', id]);
    assert.equal(refused.code, 3, 'an ended run is a conflict');
    assert.match(refused.stderr, /CONFLICT/);
    const missing = await cli(['runs', 'get', '01900000-0000-7000-8000-000000000000']);
    assert.equal(missing.code, 5);
  });

  it('cancels a running run, and follows a failed one to its error and a non-zero exit', async () => {
    const fake = platform!.fake;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    fake.setResponder(async () => {
      await gate;
      return { text: 'late' };
    });
    try {
      const started = await cli(['call', 'cli-alpha/greet', '--input', '{"who":"Bo"}', '--async', '--json']);
      assert.equal(started.code, 0, started.stderr);
      const { run_id } = JSON.parse(started.stdout) as { run_id: string };
      await waitFor('the model request', () => fake.calls.at(-1));
      const cancelled = await cli(['runs', 'cancel', run_id]);
      assert.equal(cancelled.code, 0, cancelled.stderr);
      assert.match(cancelled.stdout, /status\s+cancelled/);
      const followed = await cli(['runs', 'follow', run_id]);
      assert.notEqual(followed.code, 0);
      assert.match(followed.stderr, /TIMEOUT/);
    } finally {
      release();
      fake.setResponder(undefined);
    }
  });

  it('makes the webhook signing secret once; a run started with --webhook is POSTed there signed with it', async () => {
    const receiver = await startAlertReceiver();
    try {
      const refused = await cli([
        'call',
        'cli-alpha/greet',
        '--input',
        '{"who":"Cy"}',
        '--webhook',
        receiver.url,
      ]);
      assert.equal(refused.code, 2, 'a webhook without --async is a usage error');
      assert.match(refused.stderr, /--webhook goes with --async/);

      const made = await cli(['runs', 'webhook-secret', '--json']);
      assert.equal(made.code, 0, made.stderr);
      const { secret } = JSON.parse(made.stdout) as { secret: string };
      assert.match(secret, /^whsec_/);
      assert.match(made.stderr, /shown once/);

      platform!.fake.enqueue({ text: 'Hello, Cy!' });
      const started = await cli([
        'call',
        'cli-alpha/greet',
        '--input',
        '{"who":"Cy"}',
        '--async',
        '--webhook',
        receiver.url,
      ]);
      assert.equal(started.code, 0, started.stderr);
      const id = started.stdout.trim();
      const [delivery] = await receiver.waitFor(1);
      assert.equal(delivery?.body.run_id, id);
      assert.equal(delivery?.body.status, 'succeeded');
      const signature = delivery?.headers['x-platform-signature'] as string;
      // The platform's clock is the test's fixed one: the signature's time is checked against it.
      const signedAt = Date.parse(delivery?.body.ended_at as string);
      assert.ok(
        await verifyWebhook(secret, signature, delivery?.raw ?? '', 300, signedAt),
        'signed with the printed secret',
      );
      assert.equal(await verifyWebhook(`${secret}x`, signature, delivery?.raw ?? '', 300, signedAt), false);

      const shown = await cli(['runs', 'get', id, '--json']);
      assert.doesNotMatch(shown.stdout, /whsec_/);
    } finally {
      await receiver.close();
    }
  });
});

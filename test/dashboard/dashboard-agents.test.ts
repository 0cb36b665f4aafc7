import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { type DashboardHarness, startDashboard } from '../helpers/dashboard.ts';
import type { FakeLlmProviders } from '../helpers/fake-llm-providers.ts';
import { errorOf, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait-for.ts';

/** Waits until `locator` finds `n` elements (the page's CSP forbids waitForFunction's eval). */
const countIs = (locator: Locator, n: number) =>
  waitFor(`${n} of ${locator}`, async () => ((await locator.count()) === n ? true : undefined));

type Account = { key: string; accountId: string; workspaceId: string };
type Agent = { id: string; ref: string; name: string; forked_from: string | null; workspace_id: string };

/** The greeting agent's input: one field of every kind the playground's form builds. */
const GREET_SCHEMA = {
  type: 'object',
  properties: {
    who: { type: 'string', description: 'Who to greet' },
    times: { type: 'integer', minimum: 1 },
    loud: { type: 'boolean' },
    tone: { enum: ['warm', 'dry'] },
    extra: { type: 'object', description: 'Anything else' },
  },
  required: ['who'],
  additionalProperties: false,
};

/**
 * The Agents and Directory pages in Chromium, over data this test makes through the API: the
 * agents list and a version's page, the playground (form, raw JSON, files, a refused input)
 * calling prompt agents through the fake model, the logs, delete after the delete-check, and the
 * directory's search and fork, across two accounts.
 */
describe('dashboard: agents, playground and directory', () => {
  let harness: DashboardHarness;
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let user: Account;
  let other: Account;
  const agents: Record<string, Agent> = {};

  const publish = async (key: string, manifest: Record<string, unknown>) => {
    const res = await p.request<Agent>('POST', '/agents?allow_no_secrets=true', { key, body: manifest });
    assert.equal(res.status, 201, res.text);
    return res.body;
  };
  const prompt = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    description: `The ${name} agent.`,
    supported_providers: ['openai'],
    default_models: { openai: 'gpt-test-mini' },
    prompt_template: 'Say hello to {{who}}',
    ...extra,
  });
  /** No sideways scroll at a phone's width; if there is, the message names what sticks out. */
  const fitsPhone = async (page: Page) => {
    const layout = (await page.evaluate(`({
      scrollWidth: document.documentElement.scrollWidth,
      width: window.innerWidth,
      wide: [...document.querySelectorAll('main *')]
        .filter((e) => e.getBoundingClientRect().right > window.innerWidth)
        .slice(0, 5)
        .map((e) => e.tagName + '.' + e.className),
    })`)) as { scrollWidth: number; width: number; wide: string[] };
    assert.ok(
      layout.scrollWidth <= layout.width,
      `page is ${layout.scrollWidth}px wide at ${layout.width}px: ${layout.wide.join(', ')}`,
    );
  };

  before(async () => {
    harness = await startDashboard();
    ({ p, fake } = harness);
    user = await p.createAccount('agentco', 'pro');
    other = await p.createAccount('elsewhere', 'pro');
    agents.greetV1 = await publish(user.key, prompt('greet', { input_schema: GREET_SCHEMA }));
    agents.greetV2 = await publish(
      user.key,
      prompt('greet', { input_schema: GREET_SCHEMA, is_public: true, tags: ['hello'] }),
    );
    agents.paid = await publish(user.key, prompt('paid-one', { is_public: true, price_credits: 5 }));
    agents.reader = await publish(
      user.key,
      prompt('reader', { prompt_template: 'Summarise {{files}}', description: 'Reads files.' }),
    );
    agents.doomed = await publish(user.key, prompt('doomed'));
    // Another account's agents: one public and source-available, one private.
    agents.weather = await publish(
      other.key,
      prompt('weather', {
        description: 'Forecasts the weather.',
        is_public: true,
        allow_local_download: true,
        tags: ['forecast'],
      }),
    );
    agents.secret = await publish(other.key, prompt('secret-plan', { description: 'Private plans.' }));
  });

  after(async () => {
    await harness?.close();
  });

  it('lists the workspace’s agents with their versions, type, engine, visibility and price', async () => {
    const page = await harness.signedIn(user.key, '#/agents');
    const table = page.getByTestId('agent-list');
    await table.waitFor();
    const rows = await Promise.all(
      (await table.locator('tbody tr').all()).map(async (row) =>
        (await row.locator('th, td').allTextContents()).join(' ').replace(/\s+/g, ' ').trim(),
      ),
    );
    const at = (prefix: string) => rows.findIndex((r) => r.startsWith(prefix));
    // Grouped by agent, newest version first.
    const greet = at('agentco/greet');
    assert.ok(greet >= 0, rows.join('\n'));
    assert.match(rows[greet + 1] ?? '', /^v2 prompt direct_llm public free active/);
    assert.match(rows[greet + 2] ?? '', /^v1 prompt direct_llm private free deprecated/);
    assert.match(rows[at('agentco/paid-one') + 1] ?? '', /^v1 prompt direct_llm public 5 credits a call/);
    assert.ok(at('agentco/reader') >= 0 && at('agentco/doomed') >= 0);
    // Only this account's workspace: the other account's agents are not listed.
    assert.ok(!rows.some((r) => r.includes('elsewhere/')), rows.join('\n'));
    assert.match((await page.locator('.load-more').textContent()) ?? '', /5 of 5 shown/);

    // A version's page: its facts, schemas and manifest, as the API has them.
    await page.getByRole('link', { name: 'agentco/greet v2' }).click();
    await page.getByRole('heading', { name: 'agentco/greet v2' }).waitFor();
    const facts = (await page.getByTestId('agent-facts').textContent()) ?? '';
    assert.match(facts, /Typeprompt.*Enginedirect_llm.*Run modeon_demand.*Visibilitypublic.*Pricefree/s);
    const schema = JSON.parse((await page.getByTestId('input-schema').textContent()) ?? '');
    assert.deepEqual(schema, GREET_SCHEMA);
    const manifest = JSON.parse((await page.getByTestId('manifest').textContent()) ?? '');
    assert.equal(manifest.prompt_template, 'Say hello to {{who}}');
    assert.deepEqual(manifest.tags, ['hello']);
    assert.equal('workspace_id' in manifest, false, 'the version’s own fields are not the manifest');
    await page.getByRole('navigation', { name: 'Versions' }).getByRole('link', { name: 'v1' }).waitFor();
    await page.context().close();
  });

  it('calls the agent from a form built from its input_schema, then as raw JSON, and shows the answer', async () => {
    const page = await harness.signedIn(user.key, `#/agents/${agents.greetV2?.id}`);
    // The form: a field per property, labelled by name, required marked, descriptions as hints.
    const who = page.getByLabel('who');
    await who.waitFor();
    assert.equal(await who.getAttribute('aria-required'), 'true');
    assert.match((await page.getByText('(required)').allTextContents()).join(), /required/);
    const hint = await who.getAttribute('aria-describedby');
    assert.equal(await page.locator(`#${hint}`).textContent(), 'Who to greet');
    assert.equal(await page.getByLabel('times').getAttribute('type'), 'number');
    await who.fill('Ada');
    await page.getByLabel('times').fill('2');
    await page.getByLabel('loud').check();
    await page.getByLabel('tone').selectOption('dry');
    await page.getByLabel('extra').fill('{"mood": "sunny"}');

    fake.enqueue({ text: 'Hello, Ada!' });
    await page.getByRole('button', { name: 'Call' }).click();
    const result = page.getByTestId('call-result');
    await result.waitFor();
    // The API checked the input against the schema: the number, boolean and object went typed.
    const envelope = JSON.parse((await page.getByTestId('call-envelope').textContent()) ?? '');
    assert.deepEqual(Object.keys(envelope), ['data', 'warnings', 'metadata']);
    assert.match(JSON.stringify(envelope.data), /Hello, Ada!/);
    assert.equal(envelope.metadata.version, 'v2');
    assert.match(fake.calls.at(-1)?.prompt ?? '', /Say hello to Ada/);
    assert.match(
      (await result.textContent()) ?? '',
      /Served by v2 in [\d.]+ m?s on the platform, [\d.]+ m?s round trip/,
    );
    const headers = (await page.getByTestId('call-headers').textContent()) ?? '';
    assert.ok(headers.includes(`X-Request-Id${envelope.metadata.request_id}`), headers);
    const usage = await p.request<{ quota: { limit: number; remaining: number } }>('GET', '/usage', {
      key: user.key,
    });
    assert.ok(headers.includes(`X-RateLimit-Limit${usage.body.quota.limit}`), headers);
    assert.ok(headers.includes(`X-RateLimit-Remaining${usage.body.quota.remaining}`), headers);
    assert.match(headers, /X-RateLimit-Reset\d+/);

    // Raw JSON mode starts from what the form held, and sends what is written.
    await page.getByLabel('Raw JSON').check();
    const json = page.getByLabel('Input (JSON object)');
    assert.deepEqual(JSON.parse(await json.inputValue()), {
      who: 'Ada',
      times: 2,
      loud: true,
      tone: 'dry',
      extra: { mood: 'sunny' },
    });
    await json.fill('{"who": "Bob"}');
    fake.enqueue({ text: 'Hello, Bob!' });
    await page.getByRole('button', { name: 'Call' }).click();
    await page
      .getByTestId('call-envelope')
      .getByText(/Hello, Bob!/)
      .waitFor();
    assert.match(fake.calls.at(-1)?.prompt ?? '', /Say hello to Bob/);
    // And back: the form shows what the JSON said.
    await page.getByLabel('Form', { exact: true }).check();
    assert.equal(await page.getByLabel('who').inputValue(), 'Bob');
    assert.equal(await page.getByLabel('times').inputValue(), '');

    // A refused input: the API's code and message, as it gave them.
    await page.getByLabel('Raw JSON').check();
    await page.getByLabel('Input (JSON object)').fill('{"who": 5}');
    const before = fake.calls.length;
    await page.getByRole('button', { name: 'Call' }).click();
    const error = page.getByTestId('call-error');
    await error.waitFor();
    const direct = errorOf(
      await p.request('POST', '/agentco/greet/v2/run', { key: user.key, body: { who: 5 } }),
    );
    assert.equal(direct.code, 'INVALID_INPUT');
    const shown = (await error.textContent()) ?? '';
    assert.match(shown, /INVALID_INPUT/);
    assert.ok(shown.includes(direct.message), shown);
    assert.match(shown, /HTTP 400, not retryable/);
    assert.equal(fake.calls.length, before, 'a refused input never reaches the model');

    // JSON that is not an object is caught before sending.
    await page.getByLabel('Input (JSON object)').fill('[1, 2]');
    await page.getByRole('button', { name: 'Call' }).click();
    await page.getByText('The input must be a JSON object').waitFor();

    // A model that fails: LLM_ERROR is retryable, but one click sends one call (the page does not
    // retry behind the user's back: each try is a model call, perhaps a paid one).
    await page.getByLabel('Input (JSON object)').fill('{"who": "Dee"}');
    fake.enqueue({ status: 500, errorMessage: 'upstream is down' });
    const beforeFailure = fake.calls.length;
    await page.getByRole('button', { name: 'Call' }).click();
    await page.getByTestId('call-error').getByText('LLM_ERROR').waitFor();
    // No wait needed: the SDK's client retries inside its fetch, before the page gets an answer, and
    // a retry would have got the fake's default answer (a result, not this error). So once the
    // error shows, every call the click made has reached the model.
    assert.equal(fake.calls.length, beforeFailure + 1, 'one click, one model call');
    await page.context().close();
  });

  it('shows the answer as the model writes it, before the envelope', async () => {
    const page = await harness.signedIn(user.key, `#/agents/${agents.greetV2?.id}`);
    await page.getByLabel('who').fill('Ada');
    fake.enqueue({ text: 'Hello there, Ada!', chunks: ['Hello ', 'there, ', 'Ada!'], chunkDelayMs: 700 });
    await page.getByRole('button', { name: 'Call' }).click();
    // The first pieces show while the model is still writing: no envelope yet.
    const live = page.getByTestId('call-live');
    await live.getByText('Hello there,').waitFor();
    assert.equal(await page.getByTestId('call-result').count(), 0, 'the envelope comes at the end');
    await page.getByTestId('call-result').waitFor();
    const envelope = JSON.parse((await page.getByTestId('call-envelope').textContent()) ?? '');
    assert.deepEqual(envelope.data, { text: 'Hello there, Ada!' });
    assert.equal(fake.calls.at(-1)?.body.stream, true, 'the model was asked to stream');
    await page.context().close();
  });

  it('sends files as multipart/form-data', async () => {
    const page = await harness.signedIn(user.key, `#/agents/${agents.reader?.id}`);
    // No input_schema: raw JSON is the way in.
    await page.getByText('Its input_schema names no properties').waitFor();
    assert.equal(await page.getByLabel('Form', { exact: true }).isDisabled(), true);
    await page.getByLabel('Files (optional)').setInputFiles({
      name: 'note.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from('The quarterly numbers are up.'),
    });
    fake.enqueue({ text: 'Numbers are up.' });
    await page.getByRole('button', { name: 'Call' }).click();
    await page
      .getByTestId('call-envelope')
      .getByText(/Numbers are up\./)
      .waitFor();
    const sent = fake.calls.at(-1)?.prompt ?? '';
    assert.match(sent, /The quarterly numbers are up\./);
    assert.match(sent, /note\.txt/);
    await page.context().close();
  });

  it('shows the version’s logs, newest first, filtered by level', async () => {
    const logs = await p.request<{ logs: { message: string; level: string; request_id: string }[] }>(
      'GET',
      `/agents/${agents.greetV2?.id}/logs`,
      { key: user.key },
    );
    const succeeded = logs.body.logs.filter((l) => l.level === 'info');
    const failed = logs.body.logs.filter((l) => l.level === 'error');
    assert.ok(succeeded.length >= 2 && failed.length >= 1, JSON.stringify(logs.body));

    const page = await harness.signedIn(user.key, `#/agents/${agents.greetV2?.id}`);
    const table = page.getByTestId('agent-logs');
    await table.waitFor();
    const messages = await table.locator('tbody tr td.log-message').allTextContents();
    assert.deepEqual(
      messages,
      logs.body.logs.map((l) => l.message),
    );
    await page.getByLabel('Level').selectOption('error');
    await countIs(table.locator('tbody tr'), failed.length);
    const errors = await table.locator('tbody tr td.log-message').allTextContents();
    assert.deepEqual(
      errors,
      failed.map((l) => l.message),
    );
    // The playground test's refused input and model failure (the test's clock stands still, so
    // their order is the API's for equal timestamps, checked above).
    assert.ok(
      errors.some((m) => /failed with LLM_ERROR/.test(m)),
      errors.join('\n'),
    );
    assert.ok(
      errors.some((m) => /failed with INVALID_INPUT/.test(m)),
      errors.join('\n'),
    );

    // A call from the playground shows up once it is answered.
    await page.getByLabel('Level').selectOption('info');
    await page.getByLabel('who').fill('Cy');
    fake.enqueue({ text: 'Hello, Cy!' });
    await page.getByRole('button', { name: 'Call' }).click();
    const envelope = page.getByTestId('call-envelope');
    await envelope.getByText(/Hello, Cy!/).waitFor();
    const requestId = JSON.parse((await envelope.textContent()) ?? '').metadata.request_id as string;
    await table.getByText(`call ${requestId} succeeded`).waitFor();
    await page.context().close();
  });

  it('shows what the delete-check says before deleting, and deletes once confirmed', async () => {
    const schedule = await p.request<{ id: string }>('POST', `/workspaces/${user.workspaceId}/schedules`, {
      key: user.key,
      body: { agent: 'agentco/doomed', cron_expression: '0 9 * * *', input_data: { who: 'cron' } },
    });
    assert.equal(schedule.status, 201, schedule.text);
    const check = await p.request<{ schedules: string[]; confirmation: string }>(
      'GET',
      `/agents/${agents.doomed?.id}/delete-check`,
      { key: user.key },
    );
    assert.deepEqual([check.body.schedules, check.body.confirmation], [[schedule.body.id], 'force=true']);

    const page = await harness.signedIn(user.key, `#/agents/${agents.doomed?.id}`);
    await page.getByRole('button', { name: 'Delete this version' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete agentco/doomed/v1?' });
    await dialog.waitFor();
    const said = (await dialog.getByTestId('delete-check').textContent()) ?? '';
    assert.ok(said.includes(`Run by 1 schedule: ${schedule.body.id}`), said);
    assert.match(said, /needs force/);
    assert.match(said, /purged after 30 days/);
    // Cancel leaves it be.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await p.request('GET', `/agents/${agents.doomed?.id}`, { key: user.key })).status, 200);

    await page.getByRole('button', { name: 'Delete this version' }).click();
    await dialog.getByRole('button', { name: 'Delete anyway' }).click();
    await page.getByRole('heading', { name: 'Agents', exact: true }).waitFor();
    const gone = await p.request('GET', `/agents/${agents.doomed?.id}`, { key: user.key });
    assert.equal(errorOf(gone).code, 'NOT_FOUND');
    await page.getByTestId('agent-list').waitFor();
    assert.equal(await page.getByTestId('agent-list').getByText('agentco/doomed').count(), 0);
    await page.context().close();
  });

  it('finds another account’s public agent in the directory and forks it into the chosen workspace', async () => {
    const page = await harness.signedIn(user.key, '#/directory');
    const list = page.getByTestId('directory-list');
    await list.waitFor();
    await page.getByLabel('Search', { exact: true }).fill('WEATH');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await countIs(list.locator('> li'), 1);
    assert.match(
      (await list.textContent()) ?? '',
      /elsewhere\/weather.*Forecasts the weather\..*source available/s,
    );

    // By tag: a tag button filters by it.
    await page.getByLabel('Search', { exact: true }).fill('');
    await page.getByLabel('Tag', { exact: true }).fill('forecast');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('button', { name: 'Only agents tagged forecast' }).waitFor();
    assert.equal(await list.locator('> li').count(), 1);

    await list.getByRole('link', { name: 'elsewhere/weather' }).click();
    await page.getByRole('heading', { name: 'elsewhere/weather v1' }).waitFor();
    await page.getByLabel('New name (optional)').fill('my-weather');
    assert.equal(await page.getByLabel('Into workspace').inputValue(), user.workspaceId);
    await page.getByRole('button', { name: 'Fork' }).click();
    const forked = page.getByTestId('fork-result');
    await forked.waitFor();
    assert.match((await forked.textContent()) ?? '', /Forked as agentco\/my-weather\/v1/);

    const mine = await p.request<{ agents: Agent[] }>(
      'GET',
      `/agents?workspace_id=${user.workspaceId}&name=my-weather`,
      { key: user.key },
    );
    assert.equal(mine.body.agents.length, 1);
    assert.equal(mine.body.agents[0]?.forked_from, agents.weather?.ref);
    await forked.getByRole('link').click();
    await page.getByRole('heading', { name: 'agentco/my-weather v1' }).waitFor();
    await page.context().close();
  });

  it('never shows another account’s private agent in the directory', async () => {
    const page = await harness.signedIn(user.key, '#/directory');
    const list = page.getByTestId('directory-list');
    await list.waitFor();
    const all = (await list.textContent()) ?? '';
    assert.ok(all.includes('elsewhere/weather') && all.includes('agentco/greet'), all);
    assert.ok(!all.includes('secret-plan') && !all.includes('Private plans'), all);
    await page.getByLabel('Search', { exact: true }).fill('secret-plan');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByText('No public agent matches.').waitFor();
    // Nor by its address.
    await page.goto(`${p.url}/#/directory/elsewhere/secret-plan/v1`);
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? '', /NOT_FOUND/);
    assert.ok(!(await page.content()).includes('Private plans'));
    await page.context().close();
  });

  it('fits a phone’s width in dark mode', async () => {
    const phone = { viewport: { width: 375, height: 740 }, colorScheme: 'dark' as const };
    const page = await harness.signedIn(user.key, '#/agents', phone);
    await page.getByTestId('agent-list').waitFor();
    await fitsPhone(page);
    await page.goto(`${p.url}/#/agents/${agents.greetV2?.id}`);
    await page.getByTestId('agent-logs').waitFor();
    await fitsPhone(page);
    await page.goto(`${p.url}/#/directory`);
    await page.getByTestId('directory-list').waitFor();
    await fitsPhone(page);
    await page.context().close();
  });
});

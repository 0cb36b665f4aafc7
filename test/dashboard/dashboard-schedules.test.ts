import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Cron } from 'croner';
import type { Page } from 'playwright-core';
import { type DashboardHarness, startDashboard } from '../helpers/dashboard.ts';
import type { FakeLlmProviders } from '../helpers/fake-llm-providers.ts';
import { errorOf, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait-for.ts';

type ScheduleRecord = {
  id: string;
  type: string;
  cron_expression: string | null;
  timezone: string;
  input_data: Record<string, unknown>;
  enabled: boolean;
  max_consecutive_failures: number;
  next_run_at: string | null;
};

/**
 * The Schedules page in Chromium against the local platform: a schedule created, triggered and
 * edited in the page (its run through the fake model), its next five runs as croner computes them
 * in the chosen zone, a webhook schedule's URL shown once, enable and disable, a confirmed delete,
 * the API's errors, a phone's width. Every change is checked through the API.
 */
describe('dashboard: schedules', () => {
  let harness: DashboardHarness;
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let user: { key: string; accountId: string; workspaceId: string };
  const base = () => `/workspaces/${user.workspaceId}/schedules`;
  const schedulesOf = async () =>
    (await p.request<{ schedules: ScheduleRecord[] }>('GET', base(), { key: user.key })).body.schedules;
  const get = (id: string) => p.request<ScheduleRecord>('GET', `${base()}/${id}`, { key: user.key });
  let cronId = '';

  before(async () => {
    harness = await startDashboard();
    ({ p, fake } = harness);
    user = await p.createAccount('sched', 'pro');
    const published = await p.request('POST', '/agents?allow_no_secrets=true', {
      key: user.key,
      body: {
        name: 'greet',
        description: 'Greets someone.',
        supported_providers: ['openai'],
        default_models: { openai: 'gpt-test-mini' },
        prompt_template: 'Say hello to {{who}}',
      },
    });
    assert.equal(published.status, 201, published.text);
  });

  after(async () => {
    await harness?.close();
  });

  /** The run times the preview shows, as the ISO instants of its <time> elements. */
  const previewTimes = async (page: Page) => {
    const times: string[] = [];
    for (const t of await page.getByTestId('cron-next-runs').locator('time').all())
      times.push((await t.getAttribute('datetime')) ?? '');
    return times;
  };

  it('creates a cron schedule in the page with its next five runs in the chosen zone, triggers it, and its run appears', async () => {
    const page = await harness.signedIn(user.key, '#/schedules');
    await page.getByRole('heading', { name: 'Schedules' }).waitFor();
    await page.getByText('No schedules in this workspace.').waitFor();

    await page.getByRole('button', { name: 'New schedule' }).click();
    await page.getByLabel(/^Agent \(/).fill('sched/greet');
    const cron = page.getByLabel('Cron expression', { exact: false });
    // A refused expression says why, in the API's words.
    await cron.fill('61 9 * * 1-5');
    await page.getByText('minute field "61"').waitFor();
    await cron.fill('30 9 * * 1-5');
    await page.getByLabel('Time zone').selectOption('America/New_York');
    await page.getByText('Next 5 runs (America/New_York)').waitFor();
    const shown = await waitFor('five run times in New York', async () => {
      const times = await previewTimes(page);
      const expected = new Cron('30 9 * * 1-5', { timezone: 'America/New_York', mode: '5-part' })
        .nextRuns(5)
        .map((d) => d.toISOString());
      return times.length === 5 && times.join() === expected.join() ? times : undefined;
    });
    // Written in the zone's own time: 09:30 there, whatever the browser's zone.
    const texts = await page.getByTestId('cron-next-runs').locator('time').allTextContents();
    for (const t of texts) assert.match(t, /09:30/);

    await page.getByLabel('Input data', { exact: false }).fill('{"who": "the page"}');
    await page.getByLabel('Disable after', { exact: false }).fill('5');
    await page.getByRole('button', { name: 'Create schedule' }).click();
    const created = page.getByTestId('schedule-created');
    await created.waitFor();
    assert.equal(await page.getByTestId('webhook-url').count(), 0, 'a cron schedule has no webhook URL');
    await page.getByTestId('schedules').getByRole('link', { name: 'sched/greet@v1' }).waitFor();

    const [s] = await schedulesOf();
    assert.ok(s);
    cronId = s.id;
    assert.equal(s.type, 'cron');
    assert.equal(s.cron_expression, '30 9 * * 1-5');
    assert.equal(s.timezone, 'America/New_York');
    assert.deepEqual(s.input_data, { who: 'the page' });
    assert.equal(s.max_consecutive_failures, 5);
    assert.equal(s.next_run_at, shown[0], 'the platform’s next run is the first one shown');
    const row = (await page.getByTestId('schedules').locator('tbody tr').first().textContent()) ?? '';
    assert.match(row, /cron.*30 9 \* \* 1-5.*America\/New_York.*0 of 5.*enabled/s);

    // Its page: trigger now, through the fake model; the run is in the history.
    await page.getByTestId('schedules').getByRole('link', { name: 'sched/greet@v1' }).click();
    await page.getByRole('heading', { name: /Schedule: sched\/greet/ }).waitFor();
    await page.getByText('No runs yet.').waitFor();
    fake.enqueue({ text: 'hello from the page' });
    await page.getByRole('button', { name: 'Trigger now' }).click();
    const result = page.getByTestId('trigger-result');
    await result.waitFor();
    assert.match((await result.textContent()) ?? '', /success.*hello from the page/s);
    const runs = page.getByTestId('schedule-runs');
    await runs.waitFor();
    const runRow = (await runs.locator('tbody tr').first().textContent()) ?? '';
    assert.match(runRow, /manual.*success.*v1.*hello from the page/s);
    const apiRuns = await p.request<{ runs: { trigger: string; status: string }[] }>(
      'GET',
      `${base()}/${cronId}/runs`,
      { key: user.key },
    );
    assert.deepEqual(
      apiRuns.body.runs.map((r) => [r.trigger, r.status]),
      [['manual', 'success']],
    );
    // The prompt got the schedule's input.
    assert.match(JSON.stringify(fake.calls.at(-1)), /the page/);

    // The status filter asks the API for failed runs: none.
    await page.getByLabel('Status').selectOption('failed');
    await page.getByText('No failed runs yet.').waitFor();
    await page.getByLabel('Status').selectOption('');
    await runs.waitFor();
    await page.getByTestId('schedule-events').getByText('created').waitFor();
    await page.context().close();
  });

  it('disables and enables in the page, and edits the timetable (checked through the API)', async () => {
    const page = await harness.signedIn(user.key, `#/schedules/${cronId}`);
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('button', { name: 'Enable' }).waitFor();
    assert.equal((await get(cronId)).body.enabled, false);
    assert.match((await page.getByTestId('schedule-facts').textContent()) ?? '', /Statedisabled/);
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('button', { name: 'Disable' }).waitFor();
    assert.equal((await get(cronId)).body.enabled, true);

    await page.getByText('Edit the schedule').click();
    const form = page.getByRole('form', { name: 'Edit schedule' });
    await form.getByLabel('Cron expression', { exact: false }).fill('0 8 * * *');
    await form.getByLabel('Time zone').selectOption('Europe/Berlin');
    await waitFor('the preview in Berlin', async () => {
      const expected = new Cron('0 8 * * *', { timezone: 'Europe/Berlin', mode: '5-part' })
        .nextRuns(5)
        .map((d) => d.toISOString());
      return (await previewTimes(page)).join() === expected.join() ? true : undefined;
    });
    await form.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved.').waitFor();
    const changed = (await get(cronId)).body;
    assert.equal(changed.cron_expression, '0 8 * * *');
    assert.equal(changed.timezone, 'Europe/Berlin');
    assert.deepEqual(changed.input_data, { who: 'the page' }, 'what was not changed is not sent');
    const events = page.getByTestId('schedule-events');
    await events.getByText('enabled', { exact: true }).waitFor();
    await events.getByText('disabled', { exact: true }).waitFor();
    await events.getByText('updated', { exact: true }).waitFor();
    await page.context().close();
  });

  it('shows a webhook schedule’s URL once, with a copy button; the URL runs the agent; a reload never shows it again', async () => {
    const page = await harness.signedIn(user.key, '#/schedules', {
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    await page.getByRole('button', { name: 'New schedule' }).click();
    await page.getByLabel(/^Agent \(/).fill('sched/greet');
    await page.getByLabel('when its webhook URL is called').check();
    assert.equal(await page.getByLabel('Cron expression', { exact: false }).count(), 0);
    await page.getByLabel('Input data', { exact: false }).fill('{"who": "a webhook"}');
    await page.getByRole('button', { name: 'Create schedule' }).click();
    const shownUrl = page.getByTestId('webhook-url');
    await shownUrl.waitFor();
    const url = (await shownUrl.textContent()) ?? '';
    assert.ok(url.startsWith(`${p.url}/webhooks/`), url);
    const secret = url.split('/').at(-1) ?? '';
    assert.match(secret, /^whs_/);
    await page.getByRole('button', { name: 'Copy the webhook URL' }).click();
    await page.getByText('Copied.').waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), url);

    // The URL works (loopback: the platform under test).
    fake.enqueue({ text: 'hello webhook' });
    const hook = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    const run = (await hook.json()) as { status: string };
    assert.equal(hook.status, 200);
    assert.equal(run.status, 'success');

    const webhook = (await schedulesOf()).find((s) => s.type === 'webhook');
    assert.ok(webhook);
    await page.reload();
    await page.getByTestId('schedules').waitFor();
    assert.equal(await page.getByTestId('webhook-url').count(), 0);
    assert.ok(!(await page.content()).includes(secret), 'the secret is not in the list after a reload');
    await page.goto(`${p.url}/#/schedules/${webhook.id}`);
    await page.getByTestId('schedule-runs').getByText('webhook', { exact: true }).waitFor();
    assert.match((await page.getByTestId('schedule-facts').textContent()) ?? '', /shown once, at creation/);
    assert.ok(!(await page.content()).includes(secret), 'nor on its own page');
    await page.context().close();
  });

  it('deletes only after confirmation', async () => {
    const webhook = (await schedulesOf()).find((s) => s.type === 'webhook');
    assert.ok(webhook);
    const page = await harness.signedIn(user.key, `#/schedules/${webhook.id}`);
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this schedule?' });
    await dialog.waitFor();
    assert.match((await dialog.textContent()) ?? '', /webhook URL stops working/);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await get(webhook.id)).status, 200, 'cancel deletes nothing');

    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await dialog.getByRole('button', { name: 'Delete the schedule' }).click();
    await page.waitForURL(/#\/schedules$/);
    await page.getByTestId('schedules').waitFor();
    assert.equal(errorOf(await get(webhook.id)).code, 'NOT_FOUND');
    assert.equal((await schedulesOf()).length, 1);
    await page.context().close();
  });

  it('shows the API’s error for a schedule that is not there, and fits a phone in the dark', async () => {
    const page = await harness.signedIn(user.key, '#/schedules/00000000-0000-4000-8000-000000000000');
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? '', /NOT_FOUND/);
    await page.context().close();

    const phone = await harness.signedIn(user.key, `#/schedules/${cronId}`, {
      viewport: { width: 375, height: 740 },
      colorScheme: 'dark',
    });
    await phone.getByTestId('schedule-runs').waitFor();
    await phone.getByText('Edit the schedule').click();
    await phone.getByTestId('cron-next-runs').locator('time').first().waitFor();
    const layout = (await phone.evaluate(
      '({ scrollWidth: document.documentElement.scrollWidth, width: window.innerWidth })',
    )) as { scrollWidth: number; width: number };
    assert.ok(
      layout.scrollWidth <= layout.width,
      `page is ${layout.scrollWidth}px wide at ${layout.width}px`,
    );
    await phone.goto(`${p.url}/#/schedules`);
    await phone.getByTestId('schedules').waitFor();
    const list = (await phone.evaluate(
      '({ scrollWidth: document.documentElement.scrollWidth, width: window.innerWidth })',
    )) as { scrollWidth: number; width: number };
    assert.ok(list.scrollWidth <= list.width, `list is ${list.scrollWidth}px wide at ${list.width}px`);
    await phone.context().close();
  });
});

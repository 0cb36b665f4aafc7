import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import AxeBuilder from '@axe-core/playwright';
import type { Locator, Page } from 'playwright-core';
import type { TraceView } from '../../functions/core/traces/trace-schemas.ts';
import { type DashboardHarness, startDashboard } from '../helpers/dashboard.ts';
import type { FakeLlmProviders } from '../helpers/fake-llm-providers.ts';
import type { TestPlatform } from '../helpers/platform.ts';

type Account = { key: string; accountId: string; workspaceId: string };
type Span = TraceView['spans'][number];

/** What the page drew for one span: its row's place in the tree and its bar's geometry. */
interface DrawnRow {
  spanId: string;
  depth: number;
  name: string;
  /** The cells' text: the timeline's text alternative, the duration, the status, the facts. */
  timeline: string;
  duration: string;
  status: string;
  facts: string;
  /** The name's button's left edge: how far the row is indented. */
  nameX: number;
  bar: { x: number; width: number };
  track: { x: number; width: number };
}

const OUTLINE = 'outline (another author’s agent: timing and outcome only)';
/** WCAG 2.1 A and AA, as dashboard-a11y.test.ts checks every page the navigation links to. */
const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

/**
 * A call's trace in Chromium, over calls made in the page: alpha's managed
 * loop runs a command in its sandbox and calls beta's public agent (shown in outline), and the
 * playground's "View trace" opens the waterfall, whose rows, nesting and bars are checked against
 * the API's answer for the same call; a log line's Trace link opens the same page; a failed call's
 * error links to its trace with the failure marked; a stranger and an unknown request id get the
 * not-found state; the page passes axe in both schemes and fits a phone.
 */
describe('dashboard: call traces', { timeout: 300_000 }, () => {
  let harness: DashboardHarness;
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let alpha: Account;
  let beta: Account;
  const ids: Record<string, string> = {};
  /** The loop's call made in the playground: its trace page's hash, and the API's answer. */
  let loop: { requestId: string; hash: string; trace: TraceView };

  const publish = async (key: string, body: Record<string, unknown>) => {
    const res = await p.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', { key, body });
    assert.equal(res.status, 201, res.text);
    ids[String(body.name)] = res.body.id;
  };
  const traceOf = async (key: string, agentId: string, requestId: string) => {
    const res = await p.request<TraceView>('GET', `/agents/${agentId}/calls/${requestId}/trace`, { key });
    assert.equal(res.status, 200, res.text);
    return res.body;
  };

  /** The waterfall's rows as drawn, once `n` of them show. */
  const drawnRows = async (page: Page, n: number): Promise<DrawnRow[]> => {
    const rows = page.getByTestId('trace-waterfall').locator('tbody tr.span-row');
    await rows.nth(n - 1).waitFor();
    assert.equal(await rows.count(), n);
    const box = async (l: Locator) => {
      const b = await l.boundingBox();
      assert.ok(b, `${l} has a box`);
      return b;
    };
    const drawn: DrawnRow[] = [];
    for (const row of await rows.all()) {
      const [, timeline, duration, status, facts] = (await row.locator('th, td').allTextContents()).map((t) =>
        t.replace(/\s+/g, ' ').trim(),
      );
      drawn.push({
        spanId: (await row.getAttribute('data-span-id')) ?? '',
        depth: Number(await row.getAttribute('data-depth')),
        name: (await row.locator('.span-label').textContent()) ?? '',
        timeline: timeline ?? '',
        duration: duration ?? '',
        status: status ?? '',
        facts: facts ?? '',
        nameX: (await box(row.getByRole('button'))).x,
        bar: await box(row.locator('.span-bar')),
        track: await box(row.locator('.span-track')),
      });
    }
    return drawn;
  };

  before(async () => {
    harness = await startDashboard((f) => ({
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: f.baseUrls.anthropic,
    }));
    ({ p, fake } = harness);
    alpha = await p.createAccount('alpha', 'pro');
    beta = await p.createAccount('beta', 'pro');
    // Beta's public prompt agent, which alpha's loop calls: another author's, so shown in outline.
    await publish(beta.key, {
      name: 'middle',
      description: 'Answers.',
      is_public: true,
      supported_providers: ['openai'],
      prompt_template: 'Answer.',
    });
    // Alpha's managed loop: a command in its sandbox, then beta's agent through its custom tool.
    await publish(alpha.key, {
      name: 'planner',
      type: 'agent',
      description: 'Plans.',
      supported_providers: ['anthropic'],
      prompt_template: 'Plan.',
      custom_tools: [{ name: 'call_dep', description: 'calls beta/middle', command: 'call beta/middle' }],
      manifest: {
        manifest_version: 1,
        dependencies: [{ id: 'beta/middle', version: 'v1' }],
        max_hops: 2,
        timeout_ms: 60_000,
        orchestration_mode: 'flexible',
      },
    });
    await publish(alpha.key, {
      name: 'greet',
      description: 'Greets.',
      supported_providers: ['openai'],
      prompt_template: 'Say hello.',
    });
    // The loop's turns, read from what it has done so far (a command that takes 300 ms, so the
    // sandbox's bars are long enough to measure, then the call, then its result); beta's model
    // answers as a model does.
    fake.setResponder((call) => {
      if (call.provider === 'openai') return { text: 'middle says hi' };
      const done = JSON.stringify(call.body?.messages ?? []);
      if (done.includes('"name":"call_dep"'))
        return { toolCalls: [{ name: 'submit_result', input: { planned: true } }] };
      if (done.includes('"name":"bash"')) return { toolCalls: [{ name: 'call_dep', input: {} }] };
      return { toolCalls: [{ name: 'bash', input: { command: 'sleep 0.3' } }] };
    });
  });

  after(async () => {
    await harness?.close();
  });

  it('draws the call made in the playground as a waterfall: its tree, bars, facts and attributes', async () => {
    const page = await harness.signedIn(alpha.key, `#/agents/${ids.planner}`);
    // No input_schema: the playground starts in raw JSON, with {}.
    await page.getByText('Its input_schema names no properties').waitFor();
    await page.getByRole('button', { name: 'Call' }).click();
    const envelope = page.getByTestId('call-envelope');
    await envelope.waitFor();
    const answer = JSON.parse((await envelope.textContent()) ?? '') as {
      data: unknown;
      metadata: { request_id: string; trace_id: string };
    };
    assert.deepEqual(answer.data, { planned: true });
    const requestId = answer.metadata.request_id;
    const trace = await traceOf(alpha.key, ids.planner ?? '', requestId);
    assert.equal(trace.trace_id, answer.metadata.trace_id);

    await page.getByTestId('call-result').getByRole('link', { name: 'View trace' }).click();
    await page.getByRole('heading', { name: `Trace of call ${requestId}` }).waitFor();
    const hash = `#/agents/${ids.planner}/calls/${requestId}/trace`;
    assert.equal(new URL(page.url()).hash, hash);
    loop = { requestId, hash, trace };
    assert.match((await page.getByTestId('trace-facts').textContent()) ?? '', new RegExp(trace.trace_id));

    const rows = await drawnRows(page, trace.spans.length);
    const byId = new Map(trace.spans.map((s) => [s.span_id, s]));
    const spanOf = (row: DrawnRow) => byId.get(row.spanId) as Span;
    assert.deepEqual(new Set(rows.map((r) => r.spanId)), new Set(byId.keys()), 'one row per span');

    // Each row sits right under its parent's subtree, one level deeper and indented further: the
    // nearest row above it one level up is its parent.
    const root = rows[0] as DrawnRow;
    assert.equal(root.name, 'call alpha/planner/v1');
    assert.equal(root.depth, 0);
    for (const [i, row] of rows.entries()) {
      const span = spanOf(row);
      assert.equal(row.name, span.name);
      if (i === 0) continue;
      const parent = rows.slice(0, i).findLast((r) => r.depth === row.depth - 1);
      assert.equal(parent?.spanId, span.parent_span_id, `${span.name} under its parent`);
      assert.ok(row.nameX > (parent?.nameX ?? 0) + 8, `${span.name} is indented under ${parent?.name}`);
    }
    const depthOf = (name: string) => rows.find((r) => r.name === name)?.depth;
    assert.equal(depthOf('sandbox'), 1);
    assert.equal(depthOf('exec sleep'), 2);
    assert.equal(depthOf('invoke_agent beta/middle'), 1);
    assert.equal(depthOf('call beta/middle/v1'), 2);

    // The bars: placed by start and sized by duration on the trace's whole extent; the root's spans
    // the whole track, and the longest span's is the widest.
    const startOf = (s: Span) => Date.parse(s.start_time);
    const first = Math.min(...trace.spans.map(startOf));
    const extent = Math.max(...trace.spans.map((s) => startOf(s) + s.duration_ms)) - first;
    const track = root.track;
    assert.ok(track.width > 100, `a track of ${track.width}px`);
    assert.ok(Math.abs(root.bar.x - track.x) < 1 && Math.abs(root.bar.width - track.width) < 1.5, 'root bar');
    for (const row of rows) {
      const span = spanOf(row);
      const share = (px: number) => px / track.width;
      const where = `${span.name}: bar ${row.bar.x - track.x}+${row.bar.width} of ${track.width}px`;
      assert.ok(Math.abs(share(row.bar.x - track.x) - (startOf(span) - first) / extent) < 0.02, where);
      // Bars under 2 px are drawn at 2 px, so that an instant span still shows.
      assert.ok(
        Math.abs(share(row.bar.width) - Math.max(span.duration_ms / extent, 2 / track.width)) < 0.02,
        where,
      );
    }
    const longest = [...trace.spans].sort((a, b) => b.duration_ms - a.duration_ms)[0];
    const widest = [...rows].sort((a, b) => b.bar.width - a.bar.width)[0];
    assert.equal(widest?.spanId, longest?.span_id);
    const sandbox = rows.find((r) => r.name === 'sandbox') as DrawnRow;
    const admission = rows.find((r) => r.name === 'admission') as DrawnRow;
    assert.ok(sandbox.bar.width > 10 * admission.bar.width, 'a 300 ms command against a quota check');
    // Each bar's text alternative says where it lies.
    assert.match(root.timeline, /^from 0 ms to [\d,]+ ms$/);
    assert.equal(root.duration, `${Math.round(spanOf(root).duration_ms).toLocaleString('en-US')} ms`);

    // The facts of each kind of span, and the status.
    const attrs = (name: string) => trace.spans.find((s) => s.name === name)?.attributes ?? {};
    const chat = rows.find((r) => r.name.startsWith('chat ')) as DrawnRow;
    const chatAttrs = spanOf(chat).attributes;
    assert.ok(chat.facts.includes(`model ${chatAttrs['gen_ai.request.model']}`), chat.facts);
    assert.ok(
      chat.facts.includes(
        `tokens ${chatAttrs['gen_ai.usage.input_tokens']} in, ${chatAttrs['gen_ai.usage.output_tokens']} out`,
      ),
      chat.facts,
    );
    assert.equal(attrs('exec sleep')['process.exit.code'], 0);
    assert.match(rows.find((r) => r.name === 'exec sleep')?.facts ?? '', /exit code 0/);
    assert.match(root.facts, /agent alpha\/planner\/v1/);
    assert.deepEqual(new Set(rows.map((r) => r.status)), new Set(['ok']), 'every span ok');
    // Beta's agent is another author's: its call is in outline, and its model request is hidden.
    const middle = rows.find((r) => r.name === 'call beta/middle/v1') as DrawnRow;
    assert.ok(middle.facts.startsWith(OUTLINE), middle.facts);
    assert.equal(
      rows.filter((r) => r.facts.includes('outline')).length,
      1,
      'only the sub-call is in outline',
    );
    assert.equal(trace.hidden_spans, 1);
    const missing = (await page.getByTestId('trace-missing').textContent()) ?? '';
    assert.match(missing, /1 span hidden/);
    assert.doesNotMatch(missing, /dropped/);

    // A row opens to show every attribute, and closes again.
    const toggle = page.getByRole('button', { name: chat.name }).first();
    assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
    await toggle.click();
    const opened = page.locator(`#span-${chat.spanId}-attributes`);
    await opened.getByTestId('span-attributes').waitFor();
    const shown = ((await opened.textContent()) ?? '').replace(/\s+/g, ' ');
    for (const [k, v] of Object.entries(chatAttrs)) assert.ok(shown.includes(`${k}${v}`), `${k} in ${shown}`);
    assert.ok(shown.includes(`request_id${requestId}`), shown);
    assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
    await toggle.click();
    await opened.waitFor({ state: 'hidden' });
    await page.context().close();
  });

  it('links each log line of a call to the same trace page', async () => {
    assert.ok(loop, 'the playground’s call was made');
    const page = await harness.signedIn(alpha.key, `#/agents/${ids.planner}`);
    const table = page.getByTestId('agent-logs');
    const line = table.locator('tbody tr', { hasText: `call ${loop.requestId} succeeded` });
    await line.waitFor();
    await line.getByRole('link', { name: `Trace of call ${loop.requestId}` }).click();
    await page.getByRole('heading', { name: `Trace of call ${loop.requestId}` }).waitFor();
    assert.equal(new URL(page.url()).hash, loop.hash);
    const rows = await drawnRows(page, loop.trace.spans.length);
    assert.equal(rows[0]?.name, 'call alpha/planner/v1');
    // Every line the API gives a request id links to that call's trace; the others link nowhere.
    await page.getByRole('link', { name: '← The agent' }).click();
    await table.waitFor();
    const logs = await p.request<{ logs: { request_id: string | null }[] }>(
      'GET',
      `/agents/${ids.planner}/logs?limit=50`,
      { key: alpha.key },
    );
    const links = await table
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((tr) => tr.querySelector('a')?.getAttribute('href') ?? null));
    assert.deepEqual(
      links,
      logs.body.logs.map((l) =>
        l.request_id ? `#/agents/${ids.planner}/calls/${l.request_id}/trace` : null,
      ),
    );
    await page.context().close();
  });

  it('links a failed call’s error to its trace, with the failure marked', async () => {
    const page = await harness.signedIn(alpha.key, `#/agents/${ids.greet}`);
    await page.getByText('Its input_schema names no properties').waitFor();
    fake.enqueue({ status: 500, errorMessage: 'upstream is down' });
    await page.getByRole('button', { name: 'Call' }).click();
    const error = page.getByTestId('call-error');
    await error.getByText('LLM_ERROR').waitFor();
    await error.getByRole('link', { name: 'View trace' }).click();
    const heading = page.getByRole('heading', { name: /^Trace of call req_/ });
    await heading.waitFor();
    const requestId = ((await heading.textContent()) ?? '').replace('Trace of call ', '').trim();
    const trace = await traceOf(alpha.key, ids.greet ?? '', requestId);
    const rows = await drawnRows(page, trace.spans.length);
    const root = rows.find((r) => r.name === 'call alpha/greet/v1');
    const chat = rows.find((r) => r.name.startsWith('chat '));
    assert.equal(root?.status, 'error: LLM_ERROR');
    assert.match(chat?.status ?? '', /^error/);
    const failed = trace.spans.filter((s) => s.status === 'error').length;
    assert.ok(failed >= 2, JSON.stringify(trace.spans));
    assert.equal(await page.locator('tr.span-row.span-failed').count(), failed);
    assert.match(
      (await page.getByTestId('trace-facts').textContent()) ?? '',
      new RegExp(`, ${failed} failed`),
    );
    await page.context().close();
  });

  it('shows a stranger, and anyone asking for an unknown call, that there is no trace to see', async () => {
    assert.ok(loop, 'the playground’s call was made');
    const refused = await p.request('GET', `/agents/${ids.planner}/calls/${loop.requestId}/trace`, {
      key: beta.key,
    });
    assert.equal(refused.status, 404, refused.text);
    for (const [key, hash] of [
      [beta.key, loop.hash],
      [alpha.key, `#/agents/${ids.planner}/calls/req_unknown/trace`],
    ] as const) {
      const page = await harness.signedIn(key, hash);
      const notFound = page.getByTestId('trace-not-found');
      await notFound.waitFor();
      assert.match((await notFound.textContent()) ?? '', /No trace you may see for this call/);
      assert.equal(await page.getByTestId('trace-waterfall').count(), 0);
      assert.ok(!(await page.content()).includes('planner/v1'), 'nothing of the call shows');
      await page.context().close();
    }
  });

  it('passes axe’s WCAG 2.1 AA checks in both schemes, a row opened, and fits a phone', async () => {
    assert.ok(loop, 'the playground’s call was made');
    for (const colorScheme of ['light', 'dark'] as const) {
      // axe is injected as a script: the page's policy (script-src 'self') would refuse it.
      const page = await harness.signedIn(alpha.key, loop.hash, { colorScheme, bypassCSP: true });
      await drawnRows(page, loop.trace.spans.length);
      await page.getByRole('button', { name: 'exec sleep' }).click();
      await page.getByTestId('span-attributes').waitFor();
      const results = await new AxeBuilder({ page }).withTags(WCAG_TAGS).analyze();
      const found = results.violations.map(
        (v) => `${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
      );
      assert.deepEqual(found, [], `${colorScheme}: ${found.join('\n')}`);
      await page.goto(`${p.url}/#/agents/${ids.planner}/calls/req_unknown/trace`);
      await page.getByTestId('trace-not-found').waitFor();
      const empty = await new AxeBuilder({ page }).withTags(WCAG_TAGS).analyze();
      assert.deepEqual(
        empty.violations.map((v) => v.id),
        [],
        `${colorScheme}, not found`,
      );
      await page.context().close();
    }

    const phone = { viewport: { width: 375, height: 740 }, colorScheme: 'dark' as const };
    const page = await harness.signedIn(alpha.key, loop.hash, phone);
    await drawnRows(page, loop.trace.spans.length);
    const layout = (await page.evaluate(
      '({ scrollWidth: document.documentElement.scrollWidth, width: window.innerWidth })',
    )) as { scrollWidth: number; width: number };
    assert.ok(
      layout.scrollWidth <= layout.width,
      `page is ${layout.scrollWidth}px wide at ${layout.width}px`,
    );
    await page.context().close();
  });
});

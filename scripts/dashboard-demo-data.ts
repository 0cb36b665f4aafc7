import assert from 'node:assert/strict';
import type { DashboardHarness } from '../test/helpers/dashboard.ts';

/**
 * A small workspace's worth of data for the dashboard's screenshots, made through the API as a
 * user would: a published prompt agent and some calls to it through the fake model (one failing,
 * some for a tenant), a schedule that auto-disabled itself after a failure and a webhook schedule,
 * a top-up through the local checkout, secrets, a second API key and a few tasks.
 */
export async function seedDashboardDemo({
  p,
  fake,
}: DashboardHarness): Promise<{ key: string; workspaceId: string }> {
  const user = await p.createAccount('acme', 'pro');
  const call = async (method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
    const res = await p.request<{ id?: string; status?: string; checkout_url?: string }>(method, path, {
      key: user.key,
      body,
      headers,
    });
    assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  await call('POST', '/agents?allow_no_secrets=true', {
    name: 'summarise',
    description: 'Summarises a text in three sentences.',
    supported_providers: ['openai'],
    default_models: { openai: 'gpt-test-mini' },
    prompt_template: 'Summarise in three sentences: {{text}}',
  });
  for (let i = 0; i < 12; i++) {
    fake.enqueue({ text: `A summary, number ${i}.` });
    const tenant = i % 3 === 0 ? { 'X-Platform-Tenant': 'customer-42' } : undefined;
    await call('POST', '/acme/summarise/v1/run', { text: 'agenthost runs agents.' }, tenant);
  }
  const schedule = await call('POST', `/workspaces/${user.workspaceId}/schedules`, {
    agent: 'acme/summarise',
    cron_expression: '0 9 * * 1-5',
    input_data: { text: 'The morning news.' },
    max_consecutive_failures: 1,
  });
  fake.enqueue({ status: 500, errorMessage: 'upstream is down' });
  await call('POST', `/workspaces/${user.workspaceId}/schedules/${schedule.id}/trigger`, {});
  await call('POST', `/workspaces/${user.workspaceId}/schedules`, {
    agent: 'acme/summarise',
    type: 'webhook',
    input_data: { text: 'From the webhook.' },
  });
  const checkout = await call('POST', '/billing/checkout', { credits: 2500 });
  const confirm = await p.request('POST', `${new URL(checkout.checkout_url ?? '').pathname}/confirm`, {
    key: null,
  });
  assert.ok(confirm.status < 300, confirm.text);
  for (const name of ['OPENAI_API_KEY', 'SLACK_WEBHOOK_TOKEN']) {
    await call('PUT', `/workspaces/${user.workspaceId}/secrets`, { name, value: 'demo-value-not-shown' });
  }
  await call('POST', '/api-keys', { name: 'ci-pipeline' });
  for (const [title, priority] of [
    ['Review the summariser prompt', 'high'],
    ['Add a tenant for customer-42', 'normal'],
    ['Rotate the Slack token', 'low'],
  ] as const) {
    await call('POST', '/tasks', { title, priority, project: 'launch' });
  }
  return { key: user.key, workspaceId: user.workspaceId };
}

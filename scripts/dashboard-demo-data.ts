import assert from 'node:assert/strict';
import type { DashboardHarness } from '../test/helpers/dashboard.ts';

/**
 * A small workspace's worth of data for the dashboard's screenshots, made through the API as a
 * user would: a published prompt agent and some calls to it through the fake model (one failing),
 * a schedule that auto-disabled itself after a failure.
 */
export async function seedDashboardDemo({
  p,
  fake,
}: DashboardHarness): Promise<{ key: string; workspaceId: string }> {
  const user = await p.createAccount('acme', 'pro');
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await p.request<{ id?: string; status?: string }>(method, path, { key: user.key, body });
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
    await call('POST', '/acme/summarise/v1/run', { text: 'agenthost runs agents.' });
  }
  const schedule = await call('POST', `/workspaces/${user.workspaceId}/schedules`, {
    agent: 'acme/summarise',
    cron_expression: '0 9 * * 1-5',
    input_data: { text: 'The morning news.' },
    max_consecutive_failures: 1,
  });
  fake.enqueue({ status: 500, errorMessage: 'upstream is down' });
  await call('POST', `/workspaces/${user.workspaceId}/schedules/${schedule.id}/trigger`, {});
  return { key: user.key, workspaceId: user.workspaceId };
}

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { type DashboardHarness, signIn, startDashboard } from '../helpers/dashboard.ts';
import { errorOf, type TestPlatform } from '../helpers/platform.ts';

type Account = { key: string; accountId: string; workspaceId: string };

/** Everything the page's tab keeps in web storage, as one string to search. */
async function storageText(page: Page): Promise<string> {
  return (await page.evaluate(
    `JSON.stringify([Object.entries(sessionStorage), Object.entries(localStorage)])`,
  )) as string;
}

/** The open confirmation dialog's confirm button, clicked. */
async function confirm(page: Page, label: string): Promise<void> {
  await page.getByRole('dialog').getByRole('button', { name: label, exact: true }).click();
  await page.getByRole('dialog').waitFor({ state: 'hidden' });
}

/**
 * The Secrets, API keys, Workspace and Tasks pages in Chromium, against the local platform: data
 * is made in the page and checked through the API, and the other way round.
 */
describe('dashboard: secrets, API keys, workspace and tasks', () => {
  let harness: DashboardHarness;
  let p: TestPlatform;
  let owner: Account;
  let mate: Account;

  before(async () => {
    harness = await startDashboard();
    p = harness.p;
    owner = await p.createAccount('boss', 'pro');
    mate = await p.createAccount('mate', 'free');
  });

  after(async () => {
    await harness?.close();
  });

  it('sets a secret by keyboard; only its name is ever shown or kept; deletes it after confirmation', async () => {
    const page = await harness.signedIn(owner.key, '#/secrets');
    await page.getByRole('heading', { name: 'Secrets' }).waitFor();
    await page.getByText('No secrets in this workspace.').waitFor();

    // A name the API refuses: its error as the API gave it.
    await page.getByLabel('Name').fill('lower');
    await page.getByLabel('Value').fill('x');
    await page.getByRole('button', { name: 'Save secret' }).click();
    const refused = errorOf(
      await p.request('PUT', `/workspaces/${owner.workspaceId}/secrets`, {
        key: owner.key,
        body: { name: 'lower', value: 'x' },
      }),
    );
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? '', /INVALID_INPUT/);
    assert.equal(refused.code, 'INVALID_INPUT');

    const value = 'sk-live-THE-VALUE-NOBODY-SEES-4242';
    await page.getByLabel('Name').fill('');
    await page.getByLabel('Value').fill('');
    await page.getByLabel('Name').focus();
    await page.keyboard.type('STRIPE_TOKEN');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate('document.activeElement?.type'), 'password');
    await page.keyboard.type(value);
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Created STRIPE_TOKEN' }).waitFor();
    await page.getByTestId('secrets').getByRole('rowheader', { name: 'STRIPE_TOKEN' }).waitFor();

    assert.equal(await page.getByLabel('Value').inputValue(), '', 'the value field is cleared');
    assert.ok(!(await page.content()).includes(value), 'the value is not in the page');
    assert.ok(!(await storageText(page)).includes(value), 'the value is not in web storage');
    const listed = await p.request<{ secrets: { name: string }[] }>(
      'GET',
      `/workspaces/${owner.workspaceId}/secrets`,
      { key: owner.key },
    );
    assert.deepEqual(
      listed.body.secrets.map((s) => s.name),
      ['STRIPE_TOKEN'],
    );
    assert.ok(!listed.text.includes(value));

    // Delete: Cancel keeps it; Confirm deletes it.
    const row = page.getByTestId('secrets').getByRole('row').filter({ hasText: 'STRIPE_TOKEN' });
    await row.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    assert.equal(
      (
        await p.request<{ secrets: unknown[] }>('GET', `/workspaces/${owner.workspaceId}/secrets`, {
          key: owner.key,
        })
      ).body.secrets.length,
      1,
    );
    await row.getByRole('button', { name: 'Delete' }).click();
    await confirm(page, 'Delete');
    await page.getByText('No secrets in this workspace.').waitFor();
    const gone = await p.request<{ secrets: unknown[] }>('GET', `/workspaces/${owner.workspaceId}/secrets`, {
      key: owner.key,
    });
    assert.deepEqual(gone.body.secrets, []);
    await page.context().close();
  });

  it('shows a new key once; it works; a reload forgets it; revoked in the page, the API refuses it', async () => {
    const page = await harness.signedIn(owner.key, '#/api-keys');
    await page.getByTestId('api-keys').waitFor();
    await page.getByLabel('Name').fill('laptop');
    await page.getByRole('button', { name: 'Create key' }).click();
    const box = page.getByTestId('new-api-key');
    await box.waitFor();
    assert.match((await box.textContent()) ?? '', /You will not see it again/);
    const newKey = ((await box.locator('code').textContent()) ?? '').trim();
    assert.match(newKey, /^ahk_[A-Za-z0-9_-]{43}$/);
    await box.getByRole('button', { name: 'Copy key' }).waitFor();

    const withNew = await p.request('GET', '/workspaces', { key: newKey });
    assert.equal(withNew.status, 200, withNew.text);

    // Listed by name and prefix, never the key.
    const row = page.getByTestId('api-keys').getByRole('row').filter({ hasText: 'laptop' });
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', new RegExp(`${newKey.slice(0, 10)}…`));
    assert.ok(!((await row.textContent()) ?? '').includes(newKey));

    await page.reload();
    await row.waitFor();
    assert.equal(await page.getByTestId('new-api-key').count(), 0);
    assert.ok(!(await page.content()).includes(newKey), 'gone after a reload');
    assert.ok(!(await storageText(page)).includes(newKey), 'never stored');

    // Another key than this tab's: no warning about signing out.
    await row.getByRole('button', { name: 'Revoke' }).click();
    assert.equal(await page.getByRole('dialog').getByText('signs you out').count(), 0);
    await confirm(page, 'Revoke');
    await row.waitFor({ state: 'detached' });
    const refused = await p.request('GET', '/workspaces', { key: newKey });
    assert.equal(refused.status, 401);
    assert.equal(errorOf(refused).code, 'UNAUTHORIZED');
    await page.context().close();
  });

  it('revoking the key the tab is signed in with warns, then signs out with the API’s UNAUTHORIZED', async () => {
    const second = await p.request<{ api_key: string; prefix: string }>('POST', '/api-keys', {
      key: owner.key,
      body: { name: 'browser' },
    });
    assert.equal(second.status, 201, second.text);
    const page = await harness.signedIn(second.body.api_key, '#/api-keys');
    const row = page.getByTestId('api-keys').getByRole('row').filter({ hasText: 'browser' });
    await row.getByText('this browser', { exact: true }).waitFor();
    await row.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByText('This is the key this browser is signed in with').waitFor();
    await confirm(page, 'Revoke');

    const notice = page.getByTestId('signed-out-notice');
    await notice.waitFor();
    assert.match((await notice.textContent()) ?? '', /signed out.*UNAUTHORIZED/s);
    await page.getByLabel('API key').waitFor();
    assert.equal(await page.evaluate('sessionStorage.length'), 0);
    assert.equal((await p.request('GET', '/workspaces', { key: second.body.api_key })).status, 401);
    assert.equal((await p.request('GET', '/workspaces', { key: owner.key })).status, 200);
    await page.context().close();
  });

  it('creates a workspace, invites an account by id, which accepts in its page; a member sees the members but no invite, and leaves', async () => {
    const page = await harness.signedIn(owner.key, '#/workspace');
    await page.getByLabel('Name', { exact: true }).fill('Team Blue');
    await page.getByLabel('Slug (optional)').fill('team-blue');
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await page.getByRole('status').filter({ hasText: 'Created Team Blue' }).waitFor();
    await page.getByTestId('workspaces').getByText('team-blue').waitFor();
    const listed = await p.request<{ workspaces: { id: string; slug: string; role: string }[] }>(
      'GET',
      '/workspaces',
      { key: owner.key },
    );
    const team = listed.body.workspaces.find((w) => w.slug === 'team-blue');
    assert.ok(team);
    assert.equal(team.role, 'owner');

    await page.getByRole('banner').getByLabel('Workspace').selectOption({ label: 'Team Blue · owner' });
    await page.getByRole('heading', { name: 'Members of Team Blue' }).waitFor();
    await page.getByLabel('Email or account id').fill(mate.accountId);
    await page.getByLabel('Role').selectOption('member');
    await page.getByRole('button', { name: 'Invite' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Invited ${mate.accountId} (member): pending until they accept` })
      .waitFor();
    await page
      .getByTestId('pending-invitations')
      .getByRole('row')
      .filter({ hasText: mate.accountId })
      .waitFor();
    // Invited is not a member: not in the members table, nor in the API's list.
    assert.equal(
      await page.getByTestId('members').getByRole('row').filter({ hasText: mate.accountId }).count(),
      0,
    );
    const before = await p.request<{ members: { account_id: string }[] }>(
      'GET',
      `/workspaces/${team.id}/members`,
      {
        key: owner.key,
      },
    );
    assert.deepEqual(
      before.body.members.map((m) => m.account_id),
      [owner.accountId],
    );

    // Inviting again: the API's CONFLICT, as it came.
    await page.getByLabel('Email or account id').fill(mate.accountId);
    await page.getByRole('button', { name: 'Invite' }).click();
    await page.getByRole('alert').filter({ hasText: 'CONFLICT' }).waitFor();
    await page.context().close();

    // The invited account: the invitation on its Workspace page, no Team Blue in its switcher
    // until it accepts; then a member.
    const matePage = await harness.signedIn(mate.key, '#/workspace');
    const invitationRow = matePage
      .getByTestId('my-invitations')
      .getByRole('row')
      .filter({ hasText: 'Team Blue' });
    await invitationRow.waitFor();
    assert.match((await invitationRow.textContent()) ?? '', /team-blue.*member.*boss/s);
    const switcher = matePage.getByRole('banner').getByLabel('Workspace');
    assert.equal(await switcher.getByRole('option', { name: 'Team Blue · member' }).count(), 0);
    await invitationRow.getByRole('button', { name: 'Accept' }).click();
    await matePage.getByRole('status').filter({ hasText: 'You joined Team Blue as member' }).waitFor();
    await matePage.getByTestId('my-invitations').waitFor({ state: 'detached' });
    const members = await p.request<{ members: { account_id: string; role: string }[] }>(
      'GET',
      `/workspaces/${team.id}/members`,
      { key: owner.key },
    );
    assert.deepEqual(
      members.body.members.map((m) => [m.account_id, m.role]).sort(),
      [
        [mate.accountId, 'member'],
        [owner.accountId, 'owner'],
      ].sort(),
    );

    // The member: sees both members, no invite form, no Remove; the raw API refuses an invite.
    await matePage.getByRole('banner').getByLabel('Workspace').selectOption({ label: 'Team Blue · member' });
    await matePage.getByRole('heading', { name: 'Members of Team Blue' }).waitFor();
    const table = matePage.getByTestId('members');
    await table.getByRole('row').filter({ hasText: owner.accountId }).waitFor();
    assert.equal(await table.getByRole('row').count(), 3, 'a header row and two members');
    await matePage.getByTestId('invite-owners-only').waitFor();
    assert.equal(await matePage.getByLabel('Email or account id').count(), 0);
    assert.equal(await table.getByRole('button', { name: 'Remove' }).count(), 0);
    const third = await p.createAccount('third', 'free');
    const forbidden = await p.request('POST', `/workspaces/${team.id}/invite`, {
      key: mate.key,
      body: { account_id: third.accountId, role: 'member' },
    });
    assert.equal(forbidden.status, 403);
    assert.equal(errorOf(forbidden).code, 'FORBIDDEN');

    // A member's secrets page: the names, no form.
    await matePage.goto(`${p.url}/#/secrets`);
    await matePage.getByText("Only the workspace's owners can set or delete secrets").waitFor();
    assert.equal(await matePage.getByLabel('Value').count(), 0);

    // Leaving, confirmed: the switcher falls back to the personal workspace.
    await matePage.goto(`${p.url}/#/workspace`);
    const selfRow = matePage.getByTestId('members').getByRole('row').filter({ hasText: mate.accountId });
    await selfRow.getByText('you', { exact: true }).waitFor();
    await selfRow.getByRole('button', { name: 'Leave' }).click();
    await confirm(matePage, 'Leave');
    await matePage.getByRole('heading', { name: 'Members of mate' }).waitFor();
    const after = await p.request<{ members: { account_id: string }[] }>(
      'GET',
      `/workspaces/${team.id}/members`,
      {
        key: owner.key,
      },
    );
    assert.deepEqual(
      after.body.members.map((m) => m.account_id),
      [owner.accountId],
    );
    await matePage.context().close();
  });

  it('an invitation by email: declined in the page, revoked by the owner, accepted, then removed', async () => {
    const ws = await p.request<{ id: string }>('POST', '/workspaces', {
      key: owner.key,
      body: { name: 'Team Red', slug: 'team-red' },
    });
    assert.equal(ws.status, 201, ws.text);
    const mailer = await createAccount(p.deps, { org: 'mailer', tier: 'free', email: 'mailer@example.test' });
    const page = await harness.signedIn(owner.key, '#/workspace');
    await page.getByRole('banner').getByLabel('Workspace').selectOption({ label: 'Team Red · owner' });
    const invite = async () => {
      await page.getByLabel('Email or account id').fill('mailer@example.test');
      await page.getByLabel('Role').selectOption('owner');
      await page.getByRole('button', { name: 'Invite' }).click();
      await page.getByRole('status').filter({ hasText: 'Invited mailer@example.test (owner)' }).waitFor();
    };
    await invite();

    // The invited account declines: no membership, and the invitation is gone.
    const mailerPage = await harness.signedIn(mailer.api_key, '#/workspace');
    const row = mailerPage.getByTestId('my-invitations').getByRole('row').filter({ hasText: 'Team Red' });
    await row.getByRole('button', { name: 'Decline' }).click();
    await mailerPage
      .getByRole('status')
      .filter({ hasText: 'You declined the invitation to Team Red' })
      .waitFor();
    const declined = await p.request<{ members: { account_id: string }[] }>(
      'GET',
      `/workspaces/${ws.body.id}/members`,
      {
        key: owner.key,
      },
    );
    assert.deepEqual(
      declined.body.members.map((m) => m.account_id),
      [owner.accountId],
    );
    const none = await p.request<{ invitations: unknown[] }>('GET', '/invitations', { key: mailer.api_key });
    assert.deepEqual(none.body.invitations, []);

    // Invited again, then withdrawn by the owner after confirmation.
    await page.reload();
    await invite();
    const pending = page
      .getByTestId('pending-invitations')
      .getByRole('row')
      .filter({ hasText: 'mailer@example.test' });
    await pending.getByRole('button', { name: 'Revoke' }).click();
    await confirm(page, 'Revoke');
    await page.getByTestId('pending-invitations').waitFor({ state: 'detached' });
    const revoked = await p.request<{ invitations: unknown[] }>(
      'GET',
      `/workspaces/${ws.body.id}/invitations`,
      {
        key: owner.key,
      },
    );
    assert.deepEqual(revoked.body.invitations, []);

    // Invited a third time and accepted: a member with the owner role, whom the owner removes.
    await invite();
    await mailerPage.reload();
    await mailerPage
      .getByTestId('my-invitations')
      .getByRole('row')
      .filter({ hasText: 'Team Red' })
      .getByRole('button', { name: 'Accept' })
      .click();
    await mailerPage.getByRole('status').filter({ hasText: 'You joined Team Red as owner' }).waitFor();
    await mailerPage.context().close();
    await page.reload();
    const member = page.getByTestId('members').getByRole('row').filter({ hasText: 'mailer@example.test' });
    assert.match((await member.textContent()) ?? '', /mailer.*owner/s);
    await member.getByRole('button', { name: 'Remove' }).click();
    await confirm(page, 'Remove');
    await member.waitFor({ state: 'detached' });
    const members = await p.request<{ members: { account_id: string }[] }>(
      'GET',
      `/workspaces/${ws.body.id}/members`,
      { key: owner.key },
    );
    assert.deepEqual(
      members.body.members.map((m) => m.account_id),
      [owner.accountId],
    );
    await page.context().close();
  });

  it('tasks: created in the page appear through the API; filters, status, complete, edit, delete', async () => {
    const page = await harness.signedIn(owner.key, '#/tasks');
    await page.getByText('No tasks match.').waitFor();

    const filters = page.getByRole('form', { name: 'Filter tasks' });
    const newTask = page.getByRole('form', { name: 'New task' });
    const create = async (title: string, priority: string, project: string) => {
      await newTask.getByLabel('Title').fill(title);
      await newTask.getByLabel('Project').fill(project);
      await newTask.getByLabel('Priority').selectOption(priority);
      await newTask.getByRole('button', { name: 'Create task' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `Created ${title}` })
        .waitFor();
    };
    await create('Write the report', 'high', 'q3');
    await create('Fix the bug', 'low', 'q3');

    type TaskList = {
      tasks: {
        id: string;
        title: string;
        status: string;
        priority: string;
        completed_at: string | null;
        project: string | null;
      }[];
      total: number;
    };
    const viaApi = async (query = '') =>
      (
        await p.request<TaskList>('GET', `/tasks?workspace_id=${owner.workspaceId}${query}`, {
          key: owner.key,
        })
      ).body;
    const all = await viaApi();
    assert.deepEqual(all.tasks.map((t) => [t.title, t.priority, t.project]).sort(), [
      ['Fix the bug', 'low', 'q3'],
      ['Write the report', 'high', 'q3'],
    ]);
    const table = page.getByTestId('tasks');
    const rowOf = (title: string) => table.getByRole('row').filter({ hasText: title });
    await rowOf('Fix the bug').waitFor();

    // Filter by priority.
    await filters.getByLabel('Priority').selectOption('high');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await rowOf('Fix the bug').waitFor({ state: 'detached' });
    // The filtered list, once it is there (between the two, the table may be reloading).
    await rowOf('Write the report').waitFor();
    assert.equal(await table.locator('tbody tr').count(), 1);

    // Back to any; change a status in the row; complete the other.
    await filters.getByLabel('Priority').selectOption('');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await rowOf('Fix the bug').waitFor();
    await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'PATCH' && r.status() === 200),
      page.getByLabel('Status of Fix the bug').selectOption('in_progress'),
    ]);
    await rowOf('Write the report').getByRole('button', { name: 'Complete Write the report' }).click();
    await rowOf('Write the report')
      .getByText(/^done /)
      .waitFor();
    const changed = await viaApi();
    const byTitle = new Map(changed.tasks.map((t) => [t.title, t]));
    assert.equal(byTitle.get('Fix the bug')?.status, 'in_progress');
    assert.equal(byTitle.get('Write the report')?.status, 'done');
    assert.ok(byTitle.get('Write the report')?.completed_at);

    // Filter by status: done.
    await filters.getByLabel('Status').selectOption('done');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await rowOf('Fix the bug').waitFor({ state: 'detached' });
    await rowOf('Write the report').waitFor();
    assert.deepEqual(await table.locator('tbody th').allTextContents(), ['Write the report']);
    await filters.getByLabel('Status').selectOption('');
    await page.getByRole('button', { name: 'Apply filters' }).click();

    // The detail: its fields, an edit, and a confirmed delete.
    await rowOf('Fix the bug').getByRole('link', { name: 'Fix the bug' }).click();
    await page.getByRole('heading', { name: 'Fix the bug' }).waitFor();
    const fixId = byTitle.get('Fix the bug')?.id ?? '';
    assert.ok(page.url().endsWith(`#/tasks/${fixId}`));
    assert.equal(await page.getByTestId('task-status').textContent(), 'in_progress');
    await page.getByLabel('Project').fill('');
    await page.getByLabel('Description').fill('Steps: 1. open it');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Steps: 1. open it', { exact: true }).first().waitFor();
    const edited = await p.request<{ project: string | null; description: string }>(
      'GET',
      `/tasks/${fixId}`,
      {
        key: owner.key,
      },
    );
    assert.equal(edited.body.project, null, 'an emptied field is cleared');
    assert.equal(edited.body.description, 'Steps: 1. open it');
    await page.getByRole('button', { name: 'Delete' }).click();
    await confirm(page, 'Delete');
    await page.getByRole('heading', { name: 'Tasks' }).waitFor();
    assert.equal((await p.request('GET', `/tasks/${fixId}`, { key: owner.key })).status, 404);
    await page.context().close();
  });

  it('tasks: a long list is paged with Load more; a missing task shows the API’s NOT_FOUND', async () => {
    for (let i = 0; i < 27; i++) {
      const made = await p.request('POST', '/tasks', {
        key: owner.key,
        body: { title: `bulk ${i}`, project: 'bulk' },
      });
      assert.equal(made.status, 201, made.text);
    }
    const page = await harness.signedIn(owner.key, '#/tasks');
    const filters = page.getByRole('form', { name: 'Filter tasks' });
    await filters.getByLabel('Project').fill('bulk');
    await filters.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('25 of 27 shown').waitFor();
    assert.equal(await page.getByTestId('tasks').locator('tbody tr').count(), 25);
    await page.getByRole('button', { name: 'Load more' }).click();
    await page.getByText('27 of 27 shown').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Load more' }).count(), 0);

    await page.goto(`${p.url}/#/tasks/00000000-0000-4000-8000-000000000000`);
    await page.getByRole('alert').filter({ hasText: 'NOT_FOUND' }).waitFor();
    await page.context().close();
  });

  it('every page fits a phone’s width in dark mode', async () => {
    const secret = await p.request('PUT', `/workspaces/${owner.workspaceId}/secrets`, {
      key: owner.key,
      body: { name: 'A_RATHER_LONG_SECRET_NAME_FOR_A_NARROW_SCREEN', value: 'v' },
    });
    assert.equal(secret.status, 200, secret.text);
    const task = await p.request('POST', '/tasks', {
      key: owner.key,
      body: {
        title: 'A task with a title long enough to need the whole width of a phone',
        project: 'narrow',
      },
    });
    assert.equal(task.status, 201, task.text);
    const context = await harness.browser.newContext({
      viewport: { width: 375, height: 740 },
      colorScheme: 'dark',
    });
    const page = await context.newPage();
    await page.goto(`${p.url}/`);
    await signIn(page, owner.key);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    for (const [hash, ready] of [
      ['#/secrets', 'Set a secret'],
      ['#/api-keys', 'Your keys'],
      ['#/workspace', 'Your workspaces'],
      ['#/tasks', 'New task'],
    ] as const) {
      await page.goto(`${p.url}/${hash}`);
      await page.getByRole('heading', { name: ready }).waitFor();
      await page.locator('table').first().waitFor();
      const layout = (await page.evaluate(
        `({ scrollWidth: document.documentElement.scrollWidth, width: window.innerWidth })`,
      )) as { scrollWidth: number; width: number };
      assert.ok(
        layout.scrollWidth <= layout.width,
        `${hash} is ${layout.scrollWidth}px wide at ${layout.width}px`,
      );
    }
    // A row's confirmation dialog wraps its text inside the screen.
    await page.goto(`${p.url}/#/api-keys`);
    await page.getByTestId('api-keys').getByRole('button', { name: 'Revoke' }).first().click();
    const dialog = (await page.evaluate(
      `(() => { const d = document.querySelector('dialog[open]'); return { scroll: d.scrollWidth, client: d.clientWidth, right: d.getBoundingClientRect().right }; })()`,
    )) as { scroll: number; client: number; right: number };
    assert.ok(dialog.scroll <= dialog.client && dialog.right <= 375, JSON.stringify(dialog));
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    await context.close();
  });
});

import assert from 'node:assert/strict';
import { readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  type Account,
  type CliAdminPlatform,
  SECRET_VALUES,
  startCliAdminPlatform,
} from '../helpers/cli-admin-platform.ts';
import type { FakeLlmProviders } from '../helpers/fake-llm-providers.ts';
import type { TestPlatform } from '../helpers/platform.ts';

/**
 * The CLI's account and workspace administration as its users run it, against
 * the local platform: its command tree in this process (helpers/cli-in-process.ts says why not a
 * subprocess each). Workspaces (and `use`), secrets and keys here; tasks, usage and billing in
 * cli-admin-tasks-billing.test.ts: each command's human and --json output with real values, and the failures with their
 * documented exit codes (2 usage, 3 conflict, 4 auth or role, 5 not found).
 */

describe('the CLI’s admin commands against the local platform', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let home: string;
  let alpha: Account;
  let bravo: Account;
  let carol: Account;
  let dave: Account;
  let teamId: string;
  let run: CliAdminPlatform['run'];
  let envOf: CliAdminPlatform['envOf'];
  let fails: CliAdminPlatform['fails'];
  let json: CliAdminPlatform['json'];

  before(async () => {
    ({ p, fake, home, alpha, bravo, carol, dave, run, envOf, fails, json } = await startCliAdminPlatform());
  });
  after(async () => {
    await p?.close();
    await fake?.close();
    await rm(home, { recursive: true, force: true });
  });

  describe('workspaces', () => {
    it('creates a workspace, lists it with the caller’s role, invites by email and by id, lists members', async () => {
      const created = json<{ id: string; name: string; slug: string; role: string }>(
        await run(['workspaces', 'create', 'Admin Team', '--slug', 'adm-team', '--json'], envOf(alpha.key)),
      );
      assert.deepEqual([created.name, created.slug, created.role], ['Admin Team', 'adm-team', 'owner']);
      teamId = created.id;

      const human = await run(['workspaces', 'create', 'Second Team'], envOf(alpha.key));
      assert.equal(human.code, 0, human.stderr);
      assert.match(human.stdout, /^name +Second Team$/m);
      assert.match(human.stdout, /^role +owner$/m);
      assert.match(human.stderr, /agenthost workspaces use /);

      const listed = json<{ workspaces: { id: string; role: string; personal: boolean }[] }>(
        await run(['workspaces', 'list', '--json'], envOf(alpha.key)),
      );
      assert.equal(listed.workspaces.length, 3);
      assert.ok(listed.workspaces.every((w) => w.role === 'owner'));
      assert.deepEqual(
        listed.workspaces.filter((w) => w.personal).map((w) => w.id),
        [alpha.workspaceId],
      );
      assert.ok(listed.workspaces.some((w) => w.id === teamId && !w.personal));
      const table = await run(['workspaces', 'list'], envOf(alpha.key));
      assert.match(table.stdout, /ID +NAME +SLUG +ROLE +PERSONAL +CREATED$/m);
      assert.match(
        table.stdout,
        new RegExp(`^\\* +${alpha.workspaceId} +adm-alpha +adm-alpha +owner +yes `, 'm'),
      );
      assert.match(table.stdout, new RegExp(`^ +${teamId} +Admin Team +adm-team +owner +no `, 'm'));

      const byEmail = json<{ id: string; account_id: string | null; role: string; email: string }>(
        await run(['workspaces', 'invite', 'carol@example.com', '-w', teamId, '--json'], envOf(alpha.key)),
      );
      assert.deepEqual(byEmail, { ...byEmail, account_id: null, role: 'member', email: 'carol@example.com' });
      const byId = await run(
        ['workspaces', 'invite', dave.accountId, '--role', 'owner', '-w', teamId],
        envOf(alpha.key),
      );
      assert.equal(byId.code, 0, byId.stderr);
      assert.match(byId.stdout, new RegExp(`^invited +${dave.accountId}$`, 'm'));
      assert.match(byId.stdout, /^role +owner$/m);
      assert.doesNotMatch(byId.stdout, /dave@example\.com/, 'an invite by id shows no email');
      assert.match(byId.stderr, /pending until it is accepted: agenthost invitations accept \S+/);

      // Invited is not a member: carol sees no members until she accepts.
      await fails(['workspaces', 'members', '-w', teamId], envOf(carol.key), 5, /NOT_FOUND/);
      const pending = await run(['workspaces', 'invitations', 'adm-team'], envOf(alpha.key));
      assert.match(pending.stdout, /^ID +WORKSPACE +INVITED +ROLE +BY +EXPIRES$/m);
      assert.match(
        pending.stdout,
        new RegExp(`^${byEmail.id} +adm-team +carol@example.com +member +adm-alpha `, 'm'),
      );
      const carols = json<{ invitations: { id: string }[] }>(
        await run(['invitations', 'list', '--json'], envOf(carol.key)),
      );
      assert.deepEqual(
        carols.invitations.map((i) => i.id),
        [byEmail.id],
      );
      await fails(['invitations', 'accept', byEmail.id], envOf(dave.key), 5, /NOT_FOUND/);
      const accepted = await run(['invitations', 'accept', byEmail.id], envOf(carol.key));
      assert.equal(accepted.code, 0, accepted.stderr);
      assert.match(accepted.stdout, new RegExp(`^workspace +${teamId}$`, 'm'));
      assert.match(accepted.stdout, /^role +member$/m);
      const daves = await run(['invitations', 'list'], envOf(dave.key));
      const daveInvitation = /^(\S+) +adm-team /m.exec(daves.stdout)?.[1] ?? '';
      assert.ok(daveInvitation, daves.stdout);
      assert.equal((await run(['invitations', 'accept', daveInvitation], envOf(dave.key))).code, 0);

      const members = json<{ members: { account_id: string; role: string }[] }>(
        await run(['workspaces', 'members', teamId, '--json'], envOf(carol.key)),
      );
      assert.deepEqual(
        members.members.map((m) => `${m.account_id}:${m.role}`).sort(),
        [`${alpha.accountId}:owner`, `${carol.accountId}:member`, `${dave.accountId}:owner`].sort(),
      );
      const bySlug = await run(['workspaces', 'members', 'adm-team'], envOf(alpha.key));
      assert.match(bySlug.stdout, /^ACCOUNT +ORG +EMAIL +ROLE +JOINED$/m);
      assert.match(
        bySlug.stdout,
        new RegExp(`^${carol.accountId} +adm-carol +carol@example.com +member `, 'm'),
      );
      // Without an argument: the workspace commands use (the personal one here).
      const own = json<{ members: { account_id: string }[] }>(
        await run(['workspaces', 'members', '--json'], envOf(bravo.key)),
      );
      assert.deepEqual(
        own.members.map((m) => m.account_id),
        [bravo.accountId],
      );
    });

    it('refuses invitations the caller may not make, or that are wrong', async () => {
      // carol is a member, not an owner: 403.
      await fails(
        ['workspaces', 'invite', bravo.accountId, '-w', teamId],
        envOf(carol.key),
        4,
        /^agenthost: FORBIDDEN: /,
      );
      // bravo is not a member: the workspace does not exist for him.
      await fails(['workspaces', 'invite', carol.accountId, '-w', teamId], envOf(bravo.key), 5, /NOT_FOUND/);
      await fails(['workspaces', 'members', teamId], envOf(bravo.key), 5, /not a member of a workspace/);
      await fails(['workspaces', 'members', '-w', teamId], envOf(bravo.key), 5, /^agenthost: NOT_FOUND: /);
      await fails(
        ['workspaces', 'invite', 'carol@example.com', '-w', teamId],
        envOf(alpha.key),
        3,
        /CONFLICT/,
      );
      // An email with no account answers as one with an account would: a pending invitation.
      const nobody = json<{ id: string; email: string; account_id: null }>(
        await run(['workspaces', 'invite', 'nobody@example.com', '-w', teamId, '--json'], envOf(alpha.key)),
      );
      assert.deepEqual([nobody.email, nobody.account_id], ['nobody@example.com', null]);
      const revoked = await run(['workspaces', 'revoke', nobody.id, '-w', teamId], envOf(alpha.key));
      assert.equal(revoked.code, 0, revoked.stderr);
      assert.match(revoked.stderr, /revoked invitation/);
      await fails(['workspaces', 'revoke', nobody.id, '-w', teamId], envOf(alpha.key), 5, /NOT_FOUND/);
      // bravo declines an invitation: no membership.
      const toBravo = json<{ id: string }>(
        await run(['workspaces', 'invite', bravo.accountId, '-w', teamId, '--json'], envOf(alpha.key)),
      );
      const declined = json<{ declined: string }>(
        await run(['invitations', 'decline', toBravo.id, '--json'], envOf(bravo.key)),
      );
      assert.deepEqual(declined, { declined: toBravo.id });
      await fails(['workspaces', 'members', '-w', teamId], envOf(bravo.key), 5, /NOT_FOUND/);
      await fails(['workspaces', 'invite', 'not-an-id', '-w', teamId], envOf(alpha.key), 2, /INVALID_INPUT/);
      await fails(
        ['workspaces', 'invite', bravo.accountId, '--role', 'admin', '-w', teamId],
        envOf(alpha.key),
        2,
      );
      await fails(['workspaces', 'create', ''], envOf(alpha.key), 2, /INVALID_INPUT/);
      await fails(['workspaces', 'create', 'Taken', '--slug', 'adm-team'], envOf(alpha.key), 3, /CONFLICT/);
    });

    it('use: makes a workspace the profile’s default after checking membership; the file stays 0600', async () => {
      const cfgHome = join(home, 'cfg-use');
      const env = { XDG_CONFIG_HOME: cfgHome, HOME: home };
      const file = join(cfgHome, 'agenthost', 'config.json');
      assert.equal((await run(['login', '--url', p.url], env, { input: carol.key })).code, 0);

      // Not carol's workspace: refused, and the file is left as it was.
      const before = await readFile(file, 'utf8');
      await fails(['workspaces', 'use', bravo.workspaceId], env, 5, /not a member of a workspace/);
      assert.equal(await readFile(file, 'utf8'), before);

      const used = json<{ profile: string; workspace_id: string }>(
        await run(['workspaces', 'use', 'adm-team', '--json'], env),
      );
      assert.deepEqual([used.profile, used.workspace_id], ['default', teamId]);
      assert.equal((await stat(file)).mode & 0o777, 0o600);
      const saved = JSON.parse(await readFile(file, 'utf8')) as { profiles: Record<string, unknown> };
      assert.deepEqual(saved.profiles.default, { url: p.url, api_key: carol.key, workspace: teamId });

      // Workspace-scoped commands now act in it without -w; -w still overrides it.
      const task = json<{ workspace_id: string }>(
        await run(['tasks', 'create', 'In the team', '--json'], env),
      );
      assert.equal(task.workspace_id, teamId);
      const marked = await run(['workspaces', 'list'], env);
      assert.match(marked.stdout, new RegExp(`^\\* +${teamId} `, 'm'));
      const personal = json<{ workspace_id: string }>(
        await run(['tasks', 'create', 'Mine', '-w', carol.workspaceId, '--json'], env),
      );
      assert.equal(personal.workspace_id, carol.workspaceId);

      // With the key in the environment and no config file yet, `use` writes a profile with the URL only.
      const fresh = join(home, 'cfg-fresh');
      const res = await run(
        ['workspaces', 'use', teamId],
        envOf(alpha.key, { XDG_CONFIG_HOME: fresh, AGENTHOST_WORKSPACE: alpha.workspaceId }),
      );
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stdout, /^workspace +\S+$/m);
      assert.match(res.stderr, /AGENTHOST_WORKSPACE=\S+ still overrides it/);
      const freshFile = join(fresh, 'agenthost', 'config.json');
      assert.equal((await stat(freshFile)).mode & 0o777, 0o600);
      assert.deepEqual(JSON.parse(await readFile(freshFile, 'utf8')), {
        profiles: { default: { url: p.url, workspace: teamId } },
      });
    });

    it('remove and leave: owners remove members, anyone leaves, the last owner stays', async () => {
      const short = json<{ id: string }>(
        await run(['workspaces', 'create', 'Short Team', '--json'], envOf(alpha.key)),
      );
      for (const who of [bravo, dave]) {
        const invited = json<{ id: string }>(
          await run(['workspaces', 'invite', who.accountId, '-w', short.id, '--json'], envOf(alpha.key)),
        );
        const accepted = await run(['invitations', 'accept', invited.id], envOf(who.key));
        assert.equal(accepted.code, 0, accepted.stderr);
      }
      const memberIds = async () =>
        json<{ members: { account_id: string }[] }>(
          await run(['workspaces', 'members', short.id, '--json'], envOf(alpha.key)),
        )
          .members.map((m) => m.account_id)
          .sort();

      // A member may not remove another: 403.
      await fails(['workspaces', 'remove', dave.accountId, '-w', short.id], envOf(bravo.key), 4, /FORBIDDEN/);
      const removed = await run(['workspaces', 'remove', dave.accountId, '-w', short.id], envOf(alpha.key));
      assert.equal(removed.code, 0, removed.stderr);
      assert.match(removed.stderr, new RegExp(`removed ${dave.accountId} from workspace ${short.id}`));
      assert.deepEqual(await memberIds(), [alpha.accountId, bravo.accountId].sort());

      const left = json<{ left: string; account_id: string }>(
        await run(['workspaces', 'leave', '-w', short.id, '--json'], envOf(bravo.key)),
      );
      assert.deepEqual(left, { left: short.id, account_id: bravo.accountId });
      assert.deepEqual(await memberIds(), [alpha.accountId]);
      // Gone for bravo: the workspace is not found any more.
      await fails(['workspaces', 'members', short.id], envOf(bravo.key), 5, /not a member of a workspace/);

      // The last owner cannot leave: the workspace would have none.
      await fails(['workspaces', 'leave', '-w', short.id], envOf(alpha.key), 3, /CONFLICT/);
      assert.deepEqual(await memberIds(), [alpha.accountId]);
    });
  });

  describe('secrets', () => {
    it('sets a secret from stdin, lists names and dates (never values), replaces and deletes it', async () => {
      const none = await run(['secrets', 'list'], envOf(alpha.key));
      assert.equal(none.code, 0, none.stderr);
      assert.equal(none.stdout, '');
      assert.match(none.stderr, /no secrets/);
      assert.deepEqual(
        json<{ secrets: unknown[] }>(await run(['secrets', 'list', '--json'], envOf(alpha.key))).secrets,
        [],
      );

      const set = await run(['secrets', 'set', 'OPENAI_API_KEY'], envOf(alpha.key), {
        input: `${SECRET_VALUES[0]}\n`,
      });
      assert.equal(set.code, 0, set.stderr);
      assert.match(set.stdout, /^name +OPENAI_API_KEY$/m);
      assert.match(set.stdout, /^status +created$/m);
      assert.match(set.stdout, new RegExp(`^workspace +${alpha.workspaceId}$`, 'm'));
      // Stored exactly as piped, the shell's trailing newline dropped.
      assert.deepEqual(await p.deps.vault.resolve(alpha.workspaceId, ['OPENAI_API_KEY']), {
        OPENAI_API_KEY: SECRET_VALUES[0],
      });

      p.clock.advance(60_000);
      const replaced = json<{ name: string; created: boolean; created_at: string; updated_at: string }>(
        await run(['secrets', 'set', 'OPENAI_API_KEY', '--json'], envOf(alpha.key), {
          input: SECRET_VALUES[1],
        }),
      );
      assert.equal(replaced.created, false);
      assert.ok(replaced.updated_at > replaced.created_at, 'replacing keeps the creation time');
      assert.deepEqual(await p.deps.vault.resolve(alpha.workspaceId, ['OPENAI_API_KEY']), {
        OPENAI_API_KEY: SECRET_VALUES[1],
      });

      const listed = json<{ secrets: Record<string, unknown>[] }>(
        await run(['secrets', 'list', '--json'], envOf(alpha.key)),
      );
      assert.deepEqual(listed.secrets, [
        { name: 'OPENAI_API_KEY', created_at: replaced.created_at, updated_at: replaced.updated_at },
      ]);
      const table = await run(['secrets', 'list'], envOf(alpha.key));
      assert.match(table.stdout, /^NAME +CREATED +UPDATED$/m);
      assert.match(
        table.stdout,
        new RegExp(`^OPENAI_API_KEY +${replaced.created_at} +${replaced.updated_at}$`, 'm'),
      );

      const del = await run(['secrets', 'delete', 'OPENAI_API_KEY'], envOf(alpha.key));
      assert.equal(del.code, 0, del.stderr);
      assert.match(del.stderr, /deleted secret OPENAI_API_KEY/);
      assert.deepEqual(await p.deps.vault.resolve(alpha.workspaceId, ['OPENAI_API_KEY']), {});
      await fails(['secrets', 'delete', 'OPENAI_API_KEY'], envOf(alpha.key), 5, /^agenthost: NOT_FOUND: /);
    });

    it('acts in the team workspace for its owner; a member may list but not set; a stranger sees nothing', async () => {
      const set = await run(['secrets', 'set', 'TEAM_TOKEN', '-w', teamId, '--json'], envOf(alpha.key), {
        input: SECRET_VALUES[2],
      });
      assert.equal(json<{ created: boolean }>(set).created, true);
      const asMember = json<{ secrets: { name: string }[] }>(
        await run(['secrets', 'list', '-w', teamId, '--json'], envOf(carol.key)),
      );
      assert.deepEqual(
        asMember.secrets.map((s) => s.name),
        ['TEAM_TOKEN'],
      );
      // Told before the value is read; the API would refuse it too.
      const member = await run(['secrets', 'set', 'TEAM_TOKEN', '-w', teamId], envOf(carol.key), {
        input: SECRET_VALUES[0],
      });
      assert.equal(member.code, 4, member.stderr);
      assert.match(
        member.stderr,
        /only owners of workspace Admin Team may set its secrets; your role there is member/,
      );
      await fails(['secrets', 'delete', 'TEAM_TOKEN', '-w', teamId], envOf(carol.key), 4, /FORBIDDEN/);
      await fails(['secrets', 'list', '-w', teamId], envOf(bravo.key), 5, /NOT_FOUND/);
      await fails(['secrets', 'set', 'X', '-w', teamId], envOf(bravo.key), 5, /not a member of a workspace/);
      assert.deepEqual(
        await p.deps.vault.resolve(teamId, ['TEAM_TOKEN']),
        { TEAM_TOKEN: SECRET_VALUES[2] },
        'unchanged',
      );
    });

    it('never takes a value as an argument, refuses a bad name before asking, and an empty value', async () => {
      await fails(
        ['secrets', 'set', 'API_TOKEN', SECRET_VALUES[0] as string],
        envOf(alpha.key),
        2,
        /too many arguments for 'set'\. Expected 1 argument but got 2 \(not repeated here/,
      );
      // Nor anywhere else a value might be typed by mistake: commander's errors leave it out.
      await fails(
        ['login', SECRET_VALUES[0] as string],
        envOf(alpha.key),
        2,
        /too many arguments for 'login'/,
      );
      await fails(
        ['secrets', 'set', 'API_TOKEN', `--value=${SECRET_VALUES[0]}`],
        envOf(alpha.key),
        2,
        /unknown option '--value=…'/,
      );
      await fails(['secrets', 'set', 'lower-case'], envOf(alpha.key), 2, /environment variable name/);
      await fails(['secrets', 'delete', '1BAD'], envOf(alpha.key), 2);
      await fails(['secrets', 'set', 'EMPTY'], envOf(alpha.key), 2, /nothing was given/);
      const listed = json<{ secrets: unknown[] }>(await run(['secrets', 'list', '--json'], envOf(alpha.key)));
      assert.deepEqual(listed.secrets, [], 'nothing was stored');
    });
  });

  describe('keys', () => {
    it('creates a key shown once, lists keys without them, revokes by name and by id', async () => {
      const created = await run(['keys', 'create', '--name', 'ci', '--json'], envOf(alpha.key));
      const key = json<{ id: string; name: string; api_key: string; agent: null; prefix: string }>(created);
      assert.match(key.api_key, /^ahk_/);
      assert.equal(key.name, 'ci');
      assert.ok(
        key.api_key.startsWith(key.prefix.replace(/…$/, '')),
        `${key.prefix} is how it is recognised`,
      );
      assert.match(created.stderr, /shown once: store it now/);

      const human = await run(['keys', 'create', '--name', 'laptop'], envOf(alpha.key));
      assert.equal(human.code, 0, human.stderr);
      assert.match(human.stdout, /^api key +ahk_\S+$/m);
      assert.match(human.stderr, /shown once: store it now/);
      const laptopKey = /^api key +(\S+)$/m.exec(human.stdout)?.[1] as string;

      // The new key works, and is marked as the one in use when the CLI runs with it.
      const listed = json<{ api_keys: Record<string, unknown>[] }>(
        await run(['keys', 'list', '--json'], envOf(key.api_key)),
      );
      assert.deepEqual(listed.api_keys.map((k) => k.name).sort(), ['ci', 'default', 'laptop']);
      assert.ok(
        listed.api_keys.every((k) => !('api_key' in k) && !('hash' in k)),
        'never the keys',
      );
      assert.ok(!JSON.stringify(listed).includes(key.api_key));
      const table = await run(['keys', 'list'], envOf(key.api_key));
      assert.match(table.stdout, /^ID +NAME +PREFIX +AGENT +CREATED +IN USE$/m);
      assert.match(table.stdout, new RegExp(`^${key.id} +ci +${key.prefix} +- +\\S+ +this CLI$`, 'm'));
      assert.match(table.stdout, /^\S+ +default +ahk_\S+ +- +\S+$/m, 'the others are not in use');
      assert.ok(!table.stdout.includes(key.api_key));
      const who = json<{ key: { id: string; name: string } }>(
        await run(['whoami', '--json'], envOf(key.api_key)),
      );
      assert.deepEqual([who.key.id, who.key.name], [key.id, 'ci'], 'whoami names the key too');

      const byName = await run(['keys', 'revoke', 'laptop'], envOf(alpha.key));
      assert.equal(byName.code, 0, byName.stderr);
      assert.match(byName.stderr, /revoked API key laptop/);
      await fails(['keys', 'list'], envOf(laptopKey), 4, /UNAUTHORIZED/);

      // Revoking the key the CLI runs with works, with a warning.
      const own = await run(['keys', 'revoke', key.id, '--json'], envOf(key.api_key));
      assert.deepEqual(json(own), { revoked: key.id, name: 'ci' });
      assert.match(own.stderr, /that was the key this CLI runs with/);
      await fails(['keys', 'list'], envOf(key.api_key), 4);
    });

    it('creates an agent’s key: tasks created with it record the agent', async () => {
      const created = json<{ api_key: string; agent: string }>(
        await run(['keys', 'create', '--name', 'bot', '--agent', 'triage-bot', '--json'], envOf(bravo.key)),
      );
      assert.equal(created.agent, 'triage-bot');
      const task = json<{ created_by: string }>(
        await run(['tasks', 'create', 'Triage inbox', '--json'], envOf(created.api_key)),
      );
      assert.equal(task.created_by, 'triage-bot');
      await fails(['keys', 'create', '--agent', 'Not An Agent'], envOf(bravo.key), 2, /INVALID_INPUT/);
    });

    it('refuses an ambiguous name, an unknown key, another account’s key and the last key', async () => {
      for (let i = 0; i < 2; i++)
        assert.equal((await run(['keys', 'create', '--name', 'dup'], envOf(dave.key))).code, 0);
      await fails(['keys', 'revoke', 'dup'], envOf(dave.key), 2, /2 keys are named dup/);
      await fails(['keys', 'revoke', 'no-such-key'], envOf(dave.key), 5, /no API key with the id or name/);
      const alphaKeys = json<{ api_keys: { id: string }[] }>(
        await run(['keys', 'list', '--json'], envOf(alpha.key)),
      );
      await fails(['keys', 'revoke', alphaKeys.api_keys[0]?.id as string], envOf(dave.key), 5);
      // carol's only key: the platform keeps an account's last key.
      await fails(['keys', 'revoke', 'default'], envOf(carol.key), 3, /CONFLICT: .*last API key/);
    });
  });
});

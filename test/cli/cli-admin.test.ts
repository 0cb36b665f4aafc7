import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { writeAgentDir } from '../helpers/agent-dir.ts';
import { runCliInProcess } from '../helpers/cli-in-process.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/**
 * The CLI's account and workspace administration as its users run it, against
 * the local platform: its command tree in this process (helpers/cli-in-process.ts says why not a
 * subprocess each). secrets, keys, workspaces (and `use`), tasks, usage and
 * billing: each command's human and --json output with real values, and the failures with their
 * documented exit codes (2 usage, 3 conflict, 4 auth or role, 5 not found).
 */

/** Secret values set in this file: no command may ever print one, on stdout or stderr. */
const SECRET_VALUES = ['sk-live-4f9c2e7b-never-print-me', 'second-value-7a1d0c3e', 'bravo-secret-93be'];

type Account = { key: string; accountId: string; workspaceId: string };

describe('the CLI’s admin commands against the local platform', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let home: string;
  /** alpha owns the team workspace; carol is a member of it (not an owner); bravo is a stranger. */
  let alpha: Account;
  let bravo: Account;
  let carol: Account;
  let dave: Account;
  let teamId: string;

  /** Runs the CLI and checks that no secret value reached its output, whatever the command. */
  async function run(args: string[], env: Record<string, string>, options: { input?: string } = {}) {
    const res = await runCliInProcess(args, env, options);
    for (const value of SECRET_VALUES) {
      assert.ok(!res.stdout.includes(value), `${args.join(' ')} printed a secret on stdout`);
      assert.ok(!res.stderr.includes(value), `${args.join(' ')} printed a secret on stderr`);
    }
    return res;
  }
  const envOf = (key: string, extra: Record<string, string> = {}) => ({
    AGENTHOST_URL: p.url,
    AGENTHOST_API_KEY: key,
    XDG_CONFIG_HOME: join(home, 'none'),
    ...extra,
  });
  /** A failure: the exit code, one line on stderr, nothing on stdout, no stack trace. */
  async function fails(args: string[], env: Record<string, string>, code: number, pattern?: RegExp) {
    const res = await run(args, env);
    assert.equal(res.code, code, `${args.join(' ')}: ${res.stderr}`);
    assert.equal(res.stdout, '', `${args.join(' ')}: nothing on stdout`);
    assert.doesNotMatch(res.stderr, /\n\s+at /, 'no stack trace');
    if (pattern) assert.match(res.stderr, pattern, args.join(' '));
    return res;
  }
  const json = <T>(res: { code: number | null; stdout: string; stderr: string }): T => {
    assert.equal(res.code, 0, res.stderr);
    return JSON.parse(res.stdout) as T;
  };

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'agenthost-cli-admin-'));
    fake = await startFakeLlm();
    p = await startTestPlatform({ OPENAI_API_KEY: 'sk-openai-test', OPENAI_BASE_URL: fake.baseUrls.openai });
    alpha = await p.createAccount('adm-alpha', 'pro');
    bravo = await p.createAccount('adm-bravo', 'pro');
    const withEmail = async (org: string, email: string): Promise<Account> => {
      const c = await createAccount(p.deps, { org, tier: 'pro', email });
      return { key: c.api_key, accountId: c.account.id, workspaceId: c.workspace_id };
    };
    carol = await withEmail('adm-carol', 'carol@example.com');
    dave = await withEmail('adm-dave', 'dave@example.com');
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

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountKeys } from '../../functions/core/accounts/account-keys.ts';
import { authenticate } from '../../functions/core/api-keys/api-keys.ts';
import { memberKeys } from '../../functions/core/workspaces/member-record.ts';
import { parseConfig } from '../../functions/platform/config.ts';
import { createDeps } from '../../functions/platform/deps.ts';
import { type DynamoDbLocal, startDynamoDbLocal } from '../helpers/dynamodb-local.ts';
import { runCli } from '../helpers/process.ts';

describe('operator CLI in AWS mode (DynamoDB wire protocol on loopback)', () => {
  let dynamo: DynamoDbLocal;
  before(async () => {
    dynamo = await startDynamoDbLocal('agenthost-cli-test');
    // The in-process store below uses the SDK's default credential chain, which reads these.
    process.env.AWS_ACCESS_KEY_ID ??= 'test';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
  });
  after(() => dynamo.close());

  it('creates the account, workspace and key in the table; the key authenticates', async () => {
    const res = await runCli(
      ['accounts', 'create', '--org', 'cloud-co', '--tier', 'team', '--json'],
      dynamo.env,
    );
    assert.equal(res.code, 0, res.stderr);
    const out = JSON.parse(res.stdout) as Record<string, string>;

    const deps = await createDeps(parseConfig(dynamo.env));
    try {
      const auth = await authenticate(deps, `Bearer ${out.api_key}`);
      assert.equal(auth.org, 'cloud-co');
      assert.equal(auth.tier, 'team');
      assert.equal(auth.personalWorkspaceId, out.workspace_id);
      const member = await deps.store.get(
        memberKeys.member(out.workspace_id as string, out.account_id as string),
      );
      assert.equal(member?.role, 'owner');
    } finally {
      await deps.store.close();
    }

    const again = await runCli(['accounts', 'create', '--org', 'cloud-co', '--tier', 'pro'], dynamo.env);
    assert.equal(again.code, 3, 'the org slug guard holds in DynamoDB too');
    assert.match(again.stderr, /taken/);
    const check = await createDeps(parseConfig(dynamo.env));
    try {
      const org = await check.store.get(accountKeys.org('cloud-co'));
      assert.equal(org?.account_id, out.account_id, 'the failed create left the first account’s guard alone');
    } finally {
      await check.store.close();
    }
  });
});

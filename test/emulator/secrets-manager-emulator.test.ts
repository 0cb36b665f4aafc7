/**
 * The Secrets Manager emulator, through the real SecretsManagerClient over loopback HTTP: the
 * vault contract suite with the platform's SecretsManagerVault on it, the operations and fields the
 * platform relies on, AWS's error shapes, seeding (under a given ARN too), and restart persistence.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import {
  BatchGetSecretValueCommand,
  CreateSecretCommand,
  DeleteSecretCommand,
  GetSecretValueCommand,
  InvalidParameterException,
  InvalidRequestException,
  PutSecretValueCommand,
  ResourceExistsException,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { SecretsManagerVault } from '../../functions/adapters/aws/secrets-manager-vault.ts';
import { SecretsManagerEmulator } from '../../functions/emulator/secrets-manager-emulator.ts';
import { vaultContract } from '../contract/vault-contract.ts';

const REGION = 'eu-west-1';
const ACCOUNT = '123456789012';

interface Running {
  dir: string;
  emulator: SecretsManagerEmulator;
  client: SecretsManagerClient;
  url: string;
}

async function start(dir?: string, now?: () => Date): Promise<Running> {
  const dataDir = dir ?? (await mkdtemp(join(tmpdir(), 'agenthost-sm-emu-')));
  const emulator = new SecretsManagerEmulator({
    dataDir,
    region: REGION,
    accountId: ACCOUNT,
    ...(now ? { now } : {}),
  });
  const url = await emulator.listen(0, '127.0.0.1');
  const client = new SecretsManagerClient({
    region: REGION,
    endpoint: url,
    credentials: { accessKeyId: 'emulated', secretAccessKey: 'emulated' },
  });
  return { dir: dataDir, emulator, client, url };
}

async function stop(r: Running, removeDir = true): Promise<void> {
  r.client.destroy();
  await r.emulator.close();
  if (removeDir) await rm(r.dir, { recursive: true, force: true });
}

vaultContract('SecretsManagerVault on the Secrets Manager emulator', async () => {
  const r = await start();
  return {
    vault: new SecretsManagerVault({ prefix: 'agenthost/secrets', client: r.client }),
    close: () => stop(r),
  };
});

describe('Secrets Manager emulator', () => {
  let r: Running;
  beforeEach(async () => {
    r = await start();
  });
  afterEach(async () => {
    await stop(r);
  });

  it('creates a secret with an AWS-shaped ARN and reads it by name, full ARN and partial ARN', async () => {
    const created = await r.client.send(
      new CreateSecretCommand({
        Name: 'agenthost/prod/ws-1/API_KEY',
        SecretString: 'v1',
        KmsKeyId: 'arn:aws:kms:eu-west-1:123456789012:key/1234',
        Tags: [{ Key: 'agenthost:workspace', Value: 'ws-1' }],
      }),
    );
    assert.match(
      String(created.ARN),
      /^arn:aws:secretsmanager:eu-west-1:123456789012:secret:agenthost\/prod\/ws-1\/API_KEY-[A-Za-z0-9]{6}$/,
    );
    assert.equal(created.Name, 'agenthost/prod/ws-1/API_KEY');
    assert.ok(created.VersionId);
    const partial = String(created.ARN).slice(0, -7);
    for (const SecretId of ['agenthost/prod/ws-1/API_KEY', String(created.ARN), partial]) {
      const got = await r.client.send(new GetSecretValueCommand({ SecretId }));
      assert.equal(got.SecretString, 'v1');
      assert.equal(got.ARN, created.ARN);
      assert.equal(got.VersionId, created.VersionId);
      assert.deepEqual(got.VersionStages, ['AWSCURRENT']);
      assert.ok(got.CreatedDate instanceof Date && Math.abs(got.CreatedDate.getTime() - Date.now()) < 60_000);
    }
  });

  it('PutSecretValue makes a new current version; the previous one stays readable as AWSPREVIOUS', async () => {
    await r.client.send(new CreateSecretCommand({ Name: 's', SecretString: 'one' }));
    const put = await r.client.send(new PutSecretValueCommand({ SecretId: 's', SecretString: 'two' }));
    assert.deepEqual(put.VersionStages, ['AWSCURRENT']);
    assert.equal((await r.client.send(new GetSecretValueCommand({ SecretId: 's' }))).SecretString, 'two');
    const previous = await r.client.send(
      new GetSecretValueCommand({ SecretId: 's', VersionStage: 'AWSPREVIOUS' }),
    );
    assert.equal(previous.SecretString, 'one');
    // A retried request with the same token is idempotent; the same token with another value is refused.
    const token = '11111111-2222-3333-4444-555555555555';
    const first = await r.client.send(
      new PutSecretValueCommand({ SecretId: 's', SecretString: 'three', ClientRequestToken: token }),
    );
    assert.equal(first.VersionId, token);
    await r.client.send(
      new PutSecretValueCommand({ SecretId: 's', SecretString: 'three', ClientRequestToken: token }),
    );
    await assert.rejects(
      r.client.send(
        new PutSecretValueCommand({ SecretId: 's', SecretString: 'four', ClientRequestToken: token }),
      ),
      ResourceExistsException,
    );
  });

  it('BatchGetSecretValue answers values and per-id errors as AWS does', async () => {
    const a = await r.client.send(new CreateSecretCommand({ Name: 'a', SecretString: 'va' }));
    await r.client.send(new CreateSecretCommand({ Name: 'b', SecretString: 'vb' }));
    const out = await r.client.send(
      new BatchGetSecretValueCommand({ SecretIdList: ['a', 'missing', String(a.ARN), 'b'] }),
    );
    assert.deepEqual(
      out.SecretValues?.map((v) => [v.Name, v.SecretString, v.ARN === a.ARN]),
      [
        ['a', 'va', true],
        ['a', 'va', true],
        ['b', 'vb', false],
      ],
    );
    assert.deepEqual(out.Errors, [
      {
        SecretId: 'missing',
        ErrorCode: 'ResourceNotFoundException',
        Message: "Secrets Manager can't find the specified secret.",
      },
    ]);
    await assert.rejects(
      r.client.send(
        new BatchGetSecretValueCommand({ SecretIdList: Array.from({ length: 21 }, (_, i) => `s${i}`) }),
      ),
      InvalidParameterException,
    );
  });

  it('answers the errors the vault relies on, as modeled exceptions with their messages', async () => {
    await assert.rejects(
      r.client.send(new PutSecretValueCommand({ SecretId: 'nope', SecretString: 'x' })),
      (e: unknown) => {
        assert.ok(e instanceof ResourceNotFoundException);
        assert.equal(e.message, "Secrets Manager can't find the specified secret.");
        assert.equal(e.$metadata.httpStatusCode, 400);
        return true;
      },
    );
    await r.client.send(new CreateSecretCommand({ Name: 'dup', SecretString: 'x' }));
    await assert.rejects(
      r.client.send(new CreateSecretCommand({ Name: 'dup', SecretString: 'y' })),
      (e: unknown) => e instanceof ResourceExistsException && /dup already exists/.test(e.message),
    );
    await assert.rejects(
      r.client.send(new DeleteSecretCommand({ SecretId: 'nope', ForceDeleteWithoutRecovery: true })),
      ResourceNotFoundException,
    );
    await assert.rejects(
      r.client.send(new CreateSecretCommand({ Name: 'big', SecretString: 'x'.repeat(65_537) })),
      InvalidParameterException,
    );
    await assert.rejects(
      r.client.send(new CreateSecretCommand({ Name: 'bad name!', SecretString: 'x' })),
      InvalidParameterException,
    );
  });

  it('a delete with a recovery window blocks reads and re-creation until restored; a forced delete frees the name', async () => {
    await r.client.send(new CreateSecretCommand({ Name: 'soft', SecretString: 'x' }));
    const deleted = await r.client.send(
      new DeleteSecretCommand({ SecretId: 'soft', RecoveryWindowInDays: 7 }),
    );
    assert.ok(deleted.DeletionDate && deleted.DeletionDate.getTime() - Date.now() > 6.9 * 86_400_000);
    await assert.rejects(
      r.client.send(new GetSecretValueCommand({ SecretId: 'soft' })),
      (e: unknown) => e instanceof InvalidRequestException && /marked for deletion/.test(e.message),
    );
    // The message the vault's retry loop looks for.
    await assert.rejects(
      r.client.send(new CreateSecretCommand({ Name: 'soft', SecretString: 'y' })),
      (e: unknown) => e instanceof InvalidRequestException && /scheduled for deletion/i.test(e.message),
    );
    await r.client.send(new DeleteSecretCommand({ SecretId: 'soft', ForceDeleteWithoutRecovery: true }));
    await r.client.send(new CreateSecretCommand({ Name: 'soft', SecretString: 'y' }));
    assert.equal((await r.client.send(new GetSecretValueCommand({ SecretId: 'soft' }))).SecretString, 'y');
    await assert.rejects(
      r.client.send(
        new DeleteSecretCommand({
          SecretId: 'soft',
          ForceDeleteWithoutRecovery: true,
          RecoveryWindowInDays: 7,
        }),
      ),
      InvalidParameterException,
    );
  });

  it('a secret created without a value has no current version to read', async () => {
    await r.client.send(new CreateSecretCommand({ Name: 'empty' }));
    await assert.rejects(
      r.client.send(new GetSecretValueCommand({ SecretId: 'empty' })),
      (e: unknown) => e instanceof ResourceNotFoundException && /staging label: AWSCURRENT/.test(e.message),
    );
  });

  it('seeds a secret under a given ARN, readable by that ARN as readSecretString does', async () => {
    const arn = `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:ProviderKeys1A2B3C-xYz123`;
    r.emulator.createSecret({ name: 'ProviderKeys1A2B3C', secretString: '{"openai":"sk-1"}', arn });
    const got = await r.client.send(new GetSecretValueCommand({ SecretId: arn }));
    assert.equal(got.SecretString, '{"openai":"sk-1"}');
    assert.equal(got.ARN, arn);
    r.emulator.putSecretValue(arn, '{"openai":"sk-2"}');
    assert.equal(
      (await r.client.send(new GetSecretValueCommand({ SecretId: 'ProviderKeys1A2B3C' }))).SecretString,
      '{"openai":"sk-2"}',
    );
    assert.throws(() => r.emulator.createSecret({ name: 'other', arn }), /already exists/);
  });
});

describe('Secrets Manager emulator on the wire', () => {
  let r: Running;
  before(async () => {
    r = await start();
  });
  after(async () => {
    await stop(r);
  });

  const post = (body: string, target: string | undefined, headers: Record<string, string> = {}) =>
    fetch(`${r.url}/`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-amz-json-1.1',
        ...(target ? { 'x-amz-target': target } : {}),
        ...headers,
      },
      body,
    });

  it('errors are status 400 with {"__type", "Message"}', async () => {
    const res = await post('{"SecretId":"missing"}', 'secretsmanager.GetSecretValue');
    assert.equal(res.status, 400);
    assert.deepEqual(await res.json(), {
      __type: 'ResourceNotFoundException',
      Message: "Secrets Manager can't find the specified secret.",
    });
  });

  for (const [label, body, target, type] of [
    ['malformed JSON', '{"SecretId":', 'secretsmanager.GetSecretValue', 'SerializationException'],
    ['a JSON array', '[]', 'secretsmanager.GetSecretValue', 'SerializationException'],
    ['an unknown operation', '{}', 'secretsmanager.RotateSecret', 'UnknownOperationException'],
    ['no target', '{}', undefined, 'UnknownOperationException'],
    ['a wrong field type', '{"SecretId":42}', 'secretsmanager.GetSecretValue', 'InvalidParameterException'],
    ['a missing field', '{}', 'secretsmanager.PutSecretValue', 'InvalidParameterException'],
  ] as const) {
    it(`answers ${label} with ${type}, and keeps serving`, async () => {
      const res = await post(body, target);
      assert.equal(res.status, 400);
      assert.equal(((await res.json()) as { __type: string }).__type, type);
      const ok = await post('{"SecretIdList":["x"]}', 'secretsmanager.BatchGetSecretValue');
      assert.equal(ok.status, 200);
    });
  }

  it('refuses a body over its limit with 413 without reading it all', async () => {
    const res = await post(
      JSON.stringify({ Name: 'x', SecretString: 'x'.repeat(2 * 1024 * 1024) }),
      'secretsmanager.CreateSecret',
    );
    assert.equal(res.status, 413);
    assert.equal(((await res.json()) as { __type: string }).__type, 'RequestEntityTooLargeException');
  });
});

describe('Secrets Manager emulator persistence', () => {
  it('secrets survive a restart, in a 0600 state file that holds no value in clear', async () => {
    const first = await start();
    const created = await first.client.send(
      new CreateSecretCommand({ Name: 'kept', SecretString: 'first-VALUE-on-disk' }),
    );
    await first.client.send(
      new PutSecretValueCommand({ SecretId: 'kept', SecretString: 'second-VALUE-on-disk' }),
    );
    await first.client.send(
      new CreateSecretCommand({ Name: 'binary', SecretBinary: Buffer.from('binary-VALUE-on-disk') }),
    );
    await first.client.send(new CreateSecretCommand({ Name: 'gone', SecretString: 'x' }));
    await first.client.send(new DeleteSecretCommand({ SecretId: 'gone', ForceDeleteWithoutRecovery: true }));
    await stop(first, false);
    const file = join(first.dir, 'secrets-manager.json');
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    assert.equal((await stat(join(first.dir, 'secrets-manager.key'))).mode & 0o777, 0o600);
    const onDisk = await readFile(file);
    for (const value of ['first-VALUE-on-disk', 'second-VALUE-on-disk', 'binary-VALUE-on-disk']) {
      for (const form of [value, Buffer.from(value).toString('base64')]) {
        assert.equal(onDisk.includes(form), false, `${form} is in the state file in clear`);
      }
    }

    const second = await start(first.dir);
    try {
      const got = await second.client.send(new GetSecretValueCommand({ SecretId: String(created.ARN) }));
      assert.equal(got.SecretString, 'second-VALUE-on-disk');
      await assert.rejects(
        second.client.send(new GetSecretValueCommand({ SecretId: 'gone' })),
        ResourceNotFoundException,
      );
    } finally {
      await stop(second);
    }
  });

  it('refuses to start without the key its state was encrypted with, and encrypts a plain state from before', async () => {
    const first = await start();
    await first.client.send(new CreateSecretCommand({ Name: 'kept', SecretString: 'kept-VALUE' }));
    await stop(first, false);
    const key = join(first.dir, 'secrets-manager.key');
    await writeFile(key, `${randomBytes(32).toString('base64')}\n`);
    assert.throws(() => new SecretsManagerEmulator({ dataDir: first.dir }), /does not decrypt/);
    await rm(key);
    assert.throws(() => new SecretsManagerEmulator({ dataDir: first.dir }), /is missing/);
    await rm(first.dir, { recursive: true, force: true });

    // A data dir written before values were encrypted: read as it is, written back encrypted.
    const legacy = await mkdtemp(join(tmpdir(), 'agenthost-sm-emu-'));
    const arn = `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:old-AbCdEf`;
    const version = { versionId: 'v1', secretString: 'legacy-VALUE', createdDate: 0 };
    await writeFile(
      join(legacy, 'secrets-manager.json'),
      JSON.stringify({
        secrets: [{ arn, name: 'old', tags: [], createdDate: 0, lastChangedDate: 0, current: version }],
      }),
    );
    const r = await start(legacy);
    try {
      assert.equal(
        (await r.client.send(new GetSecretValueCommand({ SecretId: 'old' }))).SecretString,
        'legacy-VALUE',
      );
      assert.equal(
        (await readFile(join(legacy, 'secrets-manager.json'), 'utf8')).includes('legacy-VALUE'),
        false,
      );
    } finally {
      await stop(r);
    }
  });

  it('a scheduled deletion completes when its recovery window has passed', async () => {
    let now = new Date('2030-01-01T00:00:00Z');
    const r = await start(undefined, () => now);
    try {
      await r.client.send(new CreateSecretCommand({ Name: 'later', SecretString: 'x' }));
      await r.client.send(new DeleteSecretCommand({ SecretId: 'later', RecoveryWindowInDays: 7 }));
      now = new Date('2030-01-08T00:00:01Z');
      await r.client.send(new CreateSecretCommand({ Name: 'later', SecretString: 'y' }));
      assert.equal((await r.client.send(new GetSecretValueCommand({ SecretId: 'later' }))).SecretString, 'y');
    } finally {
      await stop(r);
    }
  });
});

/**
 * The SecretVault contract: one suite, run against both adapters (the local AES-256-GCM vault on a
 * temp SQLite file, and the Secrets Manager vault on a client mocked with aws-sdk-client-mock and
 * backed by an in-memory map that answers as Secrets Manager does). Then each adapter's own
 * guarantees: the exact Secrets Manager requests, and the local vault's key-file handling and
 * encryption at rest.
 */
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import {
  BatchGetSecretValueCommand,
  CreateSecretCommand,
  DecryptionFailure,
  DeleteSecretCommand,
  InvalidParameterException,
  InvalidRequestException,
  PutSecretValueCommand,
  ResourceExistsException,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { SecretsManagerVault } from '../../functions/adapters/aws/secrets-manager-vault.ts';
import { LocalSecretVault } from '../../functions/adapters/local/local-secret-vault.ts';
import { SqliteStore } from '../../functions/adapters/local/sqlite-store.ts';
import { VaultConfigurationError } from '../../functions/ports/secret-vault.ts';
import { names, type VaultFixture, vaultContract } from './vault-contract.ts';

// ---------------------------------------------------------------------------------------------
// Local vault fixture

async function localFixture(): Promise<VaultFixture> {
  const dir = await mkdtemp(join(tmpdir(), 'agenthost-vault-'));
  const store = new SqliteStore(join(dir, 'store.db'));
  try {
    const vault = await LocalSecretVault.open(store, join(dir, 'vault.key'));
    return {
      vault,
      close: async () => {
        await store.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await store.close();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// Secrets Manager fixture: a mocked client backed by a map, answering as Secrets Manager does.

const MAX_SECRET_STRING_BYTES = 65_536;
const ARN_PREFIX = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:';

interface FakeSecretsManager {
  client: SecretsManagerClient;
  mock: ReturnType<typeof mockSecretsManager>;
  secrets: Map<string, string>;
  /** Runs before CreateSecret looks at the map (to stage a concurrent create). */
  beforeCreate?: (name: string) => void;
}

const notFound = (message = "Secrets Manager can't find the specified secret.") =>
  new ResourceNotFoundException({ message, $metadata: {} });

function checkSize(value: string | undefined): void {
  if (value !== undefined && Buffer.byteLength(value, 'utf8') > MAX_SECRET_STRING_BYTES) {
    throw new InvalidParameterException({ message: 'SecretString is too long', $metadata: {} });
  }
}

const mockSecretsManager = (client: SecretsManagerClient) => mockClient(client);

function fakeSecretsManager(): FakeSecretsManager {
  // A mock on this instance only, so suites and cases never share one.
  const client = new SecretsManagerClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
  });
  const secrets = new Map<string, string>();
  const mock = mockSecretsManager(client);
  const fake: FakeSecretsManager = { client, mock, secrets };

  mock.on(PutSecretValueCommand).callsFake(async (input) => {
    const id = String(input.SecretId);
    if (!secrets.has(id)) throw notFound();
    checkSize(input.SecretString);
    secrets.set(id, String(input.SecretString));
    return { ARN: `${ARN_PREFIX}${id}-AbCdEf`, Name: id, VersionId: crypto.randomUUID() };
  });
  mock.on(CreateSecretCommand).callsFake(async (input) => {
    const name = String(input.Name);
    fake.beforeCreate?.(name);
    if (secrets.has(name)) {
      throw new ResourceExistsException({
        message: `The operation failed because the secret ${name} already exists.`,
        $metadata: {},
      });
    }
    checkSize(input.SecretString);
    secrets.set(name, String(input.SecretString));
    return { ARN: `${ARN_PREFIX}${name}-AbCdEf`, Name: name, VersionId: crypto.randomUUID() };
  });
  mock.on(DeleteSecretCommand).callsFake(async (input) => {
    const id = String(input.SecretId);
    if (!secrets.delete(id)) throw notFound();
    return { ARN: `${ARN_PREFIX}${id}-AbCdEf`, Name: id, DeletionDate: new Date() };
  });
  mock.on(BatchGetSecretValueCommand).callsFake(async (input) => {
    const ids = input.SecretIdList ?? [];
    if (ids.length > 20) {
      throw new InvalidParameterException({
        message: 'SecretIdList must contain at most 20 secret ids',
        $metadata: {},
      });
    }
    const SecretValues = [];
    const Errors = [];
    for (const id of ids) {
      const value = secrets.get(id);
      if (value === undefined) {
        Errors.push({
          SecretId: id,
          ErrorCode: 'ResourceNotFoundException',
          Message: "Secrets Manager can't find the specified secret.",
        });
      } else {
        SecretValues.push({
          ARN: `${ARN_PREFIX}${id}-AbCdEf`,
          Name: id,
          VersionId: 'v1',
          SecretString: value,
          VersionStages: ['AWSCURRENT'],
          CreatedDate: new Date(),
        });
      }
    }
    return { SecretValues, Errors };
  });
  return fake;
}

async function secretsManagerFixture(): Promise<VaultFixture> {
  const fake = fakeSecretsManager();
  const vault = new SecretsManagerVault({ prefix: 'agenthost/secrets', client: fake.client });
  return {
    vault,
    close: async () => {
      fake.mock.restore();
      fake.client.destroy();
    },
  };
}

vaultContract('LocalSecretVault on SQLite', localFixture);
vaultContract('SecretsManagerVault on a mocked client', secretsManagerFixture);

// ---------------------------------------------------------------------------------------------
// Secrets Manager specifics: the exact requests.

describe('SecretsManagerVault requests', () => {
  let fake: FakeSecretsManager;
  beforeEach(() => {
    fake = fakeSecretsManager();
  });
  afterEach(() => {
    fake.mock.restore();
    fake.client.destroy();
  });

  const inputs = () => fake.mock.calls().map((c) => [c.args[0].constructor.name, c.args[0].input]);

  it('a first put tries PutSecretValue, then creates the secret with KMS key, description and tags', async () => {
    const vault = new SecretsManagerVault({
      prefix: 'agenthost/prod',
      kmsKeyId: 'arn:aws:kms:us-east-1:123456789012:key/1234',
      client: fake.client,
    });
    await vault.putValue({ workspaceId: 'ws-42', name: 'OPENAI_KEY' }, 'sk-first');
    assert.deepEqual(inputs(), [
      ['PutSecretValueCommand', { SecretId: 'agenthost/prod/ws-42/OPENAI_KEY', SecretString: 'sk-first' }],
      [
        'CreateSecretCommand',
        {
          Name: 'agenthost/prod/ws-42/OPENAI_KEY',
          SecretString: 'sk-first',
          KmsKeyId: 'arn:aws:kms:us-east-1:123456789012:key/1234',
          Description: 'agenthost workspace secret OPENAI_KEY',
          Tags: [
            { Key: 'agenthost:workspace', Value: 'ws-42' },
            { Key: 'agenthost:secret', Value: 'OPENAI_KEY' },
          ],
        },
      ],
    ]);
    assert.equal(fake.secrets.get('agenthost/prod/ws-42/OPENAI_KEY'), 'sk-first');

    // A second put only sets a new value.
    fake.mock.resetHistory();
    await vault.putValue({ workspaceId: 'ws-42', name: 'OPENAI_KEY' }, 'sk-second');
    assert.deepEqual(inputs(), [
      ['PutSecretValueCommand', { SecretId: 'agenthost/prod/ws-42/OPENAI_KEY', SecretString: 'sk-second' }],
    ]);
    assert.equal(fake.secrets.get('agenthost/prod/ws-42/OPENAI_KEY'), 'sk-second');
  });

  it('without a KMS key the create carries no KmsKeyId', async () => {
    const vault = new SecretsManagerVault({ prefix: 'p', client: fake.client });
    await vault.putValue({ workspaceId: 'w', name: 'N' }, 'v');
    const creates = fake.mock.commandCalls(CreateSecretCommand);
    assert.equal(creates.length, 1);
    const input = creates[0]?.args[0].input;
    assert.ok(input);
    assert.equal('KmsKeyId' in input, false);
    assert.deepEqual(input, {
      Name: 'p/w/N',
      SecretString: 'v',
      Description: 'agenthost workspace secret N',
      Tags: [
        { Key: 'agenthost:workspace', Value: 'w' },
        { Key: 'agenthost:secret', Value: 'N' },
      ],
    });
  });

  it('a create that loses the race (ResourceExistsException) falls back to PutSecretValue', async () => {
    const vault = new SecretsManagerVault({ prefix: 'p', client: fake.client });
    // Another request creates the secret between our PutSecretValue and our CreateSecret.
    fake.beforeCreate = (name) => {
      fake.secrets.set(name, 'theirs');
      fake.beforeCreate = undefined;
    };
    await vault.putValue({ workspaceId: 'w', name: 'RACE' }, 'ours');
    assert.deepEqual(
      inputs().map(([command]) => command),
      ['PutSecretValueCommand', 'CreateSecretCommand', 'PutSecretValueCommand'],
    );
    assert.deepEqual(fake.mock.commandCalls(PutSecretValueCommand)[1]?.args[0].input, {
      SecretId: 'p/w/RACE',
      SecretString: 'ours',
    });
    assert.deepEqual(await vault.resolve('w', ['RACE']), { RACE: 'ours' });
  });

  it('a create right after a forced delete waits for the deletion to finish, a bounded number of times', async () => {
    const vault = new SecretsManagerVault({ prefix: 'p', client: fake.client, retryDelaysMs: [1, 1] });
    let refusals = 2;
    fake.beforeCreate = () => {
      if (refusals-- > 0) {
        throw new InvalidRequestException({
          message:
            "You can't create this secret because a secret with this name is already scheduled for deletion.",
          $metadata: {},
        });
      }
    };
    await vault.putValue({ workspaceId: 'w', name: 'AGAIN' }, 'v2');
    assert.equal(fake.mock.commandCalls(CreateSecretCommand).length, 3);
    assert.deepEqual(await vault.resolve('w', ['AGAIN']), { AGAIN: 'v2' });

    refusals = 5;
    fake.beforeCreate = () => {
      throw new InvalidRequestException({ message: 'secret is scheduled for deletion', $metadata: {} });
    };
    await assert.rejects(vault.putValue({ workspaceId: 'w', name: 'STUCK' }, 'v'), InvalidRequestException);
  });

  it('a put error other than ResourceNotFoundException propagates and creates nothing', async () => {
    const vault = new SecretsManagerVault({ prefix: 'p', client: fake.client });
    fake.mock
      .on(PutSecretValueCommand)
      .rejects(new DecryptionFailure({ message: 'kms says no', $metadata: {} }));
    await assert.rejects(vault.putValue({ workspaceId: 'w', name: 'N' }, 'v'), DecryptionFailure);
    assert.equal(fake.mock.commandCalls(CreateSecretCommand).length, 0);
  });

  it('delete sends DeleteSecret without recovery; a missing secret is not an error', async () => {
    const vault = new SecretsManagerVault({ prefix: 'p', client: fake.client });
    await vault.putValue({ workspaceId: 'w', name: 'N' }, 'v');
    fake.mock.resetHistory();
    await vault.deleteValue({ workspaceId: 'w', name: 'N' });
    await vault.deleteValue({ workspaceId: 'w', name: 'N' });
    assert.deepEqual(inputs(), [
      ['DeleteSecretCommand', { SecretId: 'p/w/N', ForceDeleteWithoutRecovery: true }],
      ['DeleteSecretCommand', { SecretId: 'p/w/N', ForceDeleteWithoutRecovery: true }],
    ]);
    assert.equal(fake.secrets.has('p/w/N'), false);
  });

  it('resolve of 45 names sends three BatchGetSecretValue calls of 20, 20 and 5 ids', async () => {
    const vault = new SecretsManagerVault({ prefix: 'p', client: fake.client });
    const all = names(45);
    for (const name of all) fake.secrets.set(`p/ws/${name}`, `v-${name}`);
    const out = await vault.resolve('ws', [...all, ...all.slice(0, 5)]); // duplicates too
    assert.equal(Object.keys(out).length, 45);
    const batches = fake.mock.commandCalls(BatchGetSecretValueCommand).map((c) => c.args[0].input);
    assert.deepEqual(batches, [
      { SecretIdList: all.slice(0, 20).map((n) => `p/ws/${n}`) },
      { SecretIdList: all.slice(20, 40).map((n) => `p/ws/${n}`) },
      { SecretIdList: all.slice(40).map((n) => `p/ws/${n}`) },
    ]);
    assert.equal(fake.mock.calls().length, 3);
  });

  it('resolve of no names sends nothing', async () => {
    const vault = new SecretsManagerVault({ prefix: 'p', client: fake.client });
    assert.deepEqual(await vault.resolve('ws', []), {});
    assert.equal(fake.mock.calls().length, 0);
  });

  for (const ErrorCode of ['AccessDeniedException', 'DecryptionFailure']) {
    it(`a BatchGetSecretValue ${ErrorCode} entry makes resolve throw without the values`, async () => {
      const vault = new SecretsManagerVault({ prefix: 'p', client: fake.client });
      fake.mock.on(BatchGetSecretValueCommand).resolves({
        SecretValues: [{ Name: 'p/ws/VISIBLE', SecretString: 'visible-secret-value-123' }],
        Errors: [
          { SecretId: 'p/ws/MISSING', ErrorCode: 'ResourceNotFoundException', Message: 'not found' },
          { SecretId: 'p/ws/LOCKED', ErrorCode, Message: 'refused' },
        ],
      });
      const err = await vault.resolve('ws', ['VISIBLE', 'MISSING', 'LOCKED']).then(
        () => assert.fail('resolve should have thrown'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof Error);
      assert.match(err.message, new RegExp(ErrorCode));
      assert.doesNotMatch(err.message, /visible-secret-value-123/);
      assert.doesNotMatch(String(err.stack), /visible-secret-value-123/);
    });
  }

  it('a trailing slash on the prefix is normalised', async () => {
    const vault = new SecretsManagerVault({ prefix: 'agenthost/prod//', client: fake.client });
    assert.equal(vault.secretName({ workspaceId: 'ws', name: 'N' }), 'agenthost/prod/ws/N');
    await vault.putValue({ workspaceId: 'ws', name: 'N' }, 'v');
    await vault.resolve('ws', ['N']);
    await vault.deleteValue({ workspaceId: 'ws', name: 'N' });
    const ids = fake.mock.calls().map((c) => {
      const input = c.args[0].input as { SecretId?: string; Name?: string; SecretIdList?: string[] };
      return input.SecretId ?? input.Name ?? input.SecretIdList?.join(',');
    });
    assert.deepEqual(ids, [
      'agenthost/prod/ws/N',
      'agenthost/prod/ws/N',
      'agenthost/prod/ws/N',
      'agenthost/prod/ws/N',
    ]);
    assert.equal(
      new SecretsManagerVault({ prefix: 'x/', client: fake.client }).secretName({
        workspaceId: 'a',
        name: 'B',
      }),
      'x/a/B',
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Local vault specifics: key file, encryption at rest, slot binding.

describe('LocalSecretVault at rest', () => {
  let dir: string;
  let dbFile: string;
  let keyFile: string;
  const open: SqliteStore[] = [];
  const openStore = () => {
    const store = new SqliteStore(dbFile);
    open.push(store);
    return store;
  };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-vault-'));
    dbFile = join(dir, 'store.db');
    keyFile = join(dir, 'vault.key');
  });
  afterEach(async () => {
    for (const store of open.splice(0)) await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('creates a 0600 key file holding a base64 256-bit key', async () => {
    await LocalSecretVault.open(openStore(), keyFile);
    assert.equal((await stat(keyFile)).mode & 0o777, 0o600);
    const text = (await readFile(keyFile, 'utf8')).trim();
    assert.match(text, /^[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(text, 'base64').length, 32);
  });

  it('stores no plaintext in the SQLite files, WAL included', async () => {
    const store = openStore();
    const vault = await LocalSecretVault.open(store, keyFile);
    const plaintext = 'PLAINTEXT-MARKER-sk-live-9f8e7d6c5b4a';
    await vault.putValue({ workspaceId: 'ws-1', name: 'MARKED' }, plaintext);
    assert.deepEqual(await vault.resolve('ws-1', ['MARKED']), { MARKED: plaintext });
    const scan = async () => {
      const files = (await readdir(dir)).filter((f) => f.startsWith('store.db'));
      for (const f of files) {
        const bytes = await readFile(join(dir, f));
        assert.equal(bytes.includes(plaintext), false, `${f} holds the plaintext`);
        assert.equal(
          bytes.includes(Buffer.from(plaintext).toString('base64')),
          false,
          `${f} holds it in base64`,
        );
      }
      return files;
    };
    // While open, the write sits in the WAL.
    assert.ok((await scan()).includes('store.db-wal'), 'the WAL file exists while the store is open');
    await store.close();
    // After close, the WAL is checkpointed into the main file.
    assert.ok((await scan()).includes('store.db'));
  });

  it('reopening with the same key file reads the values', async () => {
    const first = openStore();
    const vault = await LocalSecretVault.open(first, keyFile);
    await vault.putValue({ workspaceId: 'ws-1', name: 'KEEP' }, 'kept across restarts');
    await first.close();
    const again = await LocalSecretVault.open(openStore(), keyFile);
    assert.deepEqual(await again.resolve('ws-1', ['KEEP']), { KEEP: 'kept across restarts' });
  });

  it('refuses to open when the key file is missing but the store holds secrets', async () => {
    const store = openStore();
    const vault = await LocalSecretVault.open(store, keyFile);
    await vault.putValue({ workspaceId: 'ws-1', name: 'A' }, 'a');
    await rm(keyFile);
    await assert.rejects(LocalSecretVault.open(store, keyFile), (err: unknown) => {
      assert.ok(err instanceof VaultConfigurationError);
      assert.equal(err.name, 'VaultConfigurationError');
      assert.ok(err.message.includes(keyFile), err.message);
      assert.match(err.message, /will not create a new key/);
      return true;
    });
    // And it did not create one.
    await assert.rejects(stat(keyFile), { code: 'ENOENT' });
  });

  it('refuses to open with a different (valid) key file', async () => {
    const store = openStore();
    const vault = await LocalSecretVault.open(store, keyFile);
    await vault.putValue({ workspaceId: 'ws-1', name: 'A' }, 'a');
    const otherKey = join(dir, 'other.key');
    await writeFile(otherKey, `${Buffer.alloc(32, 7).toString('base64')}\n`, { mode: 0o600 });
    await assert.rejects(LocalSecretVault.open(store, otherKey), (err: unknown) => {
      assert.ok(err instanceof VaultConfigurationError);
      assert.ok(err.message.includes(otherKey), err.message);
      assert.match(err.message, /does not match/);
      return true;
    });
  });

  for (const [label, content] of [
    ['too short', `${Buffer.alloc(16, 1).toString('base64')}\n`],
    ['too long', `${Buffer.alloc(48, 1).toString('base64')}\n`],
    ['not base64', 'this is not a key at all\n'],
    ['empty', ''],
  ] as const) {
    it(`refuses a malformed key file (${label})`, async () => {
      await writeFile(keyFile, content, { mode: 0o600 });
      await assert.rejects(LocalSecretVault.open(openStore(), keyFile), (err: unknown) => {
        assert.ok(err instanceof VaultConfigurationError);
        assert.ok(err.message.includes(keyFile), err.message);
        return true;
      });
      // The malformed file is left as it was.
      assert.equal(await readFile(keyFile, 'utf8'), content);
    });
  }

  it('a ciphertext moved to another slot does not decrypt', async () => {
    const store = openStore();
    const vault = await LocalSecretVault.open(store, keyFile);
    await vault.putValue({ workspaceId: 'ws-1', name: 'SOURCE' }, 'the source value');
    const item = await store.get({ pk: 'VAULT#ws-1', sk: 'SECRET#SOURCE' });
    assert.ok(item);
    assert.equal(JSON.stringify(item).includes('the source value'), false);
    // Another name in the same workspace, and the same name in another workspace.
    await store.put({ ...item, pk: 'VAULT#ws-1', sk: 'SECRET#TARGET' });
    await store.put({ ...item, pk: 'VAULT#ws-2', sk: 'SECRET#SOURCE' });
    await assert.rejects(vault.resolve('ws-1', ['TARGET']));
    await assert.rejects(vault.resolve('ws-2', ['SOURCE']));
    assert.deepEqual(await vault.resolve('ws-1', ['SOURCE']), { SOURCE: 'the source value' });
  });

  it('each put uses a fresh IV', async () => {
    const store = openStore();
    const vault = await LocalSecretVault.open(store, keyFile);
    const key = { pk: 'VAULT#ws-1', sk: 'SECRET#SAME' };
    await vault.putValue({ workspaceId: 'ws-1', name: 'SAME' }, 'same value');
    const first = await store.get(key);
    await vault.putValue({ workspaceId: 'ws-1', name: 'SAME' }, 'same value');
    const second = await store.get(key);
    assert.notEqual(first?.iv, second?.iv);
    assert.notEqual(first?.ciphertext, second?.ciphertext);
  });

  it('tightens a key file with looser permissions (0644) to 0600 on open', async () => {
    const store = openStore();
    const vault = await LocalSecretVault.open(store, keyFile);
    await vault.putValue({ workspaceId: 'ws-1', name: 'A' }, 'a');
    await chmod(keyFile, 0o644);
    assert.equal((await stat(keyFile)).mode & 0o777, 0o644);
    const again = await LocalSecretVault.open(store, keyFile);
    assert.equal((await stat(keyFile)).mode & 0o777, 0o600);
    assert.deepEqual(await again.resolve('ws-1', ['A']), { A: 'a' });
  });
});

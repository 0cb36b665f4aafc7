import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { BatchGetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDbStore } from '../../functions/adapters/aws/dynamodb-store.ts';
import { SqliteStore } from '../../functions/adapters/local/sqlite-store.ts';
import { createAwsStore } from '../../functions/platform/aws-deps.ts';
import { ConfigError, parseConfig } from '../../functions/platform/config.ts';
import { createDeps } from '../../functions/platform/deps.ts';
import { createLocalStore } from '../../functions/platform/local-deps.ts';
import { systemClock } from '../../functions/ports/clock.ts';
import { ENV } from '../../functions/shared/env-names.ts';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const c = parseConfig({});
    assert.equal(c.mode, 'local');
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.port, 8787);
    assert.equal(c.dataDir, resolve('./.data'));
    assert.equal(c.bootstrapTier, 'pro');
    assert.equal(c.bootstrapApiKey, undefined);
    assert.equal(c.maxBodyBytes, 1024 * 1024);
  });

  it('treats empty variables as unset and ignores unrelated ones', () => {
    const c = parseConfig({ PORT: '', HOME: '/root', PLATFORM_BOOTSTRAP_TIER: 'team' });
    assert.equal(c.port, 8787);
    assert.equal(c.bootstrapTier, 'team');
  });

  it('fails fast, naming every bad variable', () => {
    assert.throws(
      () => parseConfig({ PORT: '99999', PLATFORM_MODE: 'cloud', PLATFORM_BOOTSTRAP_API_KEY: 'short' }),
      (err: unknown) =>
        err instanceof ConfigError &&
        /PORT/.test(err.message) &&
        /PLATFORM_MODE/.test(err.message) &&
        /PLATFORM_BOOTSTRAP_API_KEY/.test(err.message),
    );
  });

  it('refuses a bootstrap key with the run-credential prefix (it could never authenticate)', () => {
    assert.throws(
      () => parseConfig({ PLATFORM_BOOTSTRAP_API_KEY: 'ahr_0123456789abcdefghijklmnop' }),
      /PLATFORM_BOOTSTRAP_API_KEY: must not start with ahr_/,
    );
  });

  it('reads the host ports sandboxes may reach, refusing bad ports and the platform own', () => {
    assert.deepEqual(
      parseConfig({ PLATFORM_SANDBOX_HOST_PORTS: '5432, 6379' }).sandboxHostPorts,
      [5432, 6379],
    );
    assert.deepEqual(parseConfig({}).sandboxHostPorts, []);
    for (const bad of ['abc', '5432;6379', '70000', '0']) {
      assert.throws(
        () => parseConfig({ PLATFORM_SANDBOX_HOST_PORTS: bad }),
        /PLATFORM_SANDBOX_HOST_PORTS/,
        bad,
      );
    }
    assert.throws(
      () => parseConfig({ PORT: '9000', PLATFORM_SANDBOX_HOST_PORTS: '5432,9000' }),
      /PLATFORM_SANDBOX_HOST_PORTS: must not include the platform's own port \(9000\)/,
    );
  });

  it('reads the emulated task start time (default 0), refusing what is not whole milliseconds up to 10 minutes', () => {
    assert.equal(parseConfig({}).emulatorTaskStartMs, 0);
    assert.equal(parseConfig({ PLATFORM_EMULATOR_TASK_START_MS: '20000' }).emulatorTaskStartMs, 20_000);
    for (const bad of ['-1', '1.5', 'soon', '600001']) {
      assert.throws(
        () => parseConfig({ PLATFORM_EMULATOR_TASK_START_MS: bad }),
        /PLATFORM_EMULATOR_TASK_START_MS/,
        bad,
      );
    }
  });

  it("reads the emulated account's Fargate vCPU quotas (6, and Spot's as on-demand's unless set)", () => {
    assert.equal(parseConfig({}).emulatorFargateVcpuQuota, 6);
    assert.equal(parseConfig({}).emulatorFargateSpotVcpuQuota, undefined);
    const set = parseConfig({
      PLATFORM_EMULATOR_FARGATE_VCPU_QUOTA: '4',
      PLATFORM_EMULATOR_FARGATE_SPOT_VCPU_QUOTA: '20',
    });
    assert.equal(set.emulatorFargateVcpuQuota, 4);
    assert.equal(set.emulatorFargateSpotVcpuQuota, 20);
    for (const bad of ['-1', '1.5', 'many']) {
      assert.throws(
        () => parseConfig({ PLATFORM_EMULATOR_FARGATE_VCPU_QUOTA: bad }),
        /PLATFORM_EMULATOR_FARGATE_VCPU_QUOTA/,
        bad,
      );
    }
  });

  it('needs a table name in aws mode', () => {
    assert.throws(
      () => parseConfig({ PLATFORM_MODE: 'aws' }),
      /PLATFORM_TABLE_NAME: is required when PLATFORM_MODE=aws/,
    );
    assert.equal(
      parseConfig({
        PLATFORM_MODE: 'aws',
        PLATFORM_TABLE_NAME: 'agenthost-t1',
        PLATFORM_BUNDLE_BUCKET: 'b-123',
      }).tableName,
      'agenthost-t1',
    );
  });

  it('checks each deployment’s settings at start, naming every missing variable in one error', () => {
    const aws = { PLATFORM_MODE: 'aws', PLATFORM_TABLE_NAME: 'agenthost-t1' };
    // What the stack sets together (the ECS sandbox here) comes all or none, with what it relies on.
    assert.throws(
      () => parseConfig({ ...aws, PLATFORM_SANDBOX_CLUSTER: 'sandbox' }),
      (err: unknown) =>
        err instanceof ConfigError &&
        [
          'PLATFORM_SANDBOX_TASK_DEFINITION',
          'PLATFORM_SANDBOX_SUBNETS',
          'PLATFORM_SANDBOX_SECURITY_GROUPS',
          'PLATFORM_SANDBOX_RUNNER_FILE',
          'PLATFORM_BUNDLE_BUCKET',
          'AWS_REGION',
        ].every((name) =>
          err.message.includes(`${name}: is required when PLATFORM_SANDBOX_CLUSTER is set`),
        ) &&
        !err.message.includes('PLATFORM_SANDBOX_CLUSTER:'),
    );
    assert.throws(
      () => parseConfig({ ...aws, PLATFORM_SCHEDULE_TARGET_ARN: 'arn:fire' }),
      (err: unknown) =>
        err instanceof ConfigError &&
        /PLATFORM_SCHEDULE_ROLE_ARN: is required/.test(err.message) &&
        /PLATFORM_SCHEDULE_DLQ_ARN: is required/.test(err.message) &&
        /PLATFORM_SCHEDULE_GROUP: is required when PLATFORM_SCHEDULE_TARGET_ARN is set/.test(err.message),
    );
    assert.throws(
      () => parseConfig({ ...aws, PLATFORM_SERVICES_DOMAIN: 'services.example.com' }),
      /PLATFORM_SERVICES_CLUSTER: is required when PLATFORM_SERVICES_DOMAIN is set/,
    );
    // A function without the capability has none of them, and starts; locally none is needed.
    assert.equal(parseConfig(aws).sandboxCluster, undefined);
    assert.equal(parseConfig({ PLATFORM_SANDBOX_CLUSTER: 'ignored-locally' }).mode, 'local');
  });

  it('reads every variable of ENV into the setting it names', () => {
    const config = parseConfig({
      ANTHROPIC_BASE_URL: 'https://a.example',
      PLATFORM_SERVICES_VPC_ID: 'vpc-1',
    });
    assert.equal(config.llm.anthropic.baseUrl, 'https://a.example');
    assert.equal(config.services.vpcId, 'vpc-1');
    assert.deepEqual(config.llm.ollama, { apiKey: undefined, baseUrl: undefined, defaultModel: undefined });
    for (const [setting, name] of Object.entries(ENV)) {
      assert.match(name, /^[A-Z][A-Z0-9_]*$/, setting);
    }
    assert.equal(new Set(Object.values(ENV)).size, Object.keys(ENV).length, 'one variable per setting');
  });

  it('builds the adapters of its mode, and each adapter refuses the other mode', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agenthost-cfg-'));
    try {
      const local = parseConfig({ PLATFORM_DATA_DIR: dir });
      const aws = parseConfig({
        PLATFORM_MODE: 'aws',
        PLATFORM_TABLE_NAME: 'agenthost-main',
        PLATFORM_BUNDLE_BUCKET: 'agenthost-main-bundles',
        AWS_REGION: 'eu-west-1',
      });
      const localDeps = await createDeps(local);
      assert.ok(localDeps.store instanceof SqliteStore);
      await localDeps.store.close();
      const awsDeps = await createDeps(aws);
      assert.ok(awsDeps.store instanceof DynamoDbStore);
      await awsDeps.store.close();
      await assert.rejects(createLocalStore(aws, systemClock), /runs only in PLATFORM_MODE=local/);
      await assert.rejects(createAwsStore(local, systemClock), /runs only in PLATFORM_MODE=aws/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('builds the AWS vault and bundle store on first use, and signs bundle URLs without the S3 client', async () => {
    const sm = mockClient(SecretsManagerClient);
    sm.on(BatchGetSecretValueCommand).resolves({
      SecretValues: [{ Name: 'pfx/ws-1/TOKEN', SecretString: 'v' }],
    });
    try {
      const config = parseConfig({
        PLATFORM_MODE: 'aws',
        PLATFORM_TABLE_NAME: 'agenthost-main',
        PLATFORM_BUNDLE_BUCKET: 'agenthost-main-bundles',
        PLATFORM_SECRETS_PREFIX: 'pfx',
        AWS_REGION: 'eu-west-1',
      });
      const deps = await createDeps(config);
      assert.equal(sm.calls().length, 0, 'nothing is built or called before first use');
      assert.deepEqual(await deps.vault.resolve('ws-1', ['TOKEN']), { TOKEN: 'v' });
      assert.deepEqual(sm.commandCalls(BatchGetSecretValueCommand)[0]?.args[0].input, {
        SecretIdList: ['pfx/ws-1/TOKEN'],
      });
      process.env.AWS_ACCESS_KEY_ID ??= 'test';
      process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
      const url = new URL(await deps.bundles.downloadUrl('bundles/acme/tool/v1.tar.gz', 600));
      assert.equal(url.host, 'agenthost-main-bundles.s3.eu-west-1.amazonaws.com');
      assert.equal(url.pathname, '/bundles/acme/tool/v1.tar.gz');
      assert.equal(url.searchParams.get('X-Amz-Expires'), '600');
      await assert.rejects(deps.bundles.downloadUrl('../etc/passwd', 600));
      await deps.store.close();
    } finally {
      sm.restore();
    }
  });

  it('is read from process.env only by the config module', async () => {
    const { readdir, readFile } = await import('node:fs/promises');
    const offenders: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      for (const entry of await readdir(dir, { withFileTypes: true })) {
        const path = `${dir}/${entry.name}`;
        if (entry.isDirectory()) await walk(path);
        else if (path.endsWith('.ts') && !path.endsWith('.test.ts')) {
          const text = await readFile(path, 'utf8');
          // Programs that run inside ECS tasks (functions/containers/) read their task's own
          // environment, never the platform's configuration.
          const taskProgram = path.startsWith('functions/containers/');
          // So is the starter code `agenthost init` writes for a user's own app (a text template).
          const userAppTemplate = path === 'functions/cli/init-templates.ts';
          if (
            /process\.env/.test(text) &&
            path !== 'functions/platform/config.ts' &&
            !taskProgram &&
            !userAppTemplate
          ) {
            offenders.push(path);
          }
        }
      }
    };
    await walk('functions');
    assert.deepEqual(offenders, []);
  });
});

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { EMULATED_CONTEXT } from '../../functions/emulator/emulated-deployment.ts';
import { type SynthesizedDeployment, synthesize } from '../../functions/emulator/synthesized-deployment.ts';
import { parseConfig } from '../../functions/platform/config.ts';
import { createDeps } from '../../functions/platform/deps.ts';
import { buildDashboard } from '../../scripts/build-web.ts';
import { SHARED_ASSEMBLY } from '../helpers/deployment.ts';
import { startDynamoDbLocal } from '../helpers/dynamodb-local.ts';

/**
 * Test what ships: every Lambda asset the CDK app synthesizes, loaded as the Lambda runtime loads
 * it. The assembly is the one `cdk synth` writes (bin/cdk-app.ts in its own process), shared with
 * the emulated deployments of the end-to-end tests: npm test's global setup synthesizes it once
 * (test/setup/global.ts), and this file alone synthesizes it if no current one is there. Each asset is copied to a folder with no node_modules above it (Lambda has only the asset),
 * and a Node of the runtime's major version imports its `index.mjs` with the environment the
 * template gives the function, checks that `handler` is a function, then imports every chunk (the
 * code behind a dynamic import(), which a request loads later). The calls, schedule-runs and
 * schedule-fire bundles used to crash right here ("e is not a constructor").
 */

const execFileAsync = promisify(execFile);

interface CfnFunction {
  Type: string;
  Properties: {
    Handler: string;
    Runtime: string;
    Code: { S3Key?: unknown };
    Environment?: { Variables?: Record<string, unknown> };
  };
}

const bare = mkdtempSync(join(tmpdir(), 'agenthost-bare-'));
after(() => {
  rmSync(bare, { recursive: true, force: true });
});

/** The logical id CDK gives the singleton function behind every BucketDeployment. */
const BUCKET_DEPLOYMENT = 'CustomCDKBucketDeployment8693BB64968944B69AAFB0CC9EB8756C';

/** Every .mjs file under `dir`, relative to it. */
function moduleFiles(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? moduleFiles(dir, join(prefix, e.name))
      : e.name.endsWith('.mjs')
        ? [join(prefix, e.name)]
        : [],
  );
}

/** A template value as the deployed function would see it: tokens (imports, refs) as a plain placeholder. */
function environmentOf(fn: CfnFunction): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(fn.Properties.Environment?.Variables ?? {})) {
    const placeholder = name.endsWith('_URL')
      ? 'https://api.example.test/prod'
      : `placeholder-${name.toLowerCase().replaceAll('_', '-')}`;
    env[name] = typeof value === 'string' ? value : placeholder;
  }
  return env;
}

describe('the synthesized Lambda assets load as Lambda loads them', () => {
  let assembly: SynthesizedDeployment;
  let functions: { id: string; fn: CfnFunction }[];
  before(async () => {
    assembly = await synthesize(SHARED_ASSEMBLY, EMULATED_CONTEXT, (line) =>
      process.stdout.write(`${line}\n`),
    );
    functions = assembly.stacks.flatMap((stack) =>
      Object.entries((stack.template as { Resources: Record<string, CfnFunction> }).Resources)
        .filter(([id, r]) => r.Type === 'AWS::Lambda::Function' && !id.startsWith(BUCKET_DEPLOYMENT))
        .map(([id, fn]) => ({ id: `${stack.stackName}/${id}`, fn })),
    );
    // CDK's BucketDeployment handler (Python, aws-cdk-lib's own asset) copies the dashboard's build
    // during a deploy: not a platform function (lib/constructs/dashboard-site.ts). One, in Python.
    const copiers = assembly.stacks.flatMap((stack) =>
      Object.entries((stack.template as { Resources: Record<string, CfnFunction> }).Resources).filter(
        ([id, r]) => r.Type === 'AWS::Lambda::Function' && id.startsWith(BUCKET_DEPLOYMENT),
      ),
    );
    assert.deepEqual(
      copiers.map(([, fn]) => /^python/.test(fn.Properties.Runtime)),
      [true],
    );
  });

  /** The function's asset, copied once into the bare folder. */
  const assetDir = (id: string, key: string) => {
    const dir = join(bare, id.replace('/', '-'));
    if (!existsSync(dir)) {
      cpSync(assembly.assetDir(key), dir, { recursive: true });
    }
    return dir;
  };

  test('the bare folder has no node_modules above it', () => {
    for (let dir = bare; ; dir = dirname(dir)) {
      assert.equal(existsSync(join(dir, 'node_modules')), false, dir);
      if (dirname(dir) === dir) break;
    }
    assert.ok(functions.length >= 18, `${functions.length} functions`);
  });

  test('every handler loads, with its chunks, on the runtime the template names', async (t) => {
    const failures: string[] = [];
    let runners = 0;
    let serviceManagers = 0;
    await Promise.all(
      functions.map(async ({ id, fn }) => {
        const runtime = /^nodejs(\d+)\.x$/.exec(fn.Properties.Runtime)?.[1];
        assert.equal(runtime, process.versions.node.split('.')[0], `${id}: tests run on the runtime's Node`);
        const key = fn.Properties.Code.S3Key;
        assert.ok(typeof key === 'string' && key.endsWith('.zip'), `${id}: an asset`);
        const asset = assetDir(id, key);
        const [file, handler] = fn.Properties.Handler.split('.') as [string, string];
        assert.ok(existsSync(join(asset, `${file}.mjs`)), `${id}: ${file}.mjs`);
        const chunks = moduleFiles(asset).filter((f) => f !== `${file}.mjs`);
        // A function that runs sandboxes carries the ECS runner, which it hands to each task.
        const runner = join(asset, 'containers', 'sandbox-runner.cjs');
        if (fn.Properties.Environment?.Variables?.PLATFORM_SANDBOX_RUNNER_FILE !== undefined) {
          assert.equal(
            fn.Properties.Environment.Variables.PLATFORM_SANDBOX_RUNNER_FILE,
            '/var/task/containers/sandbox-runner.cjs',
          );
          await execFileAsync(process.execPath, ['--check', runner]);
          runners++;
        } else {
          assert.equal(existsSync(runner), false, `${id}: no runner where no sandbox runs`);
        }
        // A function that manages services carries the gateway (put in each task definition) and
        // the launcher (uploaded on each start).
        const vars = fn.Properties.Environment?.Variables ?? {};
        for (const [name, program] of [
          ['PLATFORM_SERVICES_GATEWAY_FILE', 'service-gateway'],
          ['PLATFORM_SERVICES_LAUNCHER_FILE', 'service-app-launcher'],
        ] as const) {
          const path = join(asset, 'containers', `${program}.cjs`);
          if (vars[name] !== undefined) {
            assert.equal(vars[name], `/var/task/containers/${program}.cjs`);
            await execFileAsync(process.execPath, ['--check', path]);
            if (program === 'service-gateway') serviceManagers++;
          } else {
            assert.equal(existsSync(path), false, `${id}: no ${program} where no service is managed`);
          }
        }
        const script = [
          `const m = await import('./${file}.mjs');`,
          `if (typeof m.${handler} !== 'function') throw new Error('no ${handler} function exported');`,
          `for (const c of ${JSON.stringify(chunks)}) await import('./' + c);`,
          `console.log(${chunks.length});`,
        ].join('\n');
        try {
          const { stdout } = await execFileAsync(process.execPath, ['--input-type=module', '-e', script], {
            cwd: asset,
            env: {
              PATH: process.env.PATH ?? '/usr/bin:/bin',
              AWS_REGION: 'eu-west-1',
              AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE',
              AWS_SECRET_ACCESS_KEY: 'example',
              ...environmentOf(fn),
            },
            timeout: 60_000,
          });
          t.diagnostic(`${id}: ${file}.mjs and ${stdout.trim()} chunks loaded`);
        } catch (err) {
          const e = err as { stderr?: string; message: string };
          const why = (e.stderr ?? e.message)
            .split('\n')
            .filter((l) => /Error|error/.test(l))
            .slice(0, 2);
          failures.push(`${id}: ${why.join(' ') || e.message}`);
        }
      }),
    );
    assert.deepEqual(failures, []);
    assert.equal(
      runners,
      6,
      'calls, mcp, schedule-runs, schedule-fire, the run worker and the warm pool’s refill carry the runner',
    );
    assert.equal(serviceManagers, 2, 'services and service-events carry the service programs');
  });

  test('the built handlers serve API Gateway events, on DynamoDB Local', async () => {
    const dynamo = await startDynamoDbLocal('agenthost-assets');
    try {
      // The in-process store (to create the account) uses the SDK's default chain, which reads these.
      process.env.AWS_ACCESS_KEY_ID ??= 'test';
      process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
      const deps = await createDeps(parseConfig(dynamo.env));
      const account = await createAccount(deps, { org: 'assetco', tier: 'pro' });
      await deps.store.close();
      // Logical ids name the module: HealthFunction…, TasksFunction…, CallsFunction….
      const byModule = (module: string) => {
        const found = functions.find(({ id }) => new RegExp(`/${module}Function[0-9A-F]{8}$`).test(id));
        assert.ok(found, module);
        return found;
      };
      /**
       * Invokes the asset's handler in its own process, as Lambda would, with one REST event. The
       * calls function's integration streams: its handler writes the prelude, eight NUL bytes and
       * the body to a response stream (read back here as status and body).
       */
      const invoke = async (module: string, event: Record<string, unknown>) => {
        const { id, fn } = byModule(module);
        const asset = assetDir(id, String(fn.Properties.Code.S3Key));
        const script =
          module === 'Calls'
            ? `import { Writable } from 'node:stream'; const m = await import('./index.mjs'); const parts = []; const out = new Writable({ write(c, _e, d) { parts.push(c); d(); } }); await m.handler(${JSON.stringify(event)}, out, { awsRequestId: 'req_asset' }); const all = Buffer.concat(parts); const at = all.indexOf(Buffer.alloc(8)); const prelude = JSON.parse(all.subarray(0, at).toString()); console.log(JSON.stringify({ statusCode: prelude.statusCode, body: all.subarray(at + 8).toString() }));`
            : `const m = await import('./index.mjs'); const r = await m.handler(${JSON.stringify(event)}, { awsRequestId: 'req_asset' }); console.log(JSON.stringify(r));`;
        const { stdout } = await execFileAsync(process.execPath, ['--input-type=module', '-e', script], {
          cwd: asset,
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...environmentOf(fn), ...dynamo.env },
          timeout: 60_000,
        });
        return JSON.parse(stdout.trim().split('\n').pop() as string) as { statusCode: number; body: string };
      };
      const event = (
        method: string,
        resource: string,
        path: string,
        params: Record<string, string> | null,
        key?: string,
      ) => ({
        resource,
        path,
        httpMethod: method,
        headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), 'content-type': 'application/json' },
        multiValueHeaders: {},
        queryStringParameters: null,
        multiValueQueryStringParameters: null,
        pathParameters: params,
        stageVariables: null,
        body: method === 'GET' ? null : '{}',
        isBase64Encoded: false,
        requestContext: { requestId: 'req_asset', identity: { sourceIp: '127.0.0.1' } },
      });
      const health = await invoke('Health', event('GET', '/health', '/health', null));
      assert.equal(health.statusCode, 200, health.body);
      const tasks = await invoke('Tasks', event('GET', '/tasks', '/tasks', null, account.api_key));
      assert.equal(tasks.statusCode, 200, tasks.body);
      const anonymous = await invoke('Tasks', event('GET', '/tasks', '/tasks', null));
      assert.equal(anonymous.statusCode, 401, anonymous.body);
      const params = { org: 'assetco', agent: 'missing', version: 'v1', endpoint: 'run' };
      const call = await invoke(
        'Calls',
        event(
          'POST',
          '/{org}/{agent}/{version}/{endpoint}',
          '/assetco/missing/v1/run',
          params,
          account.api_key,
        ),
      );
      assert.equal(call.statusCode, 404, call.body);
    } finally {
      await dynamo.close();
    }
  });
});

describe('the synthesized dashboard asset', () => {
  test('is a build of web/ made at synthesis: index.html and the hashed assets, as a fresh build makes them', async () => {
    const assembly = await synthesize(SHARED_ASSEMBLY, EMULATED_CONTEXT, (line) =>
      process.stdout.write(`${line}\n`),
    );
    const deployments = assembly.stacks.flatMap((stack) =>
      Object.values(
        (
          stack.template as {
            Resources: Record<string, { Type: string; Properties: { SourceObjectKeys?: string[] } }>;
          }
        ).Resources,
      ).filter((r) => r.Type === 'Custom::CDKBucketDeployment'),
    );
    assert.equal(deployments.length, 1, 'one deployment of the dashboard');
    const [key] = deployments[0]?.Properties.SourceObjectKeys ?? [];
    assert.ok(key, 'the deployment names its asset');
    const staged = assembly.assetDir(key);
    const listing = (dir: string) =>
      readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => relative(dir, join(e.parentPath, e.name)))
        .sort();
    const deployed = listing(staged);
    const index = readFileSync(join(staged, 'index.html'), 'utf8');
    const referenced = [...index.matchAll(/(?:src|href)="\/(assets\/[^"]+)"/g)].map((m) => m[1] as string);
    assert.ok(referenced.some((f) => f.endsWith('.js')) && referenced.some((f) => f.endsWith('.css')), index);
    for (const file of referenced) {
      assert.match(file, /^assets\/[\w.-]+-[\w-]{8}\.(js|css)$/, 'named by content hash');
      assert.ok(deployed.includes(file), `${file} is deployed`);
    }
    // The same source built now gives the same files, byte for byte: the deployed build is the source's.
    const fresh = mkdtempSync(join(tmpdir(), 'agenthost-dashboard-fresh-'));
    try {
      await buildDashboard(fresh);
      assert.deepEqual(deployed, listing(fresh));
      for (const file of deployed)
        assert.ok(readFileSync(join(staged, file)).equals(readFileSync(join(fresh, file))), file);
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  });
});

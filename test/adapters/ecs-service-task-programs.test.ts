/**
 * The service task programs (the gateway and the app launcher), bundled as shipped and run here as
 * the ECS task definition starts them, against the bundle bucket's loopback stand-in.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DescribeServicesCommand, RegisterTaskDefinitionCommand } from '@aws-sdk/client-ecs';
import { CreateTargetGroupCommand, DescribeRulesCommand } from '@aws-sdk/client-elastic-load-balancing-v2';
import { ZipFile } from 'yazl';
import { launcherKey } from '../../functions/adapters/aws/ecs-service-names.ts';
import { packDirectory } from '../../functions/cli/pack.ts';
import {
  GATEWAY_PORT_ENV,
  LAUNCH_FAILED_EXIT,
  NO_ENTRYPOINT_EXIT,
  PORT_CONFLICT_EXIT,
} from '../../functions/containers/service-protocol.ts';
import { SERVICE_BUNDLE_URL_SECONDS, type ServiceLaunch } from '../../functions/ports/service-runner.ts';
import { bucket, ecs, elb, LAUNCHER, launch, runner, scaling, TG_ARN } from '../helpers/ecs-service-bench.ts';

before(() => bucket.start());
after(() => bucket.close());

describe('the task programs, bundled as shipped, run here as the task definition starts them', () => {
  const SECRET = 'task-secret-0123456789';
  const dirs: string[] = [];
  after(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });
  const tempDir = async (prefix: string) => {
    const d = await mkdtemp(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
  const free = async () => {
    const s = createServer().listen(0, '127.0.0.1');
    await once(s, 'listening');
    const port = (s.address() as AddressInfo).port;
    s.close();
    return port;
  };
  const zipOf = async (files: Record<string, string>) => {
    const zip = new ZipFile();
    for (const [name, text] of Object.entries(files)) zip.addBuffer(Buffer.from(text), name);
    zip.end();
    const chunks: Buffer[] = [];
    for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };
  const tarOf = async (files: Record<string, string>) => {
    const dir = await tempDir('agenthost-ecs-src-');
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
    return (await packDirectory(dir)).data;
  };

  /**
   * Starts the service through the runner (mocked ECS, the loopback bucket) and returns its two
   * containers' commands and environments from the registered task definition, with the bundle
   * stored in the bucket under `bundleKey`.
   */
  async function taskOf(bundle: Buffer, format: 'tar.gz' | 'zip', over: Partial<ServiceLaunch> = {}) {
    ecs.reset();
    elb.reset();
    scaling.reset();
    ecs.on(RegisterTaskDefinitionCommand).resolves({ taskDefinition: { taskDefinitionArn: 'arn:td:1' } });
    ecs.on(DescribeServicesCommand).resolves({ services: [] });
    elb.on(CreateTargetGroupCommand).resolves({ TargetGroups: [{ TargetGroupArn: TG_ARN }] });
    elb.on(DescribeRulesCommand).resolves({ Rules: [] });
    const bundleKey = `bundles/test/${Math.random().toString(36).slice(2)}.${format}`;
    bucket.objects.set(bundleKey, bundle);
    await runner().start({
      ...launch,
      bundle: { data: Buffer.alloc(0), format },
      bundleUrl: await bucket.presign('GET', bundleKey, SERVICE_BUNDLE_URL_SECONDS),
      ...over,
    });
    const td = ecs.commandCalls(RegisterTaskDefinitionCommand)[0]?.args[0].input;
    const [gateway, app] = td?.containerDefinitions ?? [];
    const envOf = (c: typeof gateway) =>
      Object.fromEntries((c?.environment ?? []).map((e) => [e.name as string, e.value as string]));
    return {
      gateway: { command: gateway?.command as string[], env: envOf(gateway) },
      app: { command: app?.command as string[], env: envOf(app) },
    };
  }

  /** Runs a container's command (`node -e …`) on this host; ECS would add the secret values. */
  function runContainer(command: string[], env: Record<string, string>) {
    assert.equal(command[0], 'node');
    const child = spawn(process.execPath, command.slice(1), {
      env: { PATH: process.env.PATH, ...env },
      stdio: 'pipe',
    });
    let output = '';
    child.stdout.on('data', (c) => {
      output += c;
    });
    child.stderr.on('data', (c) => {
      output += c;
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    return { child, output: () => output, exited };
  }

  const withTimeout = <T>(p: Promise<T>, ms = 30_000) =>
    Promise.race([
      p,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timed out')), ms)),
    ]);

  it('tar.gz: the gateway answers /health 503 then 200 and proxies; the app is found, started and its secrets redacted, encoded too', async (t) => {
    const task = await taskOf(
      await tarOf({
        'server.mjs': [
          "import { createServer } from 'node:http';",
          "console.log('token is ' + process.env.APP_TOKEN);",
          "console.log('b64 ' + Buffer.from('x:' + process.env.APP_TOKEN).toString('base64'));",
          "console.log('hex ' + Buffer.from(process.env.APP_TOKEN).toString('hex'));",
          "console.log('launcher vars: ' + Object.keys(process.env).filter((k) => k.startsWith('AGENTHOST_')).join(','));",
          "setTimeout(() => createServer((q, r) => r.end(JSON.stringify({ via: 'app', path: q.url, greeting: process.env.GREETING }))).listen(Number(process.env.PORT), '127.0.0.1'), 500);",
        ].join('\n'),
      }),
      'tar.gz',
    );
    const [gatewayPort, appPort] = [await free(), await free()];
    const gateway = runContainer(task.gateway.command, {
      ...task.gateway.env,
      PLATFORM_HTTP_PORT: String(appPort),
      [GATEWAY_PORT_ENV]: String(gatewayPort),
    });
    const app = runContainer(task.app.command, {
      ...task.app.env,
      PORT: String(appPort),
      PLATFORM_HTTP_PORT: String(appPort),
      AGENTHOST_APP_DIR: join(await tempDir('agenthost-ecs-app-'), 'app'),
      APP_TOKEN: SECRET,
    });
    try {
      let sawStarting = false;
      let body = '';
      for (let i = 0; i < 300; i++) {
        const r = await fetch(`http://127.0.0.1:${gatewayPort}/health`).catch(() => undefined);
        if (r?.status === 503) sawStarting = true;
        if (r?.status === 200) {
          body = await (await fetch(`http://127.0.0.1:${gatewayPort}/hello?x=1`)).text();
          break;
        }
        await new Promise((res) => setTimeout(res, 50));
      }
      t.diagnostic(`app output: ${app.output().trim().replace(/\n/g, ' | ')}`);
      assert.ok(sawStarting, 'the gateway said 503 before the app listened');
      assert.deepEqual(JSON.parse(body), { via: 'app', path: '/hello?x=1', greeting: 'hi' });
      const out = app.output();
      assert.match(out, /\[platform\] starting: node server\.mjs/);
      assert.match(out, /token is \[REDACTED\]/);
      assert.match(out, /hex \[REDACTED\]/);
      assert.ok(!out.includes(SECRET), 'no plain secret');
      assert.ok(!out.includes(Buffer.from(SECRET).toString('hex')), 'no hex secret');
      assert.ok(
        !Buffer.from(out.match(/b64 (\S+)/)?.[1] ?? '', 'base64')
          .toString()
          .includes(SECRET),
      );
      assert.match(out, /launcher vars: \n/, 'the launcher’s variables are not the app’s');
      // The task fetched the launcher and the bundle through the presigned URLs.
      assert.ok(bucket.requests.some((r) => r.method === 'GET' && r.key === launcherKey(LAUNCHER)));
    } finally {
      // SIGTERM, as ECS stops a task: the launcher passes it on to the app's process group.
      gateway.child.kill();
      app.child.kill();
      assert.equal(await withTimeout(app.exited, 10_000), 143, 'the launcher exits with the app');
      await withTimeout(gateway.exited, 10_000);
    }
  });

  it('zip: unpacked with the same extraction, the auto-scan finds index.js, and the app’s exit status is the task’s', async () => {
    const task = await taskOf(
      await zipOf({
        'lib/value.txt': '42',
        'index.js': [
          "const v = require('node:fs').readFileSync('lib/value.txt', 'utf8');",
          "console.error('value ' + v + ' and ' + encodeURIComponent(process.env.APP_TOKEN));",
          'process.exit(3);',
        ].join('\n'),
      }),
      'zip',
      { http: false },
    );
    const app = runContainer(task.app.command, {
      ...task.app.env,
      AGENTHOST_APP_DIR: join(await tempDir('agenthost-ecs-app-'), 'app'),
      APP_TOKEN: `${SECRET}/?&`,
    });
    assert.equal(await withTimeout(app.exited), 3, app.output());
    assert.match(app.output(), /\[platform\] starting: node index\.js/);
    assert.match(app.output(), /value 42 and \[REDACTED\]/);
  });

  it('an app that fails on port 8080 ends the task with the port-conflict status; so does a gateway whose port is taken', async () => {
    const task = await taskOf(
      await tarOf({
        'app.js':
          "console.error('Error: listen EADDRINUSE: address already in use 0.0.0.0:8080'); process.exit(1);",
      }),
      'tar.gz',
    );
    const app = runContainer(task.app.command, {
      ...task.app.env,
      AGENTHOST_APP_DIR: join(await tempDir('agenthost-ecs-app-'), 'app'),
    });
    assert.equal(await withTimeout(app.exited), PORT_CONFLICT_EXIT, app.output());
    assert.match(app.output(), /port 8080 belongs to the service gateway/);

    const taken = createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    try {
      const gateway = runContainer(task.gateway.command, {
        ...task.gateway.env,
        [GATEWAY_PORT_ENV]: String((taken.address() as AddressInfo).port),
      });
      assert.equal(await withTimeout(gateway.exited), PORT_CONFLICT_EXIT, gateway.output());
      assert.match(gateway.output(), /port 8080 is taken/);
    } finally {
      taken.close();
    }
  });

  it('no entrypoint is its own status; a launcher that cannot be downloaded says so', async () => {
    const task = await taskOf(await tarOf({ 'README.md': 'nothing to run' }), 'tar.gz', { command: null });
    const app = runContainer(task.app.command, {
      ...task.app.env,
      AGENTHOST_APP_DIR: join(await tempDir('agenthost-ecs-app-'), 'app'),
    });
    assert.equal(await withTimeout(app.exited), NO_ENTRYPOINT_EXIT, app.output());
    assert.match(app.output(), /\[platform\] no entrypoint: .*main\.py/);

    const missing = runContainer(task.app.command, {
      ...task.app.env,
      AGENTHOST_LAUNCHER_URL: `${bucket.url}/service-programs/missing.cjs`,
    });
    assert.equal(await withTimeout(missing.exited), LAUNCH_FAILED_EXIT, missing.output());
    assert.match(
      missing.output(),
      /\[platform\] the launcher could not start: launcher download failed with HTTP 404/,
    );
  });
});

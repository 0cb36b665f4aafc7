import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readEndpointsFile } from '../../functions/emulator/emulated-endpoints.ts';
import { type Deployment, startDeployment } from '../helpers/deployment.ts';
import { isLoopback, listeningSocketsOf, processTree } from '../helpers/listening-sockets.ts';
import { publishWithFiles } from '../helpers/publish.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * The emulated AWS deployment attacked as a hostile tenant would: from this machine (what its
 * servers listen on) and from a tool agent's sandboxed run (an ECS task here), which must reach
 * nothing but its own presigned objects: not the bucket listing, not another tenant's running
 * run.json with its secret, not the bundle bucket.
 */

/**
 * The attacker's tool: finds the ports its sandbox can reach (its own network namespace's
 * listening sockets: the loopback ports forwarded to the host) and sends S3 requests without a
 * signature to each; it reports what came back, and its namespace's routes.
 */
const ATTACKER = `
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
// Whatever fails is reported, not thrown: the test shows what the tool saw.
process.on('uncaughtException', (err) => { console.log(JSON.stringify({ fatal: String(err && err.stack || err) })); process.exit(0); });
process.on('unhandledRejection', (err) => { console.log(JSON.stringify({ fatal: String(err && err.stack || err) })); process.exit(0); });
const chunks = []; for await (const c of process.stdin) chunks.push(c);
const { buckets, victimKey } = JSON.parse(Buffer.concat(chunks).toString() || '{}');
const ports = new Set();
for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
  for (const line of readFileSync(file, 'utf8').split('\\n').slice(1)) {
    const f = line.trim().split(/\\s+/);
    if (f[3] === '0A') ports.add(parseInt(f[1].split(':')[1], 16));
  }
}
const attempts = [];
// node:http, not fetch: undici's WebAssembly parser needs more address space than the sandbox's memory limit.
const attempt = (what, port, path, init = {}) =>
  new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, method: init.method ?? 'GET', timeout: 5000 }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        attempts.push({ what, port, status: res.statusCode, body: Buffer.concat(chunks).toString().slice(0, 2000) });
        resolve();
      });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err) => {
      attempts.push({ what, port, error: String(err.code ?? err.message) });
      resolve();
    });
    req.end(init.body);
  });
for (const port of ports) {
  await attempt('list buckets', port, '/');
  for (const bucket of buckets) {
    await attempt('list a bucket', port, '/' + bucket + '?list-type=2');
    await attempt('read another run', port, '/' + bucket + '/' + victimKey);
    // The env file beside it holds the URL of the victim's (or its runner's) manifest.
    await attempt('read another run’s env file', port, '/' + bucket + '/' + victimKey.replace(/[^/]+$/, 'task.env'));
    await attempt('write the bundle bucket', port, '/' + bucket + '/bundles/planted-by-tenant.tgz', { method: 'PUT', body: 'planted' });
  }
}
const routes = readFileSync('/proc/net/route', 'utf8').trim().split('\\n').slice(1);
console.log(JSON.stringify({ ports: [...ports], attempts, routes }));
`;

describe('the emulated deployment’s doors, tried as a hostile tenant', () => {
  let d: Deployment;
  const victimSecret = 'sk-victim-DO-NOT-LEAK-9876543210';

  before(async () => {
    // Its own DynamoDB Local: the sockets checked below are the deployment's own, the engine's included.
    d = await startDeployment('emulated', {}, { ownDynamoDb: true });
  });
  after(async () => {
    await d?.close();
  });

  it('every socket the deployment listens on is bound to loopback', () => {
    const endpoints = readEndpointsFile(d.dataDir);
    assert.ok(endpoints, 'the deployment wrote its endpoints');
    const sockets = listeningSocketsOf(processTree(endpoints.pid));
    for (const url of [endpoints.apiUrl, endpoints.dynamodbEndpoint, endpoints.s3Endpoint]) {
      const port = Number(new URL(url).port);
      assert.ok(
        sockets.some((s) => s.port === port),
        `${url} is among the sockets: ${JSON.stringify(sockets)}`,
      );
    }
    assert.deepEqual(
      sockets.filter((s) => !isLoopback(s.address)),
      [],
    );
  });

  it('a sandboxed tool reaches neither the bucket listing, nor another tenant’s running run manifest (or claim) and env file, nor the bundle bucket; the secret is not on disk in clear', async () => {
    // The victim: another account's tool, running (it sleeps) with a secret in its run manifest.
    const victim = await d.createAccount('victim');
    const put = await d.request('PUT', `/workspaces/${victim.workspaceId}/secrets`, {
      key: victim.key,
      body: { name: 'VICTIM_TOKEN', value: victimSecret },
    });
    assert.equal(put.status, 200, put.text);
    const publish = (key: string, manifest: Record<string, unknown>, files: Record<string, string>) =>
      publishWithFiles(d, key, manifest, files);
    await publish(
      victim.key,
      {
        name: 'sleeper',
        type: 'tool',
        description: 'Sleeps.',
        supported_providers: ['any'],
        runtime: { command: 'node main.mjs' },
        required_secrets: ['VICTIM_TOKEN'],
      },
      { 'main.mjs': 'setTimeout(() => console.log(JSON.stringify({ slept: true })), 20000);' },
    );
    await publish(
      d.ownerKey,
      {
        name: 'prober',
        type: 'tool',
        description: 'Probes.',
        supported_providers: ['any'],
        runtime: { command: 'node main.mjs' },
        required_secrets: [],
      },
      { 'main.mjs': ATTACKER },
    );

    const s3Dir = join(d.dataDir, 'aws', 's3');
    const buckets = (await readdir(s3Dir, { withFileTypes: true }))
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    const victimRun = d.request('POST', '/victim/sleeper/v1/run', { key: victim.key, body: {} });
    // The victim's run manifest, in the S3 emulator's directory while the run goes on: the claim
    // of the warm runner it went to (sandbox-inputs/pool/<runner>/claim-<k>.json, bound to the
    // victim's workspace), or the run.json of a task of its own.
    const victimKey = await waitFor(
      'the victim run’s manifest',
      async () => {
        for (const bucket of buckets) {
          const inputs = join(s3Dir, bucket, 'sandbox-inputs');
          for (const runner of await readdir(join(inputs, 'pool')).catch(() => [] as string[])) {
            for (const file of await readdir(join(inputs, 'pool', runner)).catch(() => [] as string[])) {
              const claim = /^(claim-\d+\.json)\._S3rver_object$/.exec(file)?.[1];
              if (!claim) continue;
              const text = await readFile(join(inputs, 'pool', runner, file), 'utf8').catch(() => '');
              if (text.includes(`"workspaceId":"${victim.workspaceId}"`)) {
                return `sandbox-inputs/pool/${runner}/${claim}`;
              }
            }
          }
          for (const run of await readdir(inputs).catch(() => [] as string[])) {
            if (existsSync(join(inputs, run, 'run.json._S3rver_object')))
              return `sandbox-inputs/${run}/run.json`;
          }
        }
        return undefined;
      },
      60_000,
    );

    const res = await d.request<{ data: Record<string, unknown> }>('POST', '/local/prober/v1/run', {
      body: { buckets, victimKey },
    });
    assert.equal(res.status, 200, `${res.text}\n${d.output().slice(-3000)}`);
    const report = res.body.data as {
      ports: number[];
      attempts: { what: string; port: number; status?: number; body?: string; error?: string }[];
      routes: string[];
    };
    assert.ok((report.attempts ?? []).length > 0, `the tool found a port to try: ${res.text}`);
    assert.ok(report.attempts.some((a) => a.what === 'read another run’s env file'));
    for (const a of report.attempts) {
      assert.equal(a.status, 403, `${a.what} on port ${a.port}: ${JSON.stringify(a)}`);
      assert.match(String(a.body), /<Code>AccessDenied<\/Code>/);
      assert.ok(!String(a.body).includes(victimSecret));
    }
    assert.ok(!res.text.includes(victimSecret));
    // No route out: the S3 emulator's port is the sandbox's only way out, as S3 is the Fargate task's.
    assert.deepEqual(report.routes, []);
    for (const bucket of buckets) {
      assert.equal(existsSync(join(s3Dir, bucket, 'bundles', 'planted-by-tenant.tgz._S3rver_object')), false);
    }
    // Secrets Manager's state on disk holds the victim's secret encrypted, never in clear.
    const state = await readFile(join(d.dataDir, 'aws', 'secrets-manager.json'), 'utf8');
    assert.ok(state.length > 0 && !state.includes(victimSecret), 'the secret is not on disk in clear');
    // The victim sleeps past the attack (until its deadline stops it, under load); it gave nothing away.
    const slept = await victimRun;
    assert.ok(!slept.text.includes(victimSecret));
  });
});

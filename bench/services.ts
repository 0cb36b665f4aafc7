/**
 * `npm run bench:services`: what an always-on service costs on the local host.
 *
 * Deploys a small HTTP app (Node's http module, answering a short JSON) through the platform's
 * API in this process (SQLite), once with the app on the host's network (PLATFORM_SANDBOX=
 * unisolated) and once in its own network namespace behind pasta (bubblewrap, the default), side
 * by side in one run, then measures:
 *  - the gateway's added latency: the same GET sent N times straight to the app's port (host
 *    network only: in its own namespace the app is reachable only through the gateway) and N
 *    times through the service gateway, one at a time over keep-alive connections (p50, p99);
 *  - restart time: from POST .../restart to /health answering 200 again, and to the first
 *    proxied answer, over several restarts.
 * Results go to docs/performance.md.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { packDirectory } from '../functions/cli/pack.ts';
import { createAccount } from '../functions/core/accounts/account.ts';
import { startTestPlatform } from '../test/helpers/platform.ts';
import { machineLine, quantile, writeReport } from './report.ts';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const RESTARTS = Number(process.env.BENCH_RESTARTS ?? 5);

const APP = `import { createServer } from 'node:http';
createServer((req, res) => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ ok: true, port: process.env.PORT })); })
  .listen(Number(process.env.PORT), '127.0.0.1');`;

interface Measured {
  /** Straight to the app's port: only where the app shares the host's network (unisolated). */
  direct: number[] | undefined;
  gateway: number[];
  toHealth: number[];
  toServe: number[];
}

/** One platform with the given sandbox, one deployed app, every measure (module comment). */
async function measure(sandbox: 'bubblewrap' | 'unisolated'): Promise<Measured> {
  const p = await startTestPlatform({ PLATFORM_LOG_LEVEL: 'silent', PLATFORM_SANDBOX: sandbox });
  const dispatcher = new Agent({ connections: 4, keepAliveTimeout: 30_000 });
  try {
    const o = await createAccount(p.deps, { org: 'bench', tier: 'pro' });
    const key = o.api_key;
    const agent = await p.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', {
      key,
      body: {
        name: 'web',
        type: 'tool',
        description: 'Bench app.',
        supported_providers: ['any'],
        runtime: { command: 'node server.mjs' },
        required_secrets: [],
      },
    });
    const dir = await mkdtemp(join(tmpdir(), 'agenthost-bench-svc-'));
    await writeFile(join(dir, 'server.mjs'), APP);
    const bundle = (await packDirectory(dir)).data;
    await rm(dir, { recursive: true, force: true });
    await p.request('POST', `/agents/${agent.body.id}/upload`, {
      key,
      rawBody: bundle,
      headers: { 'content-type': 'application/gzip' },
    });
    const base = `/workspaces/${o.workspace_id}/services`;
    const deployed = await p.request<{ id: string; url: string }>('POST', base, {
      key,
      body: { agent: 'bench/web' },
    });
    if (deployed.status !== 201) throw new Error(`deploy failed: ${deployed.text}`);
    const { id, url } = deployed.body;
    const waitHealthy = async () => {
      for (;;) {
        const r = await request(`${url}/health`, { dispatcher }).catch(() => undefined);
        if (r) {
          await r.body.dump();
          if (r.statusCode === 200) return;
        }
        await new Promise((res) => setTimeout(res, 5));
      }
    };
    await waitHealthy();

    const time = async (target: string) => {
      const samples: number[] = [];
      for (let i = 0; i < REQUESTS; i++) {
        const s = performance.now();
        const r = await request(target, { dispatcher });
        await r.body.dump();
        if (r.statusCode !== 200) throw new Error(`${target} answered ${r.statusCode}`);
        samples.push(performance.now() - s);
      }
      return samples.sort((a, b) => a - b);
    };
    // Unisolated, PORT is a host port; under bubblewrap it is 3000 in the app's own namespace,
    // reachable only through the gateway.
    const first = await request(`${url}/`, { dispatcher });
    const appPort = ((await first.body.json()) as { port: string }).port;
    const direct = sandbox === 'unisolated' ? `http://127.0.0.1:${appPort}/` : undefined;
    if (direct) await time(direct);
    await time(`${url}/`);
    const d = direct ? await time(direct) : undefined;
    const g = await time(`${url}/`);

    const toHealth: number[] = [];
    const toServe: number[] = [];
    for (let i = 0; i < RESTARTS; i++) {
      const s = performance.now();
      const r = await p.request('POST', `${base}/${id}/restart`, { key });
      if (r.status !== 200) throw new Error(`restart failed: ${r.text}`);
      await waitHealthy();
      toHealth.push(performance.now() - s);
      for (;;) {
        const res = await request(`${url}/`, { dispatcher }).catch(() => undefined);
        if (res) {
          await res.body.dump();
          if (res.statusCode === 200) break;
        }
      }
      toServe.push(performance.now() - s);
    }
    toHealth.sort((a, b) => a - b);
    toServe.sort((a, b) => a - b);
    return { direct: d, gateway: g, toHealth, toServe };
  } finally {
    await dispatcher.close();
    await p.close();
  }
}

async function main(): Promise<void> {
  // Side by side in one run: the app on the host's network (unisolated: no namespace, no pasta),
  // and in its own network namespace behind pasta (bubblewrap, the default).
  const shared = await measure('unisolated');
  const own = await measure('bubblewrap');
  const f = (n: number) => n.toFixed(2);
  const q = (xs: number[], at: number) => quantile(xs, at);
  const d = shared.direct as number[];
  const lines = [
    `direct p50 ${f(q(d, 0.5))} ms; gateway (host network) p50 ${f(q(shared.gateway, 0.5))} ms; gateway + pasta (own network) p50 ${f(q(own.gateway, 0.5))} ms p99 ${f(q(own.gateway, 0.99))} ms`,
    `restart to first answer: host network median ${Math.round(q(shared.toServe, 0.5))} ms, own network median ${Math.round(q(own.toServe, 0.5))} ms`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  const row = (label: string, xs: number[]) => `| ${label} | ${f(q(xs, 0.5))} | ${f(q(xs, 0.99))} |`;
  const table = [
    `${machineLine()}; ${REQUESTS} sequential keep-alive GETs per path after as many warm-up requests; ${RESTARTS} restarts per sandbox; both sandboxes in one run, ${new Date().toISOString().slice(0, 10)}.`,
    '',
    '| GET of the app | p50 ms | p99 ms |',
    '| -------------- | -----: | -----: |',
    row('app directly (host network, unisolated)', d),
    row('through the gateway (host network, unisolated)', shared.gateway),
    row('through the gateway and pasta (own network, bubblewrap: the default)', own.gateway),
    '',
    `Added by the gateway: p50 ${f(q(shared.gateway, 0.5) - q(d, 0.5))} ms; by the app's own network (pasta) on top: p50 ${f(q(own.gateway, 0.5) - q(shared.gateway, 0.5))} ms, p99 ${f(q(own.gateway, 0.99) - q(shared.gateway, 0.99))} ms (ratio of p50s ${(q(own.gateway, 0.5) / q(shared.gateway, 0.5)).toFixed(2)}).`,
    '',
    '| restart (POST .../restart until) | host network median ms | own network median ms | own network max ms |',
    '| -------------------------------- | ---------------------: | --------------------: | -----------------: |',
    `| /health answers 200 | ${Math.round(q(shared.toHealth, 0.5))} | ${Math.round(q(own.toHealth, 0.5))} | ${Math.round(own.toHealth.at(-1) ?? 0)} |`,
    `| the first proxied answer | ${Math.round(q(shared.toServe, 0.5))} | ${Math.round(q(own.toServe, 0.5))} | ${Math.round(own.toServe.at(-1) ?? 0)} |`,
  ].join('\n');
  await writeReport('services', 'Always-on services: gateway latency and restart time', table);
}

await main();

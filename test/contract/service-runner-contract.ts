/**
 * The ServiceRunner port's contract (functions/ports/service-runner.ts), one suite run against
 * every adapter (test/contract/service-runner-contract.test.ts: the local host on bubblewrap, and the ECS
 * runner against the emulated deployment's stand-ins). The cases follow one service through its
 * life (start, logs, replace, crash, pause, resume, delete), as each ECS task takes seconds to
 * come up; then what no service needs (stopping unknown ids, close). Where the adapters
 * legitimately differ, the case reads the port (fetchesBundle, logs, the port start answers) or a
 * capability the fixture states: nothing is skipped.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { freeLoopbackPort } from '../../functions/emulator/dynamodb-local.ts';
import type {
  ServiceExit,
  ServiceLaunch,
  ServiceRunner,
  SupervisionHooks,
} from '../../functions/ports/service-runner.ts';
import { bundleOf } from '../helpers/bundles.ts';
import { waitForIgnoringErrors } from '../helpers/wait-for.ts';

export interface ServiceRunnerCapabilities {
  kind: ServiceRunner['kind'];
  fetchesBundle: boolean;
  /** Where log lines go: kept by the runner, read with logs() (ECS); or handed to onLog (local). */
  logs: 'runner' | 'hooks';
  /**
   * What close() ends: the services this process runs (local: gateways and processes), or
   * nothing, where they run elsewhere (ECS: the tasks go on; supervision is the events function's).
   */
  closeStopsServices: boolean;
}

/** A log line as both adapters give it. */
type LogLine = { at: string; level: 'info' | 'warn' | 'error'; message: string };

/**
 * What a runner reported of each service. Bound as the supervision hooks (the local host calls
 * them); an adapter whose supervision runs elsewhere (ECS: the task state change events) has its
 * fixture call them as that supervision reads the events. Every exit but a fatal one is answered
 * with a restart after RESTART_DELAY_MS.
 */
export class SupervisionRecorder implements SupervisionHooks {
  readonly ready = new Map<string, number>();
  readonly exits = new Map<string, ServiceExit[]>();
  readonly lines = new Map<string, LogLine[]>();

  async onStarting(): Promise<void> {}
  async onReady(id: string): Promise<void> {
    this.ready.set(id, (this.ready.get(id) ?? 0) + 1);
  }
  async onHealthy(): Promise<void> {}
  async onExit(id: string, exit: ServiceExit) {
    this.exits.set(id, [...(this.exits.get(id) ?? []), exit]);
    // As core's supervision decides: a fatal exit pauses at once, others restart.
    return { restart: !exit.fatal, delayMs: RESTART_DELAY_MS };
  }
  async onLog(id: string, lines: LogLine[]): Promise<void> {
    this.lines.set(id, [...(this.lines.get(id) ?? []), ...lines]);
  }
}

const RESTART_DELAY_MS = 100;

export interface ServiceRunnerFixture {
  runner: ServiceRunner;
  capabilities: ServiceRunnerCapabilities;
  /** A runner that fetches the bundle: the bundle stored where its tasks read it, and a signed URL of it. */
  bundleUrl(data: Buffer): Promise<string>;
  /** A runner that reads secrets by reference: the values stored where it finds them. */
  putSecrets(workspaceId: string, values: Record<string, string>): void;
  /** A GET of a service URL, as a client of it would make it. */
  get(url: string): Promise<{ status: number; body: string }>;
  close(): Promise<void>;
}

/**
 * The app: answers what it was started with (a boot id, its variables), writes a line with its
 * secret to stdout and one to stderr when it starts, and exits with status 3 on GET /crash.
 */
const APP = `
import { createServer } from 'node:http';
const boot = Math.random().toString(36).slice(2);
console.log('booted ' + boot + ' token=' + process.env.APP_TOKEN);
console.error('error: a line on stderr, with ' + process.env.APP_TOKEN);
createServer((req, res) => {
  if (req.url === '/crash') {
    res.end('bye');
    setTimeout(() => process.exit(3), 50);
    return;
  }
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({
    boot,
    path: req.url,
    greeting: process.env.GREETING,
    token: process.env.APP_TOKEN,
    port: process.env.PORT,
    httpPort: process.env.PLATFORM_HTTP_PORT,
  }));
}).listen(Number(process.env.PORT));
`;

const SECRET = 'tok-contract-5d1e9c07';

/** Services start, restart and stop in other processes, through emulated AWS: up to 45 s each. */
const waitFor = <T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 45_000) =>
  waitForIgnoringErrors(what, fn, timeoutMs);

interface AppAnswer {
  boot: string;
  path: string;
  greeting: string;
  token: string;
  port: string;
  httpPort: string;
}

/**
 * `open` is handed the hooks the suite binds: a fixture whose runner's supervision runs elsewhere
 * (ECS) calls them as that supervision would.
 */
export function serviceRunnerContract(
  label: string,
  open: (hooks: SupervisionHooks) => Promise<ServiceRunnerFixture>,
): void {
  describe(`ServiceRunner contract: ${label}`, () => {
    let fx: ServiceRunnerFixture;
    let runner: ServiceRunner;
    const hooks = new SupervisionRecorder();
    let bundle: Buffer;
    let workerBundle: Buffer;
    let emptyBundle: Buffer;
    const serviceId = randomUUID();
    const otherId = randomUUID();
    const workspaceId = randomUUID();
    let url = '';
    let firstBoot = '';

    /** A launch as core/services builds it for this runner (functions/core/services/service-supervision.ts). */
    const launchOf = async (env: Record<string, string>, data = bundle): Promise<ServiceLaunch> => {
      const base = {
        serviceId,
        name: 'web',
        workspaceId,
        command: null,
        secretNames: ['APP_TOKEN'],
        http: true,
        instances: { min: 1, max: 1 },
      };
      const platformEnv = { PLATFORM_SERVICE_ID: serviceId };
      if (runner.fetchesBundle) {
        fx.putSecrets(workspaceId, { APP_TOKEN: SECRET });
        return {
          ...base,
          bundle: { data: Buffer.alloc(0), format: 'tar.gz' },
          bundleUrl: await fx.bundleUrl(data),
          env: { ...env, ...platformEnv },
          secrets: {},
        };
      }
      return {
        ...base,
        bundle: { data, format: 'tar.gz' },
        env: { ...env, APP_TOKEN: SECRET, ...platformEnv },
        secrets: { APP_TOKEN: SECRET },
      };
    };
    /** The app's answer through the service URL, once it gives one. */
    const answer = async (path = '/info'): Promise<AppAnswer | undefined> => {
      const r = await fx.get(`${url}${path}`);
      return r.status === 200 ? (JSON.parse(r.body) as AppAnswer) : undefined;
    };
    /** The service's log lines: the runner's (logs()), or those handed to the hooks. */
    const logLines = async (): Promise<LogLine[]> =>
      runner.logs ? runner.logs(serviceId, { limit: 1000 }) : (hooks.lines.get(serviceId) ?? []);
    /** The URL no longer reaches the app: nothing answers, or the gateway's or balancer's refusal. */
    const unreachable = async (): Promise<true | undefined> => {
      const r = await fx.get(`${url}/info`).catch(() => undefined);
      return r === undefined || r.status !== 200 ? true : undefined;
    };

    before(async () => {
      fx = await open(hooks);
      runner = fx.runner;
      runner.bind(hooks);
      bundle = await bundleOf({ 'server.mjs': APP });
      workerBundle = await bundleOf({ 'main.js': "setInterval(() => console.log('working'), 200);\n" });
      emptyBundle = await bundleOf({ 'README.txt': 'nothing to run\n' });
    });
    after(async () => {
      for (const id of [serviceId, otherId]) await runner.stop(id, { remove: true }).catch(() => undefined);
      await runner.close();
      await fx.close();
    });

    it(`states its capabilities (${label})`, () => {
      assert.equal(runner.kind, fx.capabilities.kind);
      assert.equal(runner.fetchesBundle, fx.capabilities.fetchesBundle);
      assert.equal(typeof runner.logs === 'function', fx.capabilities.logs === 'runner');
      assert.equal(runner.unavailableReason, undefined, 'a configured runner states no reason to refuse');
    });

    it('start answers the URL: /health is 200 once the app listens, the rest reaches the app with its variables and secrets', async () => {
      const preferred = await freeLoopbackPort();
      const started = await runner.start(await launchOf({ GREETING: 'hello' }), { preferredPort: preferred });
      url = started.url;
      assert.match(url, /^https?:\/\/[^/]+$/);
      // A port of its own (the URL's, and the preferred one when free), or none (one balancer for all).
      if (started.port !== null) {
        assert.equal(new URL(url).port, String(started.port));
        assert.equal(started.port, preferred, 'the preferred port, free, is taken');
      }
      const health = await waitFor('/health to answer 200', async () => {
        const r = await fx.get(`${url}/health`);
        return r.status === 200 ? r : undefined;
      });
      assert.equal(health.status, 200);
      const app = await waitFor('the app through its URL', answer);
      firstBoot = app.boot;
      assert.equal(app.path, '/info');
      assert.equal(app.greeting, 'hello');
      assert.equal(app.token, SECRET, 'the secret reaches the app (by value, or by reference)');
      assert.equal(app.port, app.httpPort, 'PORT and PLATFORM_HTTP_PORT name the same port');
      assert.notEqual(app.port, '8080', "the app's port is not the gateway's");
      assert.ok(Number(app.port) > 0);
      await waitFor('the start reported ready', async () =>
        (hooks.ready.get(serviceId) ?? 0) > 0 ? true : undefined,
      );
    });

    it("the app's output becomes the service's log lines, secret values redacted, stderr's errors as errors", async () => {
      const lines = await waitFor('both start lines', async () => {
        const all = await logLines();
        return all.some((l) => l.message.startsWith('booted ')) &&
          all.some((l) => l.message.startsWith('error: a line on stderr'))
          ? all
          : undefined;
      });
      assert.deepEqual(
        lines.filter((l) => l.message.includes(SECRET)),
        [],
        'no line holds the secret value',
      );
      const booted = lines.find((l) => l.message.startsWith(`booted ${firstBoot}`));
      assert.equal(booted?.message, `booted ${firstBoot} token=[REDACTED]`);
      assert.equal(booted?.level, 'info');
      const error = lines.find((l) => l.message.startsWith('error: a line on stderr'));
      assert.equal(error?.message, 'error: a line on stderr, with [REDACTED]');
      assert.equal(error?.level, 'error');
      for (const l of lines) assert.ok(!Number.isNaN(Date.parse(l.at)), l.at);
      if (runner.logs) {
        // Kept by the runner: the query's level, limit (the newest) and time bounds apply.
        const errors = await runner.logs(serviceId, { limit: 1000, level: 'error' });
        assert.ok(errors.length > 0 && errors.every((l) => l.level === 'error'));
        assert.ok(errors.some((l) => l.message === error?.message));
        const newest = await runner.logs(serviceId, { limit: 1 });
        assert.deepEqual(newest, lines.slice(-1));
        const later = new Date(Date.now() + 60_000).toISOString();
        assert.deepEqual(await runner.logs(serviceId, { limit: 1000, since: later }), []);
      }
    });

    it('start again replaces the running instance: the same URL, the new launch, the old instance gone', async () => {
      const again = await runner.start(await launchOf({ GREETING: 'hello again' }));
      assert.equal(again.url, url);
      const app = await waitFor('the replacement', async () => {
        const a = await answer();
        return a?.greeting === 'hello again' ? a : undefined;
      });
      assert.notEqual(app.boot, firstBoot);
      // Once replaced (after an overlap, where instances are replaced as on ECS), only the new one answers.
      await waitFor('only the new instance to answer', async () => {
        for (let i = 0; i < 5; i++) if ((await answer())?.boot !== app.boot) return undefined;
        return true;
      });
      firstBoot = app.boot;
    });

    it('a crash is reported with its exit status, and the service comes back', async () => {
      const before = hooks.exits.get(serviceId)?.length ?? 0;
      const r = await fx.get(`${url}/crash`);
      assert.equal(r.status, 200);
      const exit = await waitFor('the exit reported', async () => hooks.exits.get(serviceId)?.[before]);
      assert.equal(exit.exitCode, 3);
      assert.equal(exit.fatal, false);
      const back = await waitFor('the service back', async () => {
        const a = await answer().catch(() => undefined);
        return a && a.boot !== firstBoot ? a : undefined;
      });
      assert.equal(back.greeting, 'hello again', 'the same launch again');
      firstBoot = back.boot;
    });

    it('stop pauses: the URL stops reaching the app until the next start; stopping again resolves', async () => {
      await runner.stop(serviceId);
      await waitFor('the URL to stop reaching the app', unreachable, 20_000);
      await runner.stop(serviceId);
      const resumed = await runner.start(await launchOf({ GREETING: 'resumed' }));
      assert.equal(resumed.url, url, 'the same URL after a pause');
      const app = await waitFor('the resumed app', async () => {
        const a = await answer();
        return a?.greeting === 'resumed' ? a : undefined;
      });
      assert.notEqual(app.boot, firstBoot);
    });

    it('stop with remove: the URL stops reaching the app; stopping it again, or pausing it, resolves', async () => {
      const exitsBefore = hooks.exits.get(serviceId)?.length ?? 0;
      await runner.stop(serviceId, { remove: true });
      await waitFor('the URL to stop reaching the app', unreachable, 20_000);
      await runner.stop(serviceId, { remove: true });
      await runner.stop(serviceId);
      // Stopped on purpose: not an exit to supervise.
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(hooks.exits.get(serviceId)?.length ?? 0, exitsBefore, 'no exit reported for a stop');
    });

    it('stop of a service it never started resolves, pausing or removing', async () => {
      const unknown = randomUUID();
      await runner.stop(unknown);
      await runner.stop(unknown, { remove: true });
      await runner.stop(unknown);
    });

    it('without HTTP: /health answers 200 once the app has run a second; nothing else reaches it', async () => {
      const id = randomUUID();
      const worker = await runner.start({
        ...(await launchOf({ GREETING: 'worker' }, workerBundle)),
        serviceId: id,
        name: 'worker',
        http: false,
      });
      try {
        await waitFor('/health to answer 200', async () =>
          (await fx.get(`${worker.url}/health`)).status === 200 ? true : undefined,
        );
        assert.equal((await fx.get(`${worker.url}/info`)).status, 503);
        await waitFor('the worker reported ready', async () =>
          (hooks.ready.get(id) ?? 0) > 0 ? true : undefined,
        );
      } finally {
        await runner.stop(id, { remove: true });
      }
    });

    it('a bundle without an entrypoint is a fatal exit: reported as such, and not restarted', async () => {
      const id = randomUUID();
      await runner.start({
        ...(await launchOf({}, emptyBundle)),
        serviceId: id,
        name: 'empty',
      });
      try {
        const exit = await waitFor('the exit reported', async () => hooks.exits.get(id)?.[0]);
        assert.equal(exit.fatal, true, `a fatal exit, not ${JSON.stringify(exit)}`);
        assert.equal(hooks.ready.get(id), undefined, 'never ready');
      } finally {
        await runner.stop(id, { remove: true });
      }
      assert.ok((hooks.exits.get(id) ?? []).every((e) => e.fatal));
    });

    it('close() resolves, twice; it ends what this process runs, or (services running elsewhere) leaves them', async () => {
      const other = await runner.start({
        ...(await launchOf({ GREETING: 'before close' })),
        serviceId: otherId,
        name: 'closing',
      });
      const reached = async () => {
        const r = await fx.get(`${other.url}/info`).catch(() => undefined);
        return r?.status === 200 ? JSON.parse(r.body) : undefined;
      };
      await waitFor('the second service', reached);
      await runner.close();
      await runner.close();
      if (fx.capabilities.closeStopsServices) {
        assert.equal(await reached(), undefined, 'closed: its URL no longer reaches the app');
      } else {
        assert.equal((await reached())?.greeting, 'before close', 'the service runs on');
      }
    });
  });
}

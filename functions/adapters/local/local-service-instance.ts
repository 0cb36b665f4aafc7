/**
 * One always-on service on the local host (local-service-host.ts keeps one per service): its HTTP
 * gateway (the service URL), the app's process in the sandbox, its readiness and healthy period,
 * and what follows an exit (the supervision hooks decide whether to start it again).
 */
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { APP_PORT, GATEWAY_PORT } from '../../containers/service-protocol.ts';
import type { ExecOptions, Sandbox, SandboxLimits, SandboxSession } from '../../ports/sandbox.ts';
import type { ServiceExit, ServiceLaunch, SupervisionHooks } from '../../ports/service-runner.ts';
import { detectEntrypoint, ENTRYPOINT_SCAN, installCommand } from '../../shared/entrypoint.ts';
import { redactSecrets } from '../../shared/redact-secrets.ts';
import { SERVER_ERROR_MESSAGE } from '../../shared/server-error-log.ts';
import { accepts, execPublished, freePort, treeListensOn } from './listening-ports.ts';
import { listensInNamespace } from './pasta-network.ts';
import { LogPump } from './service-log-pump.ts';

/**
 * The spec's ports, as in AWS: the gateway owns GATEWAY_PORT (8080), which an app must not bind
 * locally either; the app listens on APP_PORT (3000) when the sandbox has a network of its own,
 * else on a free host port.
 */
const SERVICE_LIMITS: SandboxLimits = {
  cpuSeconds: 7 * 86_400,
  memoryBytes: 1024 * 1024 * 1024,
  processes: 128,
  outputBytes: 64 * 1024,
  diskBytes: 1024 * 1024 * 1024,
};
/** A process is recycled after this long (the sandbox's deadline); an ordinary restart follows. */
const MAX_PROCESS_LIFETIME_MS = 7 * 86_400_000;
const INSTALL_TIMEOUT_MS = 10 * 60_000;
/** Readiness checks: every 20 ms in an app's first two seconds, then every 100 ms. */
const FIRST_READY_POLL_MS = 20;
const READY_POLL_MS = 100;
/** How often the app is checked for listening on the gateway's port 8080 while it starts. */
const GATEWAY_CHECK_MS = 400;

/** The local service host's settings (functions/platform/deps.ts), which each instance reads. */
export interface LocalServiceHostOptions {
  sandbox: Sandbox;
  /** Address the gateways listen on (the platform's HOST). */
  host: string;
  /** Host loopback ports apps may reach (PLATFORM_SANDBOX_HOST_PORTS), where the sandbox has its own network. */
  hostLoopbackPorts: number[];
  healthyMs: number;
  startTimeoutMs: number;
  log: (level: 'info' | 'warn' | 'error', message: string, fields: Record<string, unknown>) => void;
}

export class ServiceInstance {
  readonly id: string;
  private readonly hooks: SupervisionHooks;
  private readonly options: LocalServiceHostOptions;
  private server: Server | undefined;
  port = 0;
  url = '';
  private generation = 0;
  private ready = false;
  private appPort: number | null = null;
  private current: { controller: AbortController; done: Promise<void> } | undefined;
  private restartTimer: NodeJS.Timeout | undefined;

  constructor(id: string, hooks: SupervisionHooks, options: LocalServiceHostOptions) {
    this.id = id;
    this.hooks = hooks;
    this.options = options;
  }

  async listen(preferred: number | undefined): Promise<void> {
    const server = createServer((req, res) => this.handle(req, res));
    const tryListen = (port: number) =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, this.options.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
    try {
      await tryListen(preferred ?? 0);
    } catch {
      await tryListen(0);
    }
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    const host = this.options.host.includes(':') ? `[${this.options.host}]` : this.options.host;
    this.url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${this.port}`;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/health') {
      const body = JSON.stringify({ status: this.ready ? 'ok' : 'starting' });
      res.writeHead(this.ready ? 200 : 503, { 'content-type': 'application/json' }).end(body);
      return;
    }
    if (!this.ready || this.appPort === null) {
      this.logServerError(req, 503, 'SERVICE_UNAVAILABLE');
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '2' });
      res.end(
        JSON.stringify({ error: { code: 'SERVICE_UNAVAILABLE', message: 'The service is not ready' } }),
      );
      return;
    }
    const upstream = httpRequest(
      { host: '127.0.0.1', port: this.appPort, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => {
      // Cut mid-answer, the app's status has gone out already: no 502 to log.
      if (!res.headersSent) {
        this.logServerError(req, 502, 'BAD_GATEWAY');
        res.writeHead(502, { 'content-type': 'application/json' });
      }
      res.end(JSON.stringify({ error: { code: 'BAD_GATEWAY', message: 'The service did not answer' } }));
    });
    req.pipe(upstream);
  }

  /**
   * The operator's line for a 5xx the gateway answers itself (not the app's own answers, which are
   * the app's to log), as the API's are logged: the method, never the path or anything sent.
   */
  private logServerError(req: IncomingMessage, status: number, code: string): void {
    this.options.log('warn', SERVER_ERROR_MESSAGE, {
      service_id: this.id,
      method: req.method,
      status,
      code,
    });
  }

  /** Stops what runs now and starts `launch` in its place. */
  async replace(launch: ServiceLaunch): Promise<void> {
    await this.stopProcess();
    const gen = ++this.generation;
    void this.runOnce(launch, gen);
  }

  async stopProcess(): Promise<void> {
    this.generation++;
    clearTimeout(this.restartTimer);
    this.ready = false;
    const current = this.current;
    this.current = undefined;
    if (current) {
      current.controller.abort();
      await current.done;
    }
  }

  async closeGateway(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }

  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: one run of the service's process: its start, health wait and exit share the run's state
  private async runOnce(launch: ServiceLaunch, gen: number): Promise<void> {
    const controller = new AbortController();
    let finish!: () => void;
    const done = new Promise<void>((r) => {
      finish = r;
    });
    this.current = { controller, done };
    const logs = new LogPump(this.id, launch.secrets, this.hooks);
    let session: SandboxSession | undefined;
    let exit: ServiceExit | undefined;
    const started = Date.now();
    try {
      // With a network of its own (bubblewrap) the app listens on the spec's port 3000, as on
      // AWS, and is published on a free host loopback port for the gateway alone; sharing the
      // host's network (unisolated), it gets a free host port itself.
      const own = this.options.sandbox.ownNetwork;
      const hostPort = launch.http ? await freePort(this.options.host) : null;
      const appPort = hostPort === null ? null : own ? APP_PORT : hostPort;
      this.appPort = hostPort;
      session = await this.options.sandbox.openSession({
        runId: `svc-${this.id.slice(0, 8)}-${gen}-${Date.now().toString(36)}`,
        workspaceId: launch.workspaceId,
        bundle: launch.bundle ?? undefined,
        env: {
          ...launch.env,
          ...(appPort ? { PORT: String(appPort), PLATFORM_HTTP_PORT: String(appPort) } : {}),
          PYTHONPATH: '.python-packages',
        },
        network: 'egress',
        hostLoopbackPorts: this.options.hostLoopbackPorts,
        limits: SERVICE_LIMITS,
        deadlineMs: Date.now() + MAX_PROCESS_LIFETIME_MS,
      });
      const files: string[] = await session.listFiles('.').catch(() => []);
      const read = (f: string) =>
        files.includes(f)
          ? session
              ?.readFile(f)
              .then((b) => b.toString('utf8'))
              .catch(() => undefined)
          : undefined;
      const [pkg, reqs] = await Promise.all([read('package.json'), read('requirements.txt')]);
      const command = launch.command ?? detectEntrypoint(files, pkg);
      if (!command) {
        exit = {
          exitCode: null,
          signal: null,
          reason: `no entrypoint: no command given, no run_command, and none of ${ENTRYPOINT_SCAN.map((e) => e.file).join(', ')} (nor a package.json start script) in the bundle`,
          uptimeMs: 0,
          fatal: true,
        };
        return;
      }
      const install = installCommand(pkg, reqs);
      if (install) {
        logs.platform('info', `installing dependencies: ${install}`);
        const r = await session.exec(install, {
          timeoutMs: INSTALL_TIMEOUT_MS,
          signal: controller.signal,
          onOutput: (s, c) => logs.push(s, c),
        });
        if (controller.signal.aborted || gen !== this.generation) return;
        if (r.exitCode !== 0) {
          exit = {
            exitCode: r.exitCode,
            signal: r.signal,
            reason: `dependency install failed (exit ${r.exitCode})`,
            uptimeMs: 0,
            fatal: false,
          };
          return;
        }
      }
      await this.hooks.onStarting(this.id, { command });
      let pid: number | undefined;
      const options: ExecOptions = {
        signal: controller.signal,
        onOutput: (s, c) => logs.push(s, c),
        onSpawn: (p) => {
          pid = p;
        },
      };
      const open = session;
      const run =
        own && hostPort !== null && appPort !== null
          ? execPublished(
              hostPort,
              () => freePort(this.options.host),
              (port) => {
                this.appPort = port;
                return open.exec(command, { ...options, publish: { hostPort: port, port: appPort } });
              },
            )
          : session.exec(command, options);
      let exited = false;
      const watch = this.watch(
        gen,
        appPort,
        own,
        () => pid,
        () => exited,
        controller,
        logs,
      );
      const result = await run;
      exited = true;
      const conflict = await watch;
      // Stopped on purpose (pause, delete, replace): not an exit to supervise.
      if (gen !== this.generation) return;
      this.ready = false;
      const lastErr = result.stderrTail.trim().split('\n').pop() ?? '';
      const how = result.timedOut
        ? `recycled after ${MAX_PROCESS_LIFETIME_MS / 86_400_000} days`
        : result.signal
          ? `killed by ${result.signal}`
          : `exited with status ${result.exitCode}`;
      exit = {
        exitCode: result.exitCode,
        signal: result.signal,
        reason: redactSecrets(
          conflict ?? `${how}${lastErr ? `: ${lastErr.slice(0, 300)}` : ''}`,
          launch.secrets,
        ),
        uptimeMs: Date.now() - started,
        fatal: false,
      };
    } catch (err) {
      exit = {
        exitCode: null,
        signal: null,
        reason: `could not start: ${(err as Error).message}`,
        uptimeMs: 0,
        fatal: false,
      };
    } finally {
      await logs.close();
      await session?.close().catch(() => undefined);
      if (this.current?.done === done) this.current = undefined;
      finish();
      if (exit && gen === this.generation) void this.afterExit(launch, gen, exit);
    }
  }

  private async afterExit(launch: ServiceLaunch, gen: number, exit: ServiceExit): Promise<void> {
    try {
      const decision = await this.hooks.onExit(this.id, exit);
      if (!decision.restart || gen !== this.generation) return;
      this.restartTimer = setTimeout(() => {
        if (gen === this.generation) void this.runOnce(launch, gen);
      }, decision.delayMs);
    } catch (err) {
      this.options.log('error', 'service exit not handled', { service_id: this.id, error: String(err) });
    }
  }

  /**
   * Readiness: the app accepts connections on its port (or, without HTTP, has run for a second);
   * then, after the healthy period, the restart-failure counter resets. An app that listens on
   * 8080 instead, or not at all within the start timeout, is stopped with a clear reason.
   * Resolves with that reason, or undefined.
   */
  private async watch(
    gen: number,
    appPort: number | null,
    ownNetwork: boolean,
    pid: () => number | undefined,
    exited: () => boolean,
    controller: AbortController,
    logs: LogPump,
  ): Promise<string | undefined> {
    const until = Date.now() + this.options.startTimeoutMs;
    const live = () => !exited() && gen === this.generation && !controller.signal.aborted;
    let nextGatewayCheck = Date.now() + GATEWAY_CHECK_MS;
    // In a namespace of its own, the app's sockets are the namespace's: look there (the host side
    // of the published port accepts before the app listens). Otherwise try the port.
    const listening = async (port: number) => {
      const root = pid();
      if (!ownNetwork) return accepts(port);
      return root !== undefined && (await listensInNamespace(root, port));
    };
    const onGatewayPort = async (root: number) =>
      ownNetwork ? listensInNamespace(root, GATEWAY_PORT) : treeListensOn(root, GATEWAY_PORT);
    while (live()) {
      if (
        appPort === null
          ? Date.now() - (until - this.options.startTimeoutMs) >= 1000
          : await listening(appPort)
      ) {
        this.ready = true;
        await this.hooks.onReady(this.id);
        const healthy = setTimeout(() => {
          if (live()) void this.hooks.onHealthy(this.id);
        }, this.options.healthyMs);
        healthy.unref();
        return undefined;
      }
      const root = pid();
      const gatewayDue = Date.now() >= nextGatewayCheck;
      if (gatewayDue) nextGatewayCheck = Date.now() + GATEWAY_CHECK_MS;
      if (root !== undefined && gatewayDue && (await onGatewayPort(root))) {
        const reason = `the app listens on port ${GATEWAY_PORT}, which belongs to the service gateway; listen on $PORT (here ${appPort})`;
        logs.platform('error', reason);
        controller.abort();
        return reason;
      }
      if (Date.now() > until) {
        const reason = `the app did not listen on $PORT (${appPort}) within ${Math.round(this.options.startTimeoutMs / 1000)} s`;
        logs.platform('error', reason);
        controller.abort();
        return reason;
      }
      // Often at first, when most apps come up; then every READY_POLL_MS.
      const sinceStart = Date.now() - (until - this.options.startTimeoutMs);
      await new Promise((r) => setTimeout(r, sinceStart < 2_000 ? FIRST_READY_POLL_MS : READY_POLL_MS));
    }
    return undefined;
  }
}

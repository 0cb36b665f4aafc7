/**
 * The ServiceRunner port: where always-on services run. Core code (core/services) decides; the
 * runner keeps processes alive and reports what happens to them through the supervision hooks
 * (core/services/service-supervision.ts), which the dependency factory binds. Adapters: a local
 * host of supervised sandboxed processes behind per-service gateways
 * (adapters/local/local-service-host.ts); ECS Fargate services in AWS
 * (adapters/aws/ecs-service-runner.ts). test/contract/service-runner-contract.test.ts holds both to what
 * the comments here promise.
 */
/**
 * How long a task's signed URLs (the bundle's, and in AWS the launcher's) stay valid. A task
 * started later (ECS replacing a crashed task, or scaling out) cannot download them until the
 * service is started again (docs/services.md).
 */
export const SERVICE_BUNDLE_URL_SECONDS = 3600;

export interface ServiceLaunch {
  serviceId: string;
  /** The service's name (its public host name in AWS). */
  name: string;
  workspaceId: string;
  /** The agent's code bundle. */
  bundle: { data: Buffer; format: 'tar.gz' | 'zip' } | null;
  /** Where the task downloads the bundle (AWS: a signed URL, refreshed on every start). */
  bundleUrl?: string;
  /** The deploy-time command override, then the manifest's run_command; null: auto-scan. */
  command: string | null;
  /**
   * Plain variables, plus (local) the secret values; PORT and PLATFORM_HTTP_PORT are the runner's.
   * In AWS no secret value is here: the task gets them by reference (secretNames).
   */
  env: Record<string, string>;
  /** The secret names injected (the agent's required_secrets and the extra ones). */
  secretNames: string[];
  /** The secret values (local only), for redacting logs. */
  secrets: Record<string, string>;
  /** Whether the app serves HTTP (false: outbound only, no port). */
  http: boolean;
  instances: { min: number; max: number };
}

export interface ServiceExit {
  exitCode: number | null;
  signal: string | null;
  /** What ended it, in words, for last_error and the timeline (secrets redacted). */
  reason: string;
  /** The process ran this long. */
  uptimeMs: number;
  /** A failure no restart can fix (no entrypoint found): pause at once. */
  fatal: boolean;
  /**
   * When the runner created the task that ended (AWS: ECS's `createdAt`), where its reports can
   * arrive after the platform launched the service again (ECS's events come through EventBridge,
   * seconds late): an exit of a task created before the latest launch is an earlier launch's and
   * counts nothing. Absent where every exit is the current launch's (the local host stops a
   * replaced process itself, which is no exit).
   */
  taskCreatedAt?: string;
}

export interface SupervisionHooks {
  onStarting(serviceId: string, detail: { command: string }): Promise<void>;
  /** A task of the service answers its health check (`taskCreatedAt`: as on ServiceExit). */
  onReady(serviceId: string, taskCreatedAt?: string): Promise<void>;
  /** The app stayed up for the healthy period: the restart-failure counter resets. */
  onHealthy(serviceId: string): Promise<void>;
  /**
   * The process ended on its own. The answer says whether, and after how long, to start it again;
   * `stale`: the exit was an earlier launch's task (ServiceExit.taskCreatedAt), nothing to do.
   */
  onExit(
    serviceId: string,
    exit: ServiceExit,
  ): Promise<{ restart: boolean; delayMs: number; stale?: boolean }>;
  onLog(
    serviceId: string,
    lines: { at: string; level: 'info' | 'warn' | 'error'; message: string }[],
  ): Promise<void>;
}

export interface ServiceRunner {
  readonly kind: 'local' | 'ecs';
  /**
   * True when a service's task fetches its bundle itself (a signed URL, fresh on every start) and
   * reads its secrets by reference (ECS); false when the runner is handed the bundle and the
   * secret values (the local host).
   */
  readonly fetchesBundle: boolean;
  /** Set when services cannot run on this deployment (not configured): deploys are refused with it. */
  readonly unavailableReason?: string;
  /**
   * Receives the supervision hooks (the dependency factory calls it once). The local host calls
   * them itself; in AWS the ECS task state change events reach them (jobs/service-events.ts).
   */
  bind(hooks: SupervisionHooks): void;
  /**
   * Starts the service, or replaces its running instances with this launch (the same URL; once the
   * new instances are up, only they answer); answers its URL. There, GET /health answers 200 once
   * the app listens on PORT (an app without HTTP: once it has run a second) and the rest reaches
   * the app. `port` is the service's own port, the URL's (the preferred one when it is free), or
   * null where services share one entry (the load balancer).
   */
  start(
    launch: ServiceLaunch,
    options?: { preferredPort?: number },
  ): Promise<{ url: string; port: number | null }>;
  /**
   * Stops its instances (pause, delete); the URL stops reaching the app until the next start. Not
   * an exit to supervise. Idempotent: stopping a service that is stopped, removed or was never
   * started resolves.
   */
  stop(serviceId: string, options?: { remove?: boolean }): Promise<void>;
  /**
   * Stops everything this process runs (shutdown, tests); services that run elsewhere (ECS tasks)
   * go on. Resolves again when called again.
   */
  close(): Promise<void>;
  /**
   * The service's log lines, when the runner keeps them itself (AWS: CloudWatch Logs); absent
   * locally, where the supervision hooks store them. The newest `limit` lines within [since,
   * until] (inclusive) whose level is `level` or above, in time order; core/logs pages them.
   */
  logs?(
    serviceId: string,
    query: { since?: string; until?: string; level?: 'info' | 'warn' | 'error'; limit: number },
  ): Promise<{ at: string; level: 'info' | 'warn' | 'error'; message: string }[]>;
}

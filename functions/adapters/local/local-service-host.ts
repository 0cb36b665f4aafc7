import type { ServiceLaunch, ServiceRunner, SupervisionHooks } from '../../ports/service-runner.ts';
import { type LocalServiceHostOptions, ServiceInstance } from './local-service-instance.ts';

/**
 * Always-on services on one machine (docs/services.md): per service, an HTTP gateway on its own
 * port (the service URL) that answers GET /health itself (200 once the app listens, 503 before)
 * and proxies everything else to the app; the app runs in the sandbox with outbound network (its
 * own namespace under bubblewrap: docs/sandbox.md), its port in PORT and PLATFORM_HTTP_PORT. The host streams redacted log
 * lines, watches readiness and the healthy period, refuses an app that binds the gateway's port 8080, and asks the supervision
 * hooks what to do when the process ends. This file keeps the services apart and their lifecycle
 * operations in order; local-service-instance.ts is one service's gateway and process.
 */
export class LocalServiceHost implements ServiceRunner {
  readonly kind = 'local' as const;
  readonly fetchesBundle = false;
  private hooks: SupervisionHooks | undefined;
  private readonly instances = new Map<string, ServiceInstance>();
  /** Each service's lifecycle operations, chained (serialized). */
  private readonly queues = new Map<string, Promise<unknown>>();
  /** Deleted services: ids are never reused, so a start for one is refused. */
  private readonly removed = new Set<string>();
  /** While close() runs: starts queued meanwhile are refused rather than run after the halt. */
  private closing = false;
  private readonly options: LocalServiceHostOptions;

  constructor(options: LocalServiceHostOptions) {
    this.options = options;
  }

  bind(hooks: SupervisionHooks): void {
    this.hooks = hooks;
  }

  async start(launch: ServiceLaunch, options: { preferredPort?: number } = {}) {
    const hooks = this.hooks;
    if (!hooks) throw new Error('The service host has no supervision hooks bound');
    return this.serialized(launch.serviceId, async () => {
      // A start that was decided before a delete and arrives after it must not bring it back.
      if (this.removed.has(launch.serviceId)) throw new Error('The service was deleted');
      if (this.closing) throw new Error('The service host is shutting down');
      let instance = this.instances.get(launch.serviceId);
      if (!instance) {
        instance = new ServiceInstance(launch.serviceId, hooks, this.options);
        await instance.listen(options.preferredPort);
        this.instances.set(launch.serviceId, instance);
      }
      await instance.replace(launch);
      return { url: instance.url, port: instance.port };
    });
  }

  async stop(serviceId: string, options: { remove?: boolean } = {}): Promise<void> {
    // Removal is a delete: ids are never reused, so later starts of this id are refused.
    if (options.remove) this.removed.add(serviceId);
    await this.halt(serviceId, options.remove === true);
  }

  private halt(serviceId: string, remove: boolean): Promise<void> {
    return this.serialized(serviceId, async () => {
      const instance = this.instances.get(serviceId);
      if (!instance) return;
      await instance.stopProcess();
      if (remove) {
        await instance.closeGateway();
        this.instances.delete(serviceId);
      }
    });
  }

  /**
   * Runs one lifecycle operation of a service after the ones before it. Concurrent starts
   * (a burst of PATCHes, each restarting) would otherwise each launch a process, and only the
   * last would be tracked: the others would outlive the service.
   */
  private serialized<T>(serviceId: string, op: () => Promise<T>): Promise<T> {
    const before = this.queues.get(serviceId) ?? Promise.resolve();
    const result = before.then(op, op);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(serviceId, tail);
    void tail.then(() => {
      if (this.queues.get(serviceId) === tail) this.queues.delete(serviceId);
    });
    return result;
  }

  /**
   * Platform shutdown: every service's processes and gateway go; they start again on resume.
   * Starts queued while it runs (a deploy answered just before) are refused, not run after the
   * halt, where nothing would stop them.
   */
  async close(): Promise<void> {
    this.closing = true;
    try {
      await Promise.all([...this.queues.values()]);
      await Promise.all([...this.instances.keys()].map((id) => this.halt(id, true)));
    } finally {
      // Closed: a later start (services resumed on this host) begins afresh.
      this.closing = false;
    }
  }
}

import type { Server } from 'node:http';
import { allCredentialChecks, allOperations } from '../http/index.ts';
import { AnswerFirst } from '../platform/answer-first.ts';
import type { DashboardAssets } from '../platform/dashboard-assets.ts';
import type { Deps } from '../platform/deps.ts';
import type { FetchHandler } from '../platform/edge/edge-context.ts';
import { NodeShell } from '../platform/edge/node-shell.ts';
import { createPlatformApp } from '../platform/edge/platform-app.ts';
import { sharedDownload } from '../platform/local-downloads.ts';

/**
 * The local platform's HTTP server: the platform's app with every module's operations (the same
 * app each Lambda serves with its own module's), behind the Node shell. Beside the API, what AWS
 * serves from S3: a large output's download links (as S3's presigned GETs) and the dashboard's
 * files, for paths no API route has.
 */
export class LocalServer {
  readonly server: Server;
  private readonly deps: Deps;
  private readonly shell: NodeShell;

  /** `dashboard`: the built web app, served at `/` for paths no API route has. */
  constructor(deps: Deps, options: { dashboard?: DashboardAssets | undefined } = {}) {
    this.deps = deps;
    const dashboard = options.dashboard;
    const api = createPlatformApp(async () => deps, allOperations, {
      credentialChecks: allCredentialChecks,
      ...(dashboard ? { fallback: (request, pathname) => dashboard.answer(request, pathname) } : {}),
    });
    const app: FetchHandler = async (request, context, after) => {
      const download = context.refusal ? undefined : await sharedDownload(deps.bundles, request);
      return download ?? api(request, context, after);
    };
    const store = deps.store;
    this.shell = new NodeShell(app, deps, {
      answerFirst: new AnswerFirst(store, deps.logger),
      // One look at the store's state per request (Store.asOneRequest), not one per read.
      ...(store.asOneRequest ? { around: (handle) => store.asOneRequest?.(handle) ?? handle() } : {}),
    });
    this.server = this.shell.server;
  }

  async listen(port: number, host: string): Promise<string> {
    const url = await this.shell.listen(port, host);
    // Orchestrator runs call the platform here (PLATFORM_API_URL) unless PLATFORM_PUBLIC_URL says otherwise.
    this.deps.config.publicUrl ??= url;
    return url;
  }

  close(): Promise<void> {
    return this.shell.close();
  }
}

import type { Server } from 'node:http';
import type { Server as NetServer } from 'node:net';
import { SqliteAnswerFirst } from '../adapters/local/sqlite-answer-first.ts';
import { SqliteStore } from '../adapters/local/sqlite-store.ts';
import type { FetchHandler } from '../edge/edge-context.ts';
import { createPlatformApp } from '../edge/platform-app.ts';
import { allCredentialChecks, allOperations } from '../http/index.ts';
import type { DashboardAssets } from '../platform/dashboard-assets.ts';
import type { Deps } from '../platform/deps.ts';
import { sharedDownload } from '../platform/local-downloads.ts';
import { type InMemoryFetch, inMemoryShell } from './in-memory-shell.ts';
import { NodeShell, type NodeShellOptions } from './node-shell.ts';
import type { UnreadAnswers } from './unread-answers.ts';

/**
 * The local platform's HTTP server: the platform's app with every module's operations (the same
 * app each Lambda serves with its own module's), behind the Node shell. Beside the API, what AWS
 * serves from S3: a large output's download links (as S3's presigned GETs) and the dashboard's
 * files, for paths no API route has.
 */
export class LocalServer {
  readonly server: Server;
  /** Bytes of answers their clients have not read yet (the tests' view of them). */
  readonly unread: UnreadAnswers;
  /** The same app in memory: a Request in, its Response out, no socket (in-memory-shell.ts). */
  readonly fetch: InMemoryFetch;
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
    const transport = shellOptions(deps);
    this.shell = new NodeShell(app, deps, transport);
    this.fetch = inMemoryShell(app, {
      // Until the server listens: where relative URLs point and what orchestrator runs would call.
      base: deps.config.publicUrl ?? 'http://127.0.0.1/',
      ...(transport.around ? { around: transport.around } : {}),
      logger: deps.logger,
    });
    this.server = this.shell.server;
    this.unread = this.shell.unread;
  }

  /** On `port` of `host`, or on a port bound beforehand (port-reservation.ts), which it takes over. */
  async listen(port: number | NetServer, host?: string): Promise<string> {
    const url = await this.shell.listen(port, host);
    // Orchestrator runs call the platform here (PLATFORM_API_URL) unless PLATFORM_PUBLIC_URL says otherwise.
    this.deps.config.publicUrl ??= url;
    return url;
  }

  close(): Promise<void> {
    return this.shell.close();
  }
}

/**
 * What the embedded store adds to the Node shell: one look at the store's state per request
 * (SqliteStore.asOneRequest), not one per read, and answers before the commit of the work they
 * leave (sqlite-answer-first.ts). Another store (DynamoDB Local in tests) gets neither: its
 * answers wait for their work, as on AWS.
 */
function shellOptions(deps: Deps): NodeShellOptions {
  const store = deps.store;
  if (!(store instanceof SqliteStore)) return {};
  return {
    around: (handle) => store.asOneRequest(handle),
    earlyAnswers: new SqliteAnswerFirst(store, deps.logger),
  };
}

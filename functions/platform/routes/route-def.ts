import type * as z from 'zod';
import type { ErrorCode } from '../../shared/errors.ts';

/**
 * What one entry of the route table (functions/platform/routes.ts) declares; the resource modules
 * that serve them.
 */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export const MODULES = [
  'health',
  'openapi',
  'api-keys',
  'tasks',
  'workspaces',
  'secrets',
  'agents',
  'agent-authoring',
  'public',
  'calls',
  'schedules',
  'schedule-runs',
  'services',
  'billing',
  'usage',
  // No routes of its own: every other method of every path (405, CORS preflight, 404; docs/http.md).
  'edge',
  'mcp',
] as const;
export type ResourceModule = (typeof MODULES)[number];

export interface RouteDef {
  method: HttpMethod;
  /** API Gateway style template: /tasks/{task_id}. */
  path: string;
  module: ResourceModule;
  auth: 'api-key' | 'none';
  /**
   * The route also accepts a run credential (an orchestrator run's PLATFORM_SERVICE_KEY, `ahr_…`),
   * within the run's declared dependencies, hops, deadline and budget. Every route without it
   * answers 401 for one. Declared here once; checked in authenticate (core/api-keys).
   */
  acceptsRunCredential?: true;
  /**
   * For workspace-scoped routes: the role the caller needs in the workspace (checked in the core
   * by requireMembership; documented and tested from here). Not a member: 404. Member where owner
   * is needed: 403.
   */
  workspaceRole?: 'member' | 'owner';
  summary: string;
  /**
   * What the operation does beyond its summary (who may, what it answers, where docs/ says more):
   * /openapi.json's description, followed by the role a workspace-scoped route needs. Every
   * operation has one (test/edge/openapi-document.test.ts).
   */
  description?: string;
  tag: string;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  /**
   * What /openapi.json documents as the JSON body when `body` validates only the outline and the
   * core checks the rest (a manifest: parsed by core/agents/manifest.ts, with issues named by field).
   */
  documentedBody?: z.ZodType;
  /**
   * A raw (non-JSON) body, such as a code bundle: delivered as bytes with its Content-Type, or as a
   * stream when `stream` is set (the local server then spools it to a temporary file). `json` is
   * what its application/json form holds, for /openapi.json (default: any JSON value).
   */
  binaryBody?: { maxBytes: number; contentTypes: string[]; stream?: true; json?: z.ZodType };
  /** Request headers the operation reads (documented only: the core reads them by name). */
  headers?: z.ZodType;
  /**
   * Error codes the operation answers besides the ones its declaration implies (401 and 429 for
   * api-key routes, 400 for inputs, 404 for ids and workspaces, 403 for owner routes, 413 and 415
   * for bodies, 500 always): documented in /openapi.json per status, as the enum of error.code.
   */
  errors?: ErrorCode[];
  success: {
    status: 200 | 201 | 204;
    schema?: z.ZodType;
    description: string;
    /** A body that is not JSON (the local checkout page): documented as this type, a string. */
    contentType?: 'text/html';
    /**
     * The route also answers as Server-Sent Events when the client prefers them (`Accept`; the call
     * route: edge/streamed-call.ts): documented as that type too, each event's `data:` line one
     * of `events`.
     */
    eventStream?: { description: string; events: readonly StreamEventDoc[] };
    /** Response headers beyond the ones every response carries (X-Request-Id, X-RateLimit-*). */
    headers?: ('Deprecation' | 'Sunset' | 'Link' | 'X-Trace-Id')[];
  };
  /**
   * The route also answers 202 Accepted, documented as a second success: the call route when the
   * client sends `Prefer: respond-async` (RFC 7240), a cancel not yet done (docs/runs.md).
   */
  accepted?: {
    schema: z.ZodType;
    description: string;
    headers: ('Location' | 'Preference-Applied' | 'X-Trace-Id')[];
  };
  /**
   * The body is a document served exactly as it is (/openapi.json), not an API object: no
   * metadata.request_id is added (the request id is in X-Request-Id), so it validates as served.
   */
  document?: true;
  /**
   * The answer is a protocol's own (MCP's JSON-RPC over Streamable HTTP): status, headers and body
   * as the operation's protocol answer gives them (protocolAnswer, edge/answers.ts: 202 for
   * notifications, JSON-RPC errors, no metadata.request_id). What fails before the operation runs (the key, the body's size, the
   * query) still answers the platform's error envelope.
   */
  protocol?: 'mcp';
}

/** One kind of Server-Sent Event a route sends: its `event:` name and the JSON of its `data:` line. */
export interface StreamEventDoc {
  event: string;
  description: string;
  data: z.ZodType;
}

/** Checks an entry against RouteDef while keeping its literal type (the handlers are typed by it). */
export const route = <const R extends RouteDef>(r: R): R => r;

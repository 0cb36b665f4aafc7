import type * as z from 'zod';

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
  tag: string;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  /**
   * A raw (non-JSON) body, such as a code bundle: delivered as bytes with its Content-Type, or as a
   * stream when `stream` is set (the local server then spools it to a temporary file).
   */
  binaryBody?: { maxBytes: number; contentTypes: string[]; stream?: true };
  /**
   * What the route answers when it does its job. 405 only for a route that exists to refuse a
   * method its protocol names (GET and DELETE /mcp: a stateless MCP server has no stream or session).
   */
  success: { status: 200 | 201 | 204 | 405; schema?: z.ZodType; description: string };
  /**
   * The body is a document served exactly as it is (/openapi.json), not an API object: no
   * metadata.request_id is added (the request id is in X-Request-Id), so it validates as served.
   */
  document?: true;
  /**
   * The answer is a protocol's own (MCP's JSON-RPC over Streamable HTTP): status, headers and body
   * as the operation's ProtocolReply gives them (202 for notifications, JSON-RPC errors, no
   * metadata.request_id). What fails before the operation runs (the key, the body's size, the
   * query) still answers the platform's error envelope.
   */
  protocol?: 'mcp';
}

/** Checks an entry against RouteDef while keeping its literal type (the handlers are typed by it). */
export const route = <const R extends RouteDef>(r: R): R => r;

import type { Deps } from '../platform/deps.ts';
import type { OperationId } from '../platform/routes.ts';
import { countIfUncounted, KeylessReads, refuseCounted } from './address-admission.ts';
import { answer } from './answer-mapping.ts';
import { ClientGone } from './body-reading.ts';
import type { AfterAnswer, EdgeContext, FetchHandler, RequestScope } from './edge-context.ts';
import { errorAnswer } from './error-mapping.ts';
import type { CredentialChecks } from './keyless-bodies.ts';
import type { AnyOperation } from './operations.ts';
import { requestUrlOf } from './request-url.ts';
import { RouteMatcher } from './route-matcher.ts';
import { serveRoute } from './serve-route.ts';
import { unrouted } from './unrouted.ts';

/*
 * The platform's API as one Fetch API function (edge-context.ts): the request scope, the route
 * (route-matcher.ts), then the route's units (serve-route.ts) or, for a request no route takes,
 * 404, 405 or the CORS preflight (unrouted.ts). Any error becomes its envelope in one place
 * (error-mapping.ts). The Lambda of each API resource serves this with that resource's
 * operations; the local platform serves it with all of them.
 */

export interface PlatformAppOptions {
  /**
   * What answers a path no route has, before the API's 404 (the local platform's dashboard files):
   * a Response, or undefined to let the API answer.
   */
  fallback?: (request: Request, pathname: string) => Response | undefined;
  /** The credential checks of the keyless routes served whose credential is in the path. */
  credentialChecks?: CredentialChecks;
}

const matcher = new RouteMatcher();

export function createPlatformApp(
  getDeps: () => Promise<Deps>,
  operations: Partial<Record<OperationId, AnyOperation>>,
  options: PlatformAppOptions = {},
): FetchHandler {
  const keylessReads = new KeylessReads(options.credentialChecks ?? {});
  return async (request: Request, context: EdgeContext, after: AfterAnswer): Promise<Response> => {
    const url = requestUrlOf(request);
    const method = request.method;
    const scope = {
      requestId: context.requestId,
      gatewayRequestId: context.gatewayRequestId,
      address: context.address,
      waitUntil: after.waitUntil,
      onDelivered: after.onDelivered,
      origin: request.headers.get('origin') ?? undefined,
    } as RequestScope;
    let template: string | undefined;
    try {
      scope.deps = await getDeps();
      if (context.refusal) await refuseCounted(scope, context.refusal);
      const found = matcher.match(method, url.pathname);
      template = found.template;
      const operation = found.match ? operations[found.match.id] : undefined;
      if (found.match && operation) {
        return await serveRoute(scope, found.match, operation, request, url, context, keylessReads);
      }
      if (found.match) {
        // A route of another function's, reached here only by a path API Gateway gave this one
        // (a greedy resource: `POST /tasks/a/b/c` has the agent call's shape, and `tasks` is no
        // org): no route of this function's, so the 404 a path outside the table gets, as locally.
        template = undefined;
      }
      if (!template) {
        const fallback = options.fallback?.(request, url.pathname);
        if (fallback) return fallback;
      }
      const header = (name: string) => request.headers.get(name) ?? undefined;
      const preflight = await unrouted(
        scope,
        {
          method,
          path: url.pathname,
          authorization: header('authorization'),
          requestedHeaders: header('access-control-request-headers'),
        },
        template ? matcher.methodsOf(template) : undefined,
      );
      return await answer(scope, preflight, { method, path: template ?? url.pathname });
    } catch (err) {
      // Nobody is left to read an answer; the shell drops the connection.
      if (err instanceof ClientGone) return new Response(null, { status: 400 });
      await countIfUncounted(scope);
      return errorAnswer(scope, err, { method, path: scope.route?.def.path ?? template ?? url.pathname });
    }
  };
}

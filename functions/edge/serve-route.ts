import { rm } from 'node:fs/promises';
import { bodyTooLarge } from '../shared/errors.ts';
import { admitAccount, chargeAnswer } from './account-admission.ts';
import { type KeylessReads, refuseCounted } from './address-admission.ts';
import { answer } from './answer-mapping.ts';
import { authenticateKey } from './authentication.ts';
import { BodyOverLimit, drainBody, type ReadBody, readBody, spoolBody } from './body-reading.ts';
import { bodySizing } from './carried-body-meter.ts';
import type { EdgeContext, RequestScope } from './edge-context.ts';
import { IGNORED_KEYLESS_BODY_BYTES } from './keyless-bodies.ts';
import { parseInput } from './operation-input.ts';
import type { AnyOperation } from './operations.ts';
import type { RouteMatch } from './route-matcher.ts';

/*
 * One matched route, in the order that keeps a body unread until someone may send it: the caller
 * (authentication.ts; keyless, the address's count and the path's credential: address-admission.ts)
 * and its account's request rate (account-admission.ts), then the declared size, then the body (body-reading.ts), then the route's schemas
 * (operation-input.ts), the operation, and its answer (answer-mapping.ts).
 */
export async function serveRoute(
  scope: RequestScope,
  { id, route, params }: RouteMatch,
  operation: AnyOperation,
  request: Request,
  url: URL,
  context: EdgeContext,
  keylessReads: KeylessReads,
): Promise<Response> {
  scope.route = { id, def: route };
  const deps = scope.deps;
  const header = (name: string) => request.headers.get(name) ?? undefined;
  const keyless = route.auth === 'none';
  const takesBody = route.body !== undefined || route.binaryBody !== undefined;
  // A route that takes no body reads none: what a client sends anyway is dropped, up to a small
  // bound when nothing vouches for the request.
  const limit = takesBody
    ? (route.binaryBody?.maxBytes ?? deps.config.maxBodyBytes)
    : keyless
      ? IGNORED_KEYLESS_BODY_BYTES
      : deps.config.maxBodyBytes;
  // Every body is counted as AWS's event would carry it: the same bodies fit on both deployments.
  const sizing = bodySizing(header('content-length'), header('content-type'), limit);
  let releaseRead: (() => void) | undefined;
  if (keyless) {
    // Refused without waiting on anything else, so no connection waits holding a body it cannot send.
    if (sizing.declaredRefusal) await refuseCounted(scope, sizing.declaredRefusal);
    releaseRead = await keylessReads.admit(scope, params, takesBody);
  } else {
    await authenticateKey(scope, header('authorization'), route.acceptsRunCredential === true);
    await admitAccount(scope);
    if (sizing.declaredRefusal) throw sizing.declaredRefusal;
  }

  let body: Buffer | ReadBody | undefined;
  try {
    const bounds = { limit, meter: sizing.meter(), refusal: sizing.refusal };
    if (!takesBody) await drainBody(request, limit).catch(rethrowOverLimit(limit));
    else if (route.binaryBody?.stream) body = await spoolBody(request, bounds, context.bodyBuffered === true);
    else body = await readBody(request, bounds);
  } finally {
    releaseRead?.();
  }
  try {
    const input = parseInput(route, {
      params,
      query: url.searchParams,
      body,
      contentType: header('content-type'),
    });
    const result = await operation({
      ...input,
      auth: scope.auth,
      deps,
      requestId: scope.requestId,
      gatewayRequestId: scope.gatewayRequestId,
      path: url.pathname,
      header,
      waitUntil: scope.waitUntil,
      onDelivered: scope.onDelivered,
    });
    const response = await answer(scope, result, { method: request.method, path: route.path });
    chargeAnswer(scope, response);
    return response;
  } finally {
    // Removed before the answer goes out, also when the operation fails.
    if (body && !Buffer.isBuffer(body) && 'path' in body) await rm(body.path, { force: true });
  }
}

function rethrowOverLimit(limit: number) {
  return (err: unknown) => {
    throw err instanceof BodyOverLimit ? bodyTooLarge(limit) : err;
  };
}

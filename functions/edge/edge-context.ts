import type { AuthContext } from '../core/api-keys/api-keys.ts';
import type { AddressAdmission } from '../core/usage/address-rate-limit.ts';
import type { Deps } from '../platform/deps.ts';
import type { OperationId, RouteDef } from '../platform/routes.ts';
import type { PlatformError } from '../shared/errors.ts';

/*
 * The one contract of the HTTP edge (docs/architecture.md, "Request path"): every route is served
 * by one function from a Fetch API Request, with this small context, to a Response. The shells
 * (node-shell.ts, lambda-shell.ts, lambda-stream-shell.ts) adapt their transport to it and hold no
 * routing, authentication or per-route rule of their own.
 */

/** What a shell knows about a request besides the Request itself. */
export interface EdgeContext {
  /** The platform's request id (`req_<UUID v7>`), minted by the shell as the request arrives. */
  requestId: string;
  /**
   * API Gateway's own id of the request (on AWS; the one its access log and `x-amzn-RequestId`
   * carry), kept beside the platform's in the call's log line and the operator's error line.
   */
  gatewayRequestId?: string | undefined;
  /** The client's address: the connection's peer, or API Gateway's sourceIp; never a header. */
  address: string;
  /** The whole body is in memory already (API Gateway buffered it): read it so, never to a file. */
  bodyBuffered?: boolean;
  /**
   * A refusal the shell decided from the connection alone (too many open from the address): the
   * app answers it as it answers any refusal, with the request counted against its address.
   */
  refusal?: PlatformError;
}

/**
 * Work the answer need not wait for, which the shell still sees through (the Fetch world's
 * ExecutionContext.waitUntil). A Lambda finishes it before it returns; the Node shell sends the
 * answer first only where its early-answer policy allows (node-shell.ts).
 */
export interface AfterAnswer {
  waitUntil(work: Promise<unknown>): void;
  /**
   * Runs `run` once the answer has been delivered whole (the network took its last byte) or its
   * client is gone, and sees it through as waitUntil's work (a streamed call's concurrency slot is
   * released so: docs/calls.md, "Streamed calls"). A shell that cannot tell leaves it out.
   */
  onDelivered?(run: () => Promise<unknown>): void;
}

/** The edge's one function: what every shell calls. */
export type FetchHandler = (request: Request, context: EdgeContext, after: AfterAnswer) => Promise<Response>;

/** One request's state as the middleware units fill it in, in order. */
export interface RequestScope {
  requestId: string;
  /** EdgeContext.gatewayRequestId. */
  gatewayRequestId?: string | undefined;
  address: string;
  /** The shell's AfterAnswer.waitUntil, for the operation. */
  waitUntil: (work: Promise<unknown>) => void;
  /** The shell's AfterAnswer.onDelivered, for the operation (absent where the shell cannot tell). */
  onDelivered?: ((run: () => Promise<unknown>) => void) | undefined;
  /** The request's Origin header, for CORS. */
  origin: string | undefined;
  deps: Deps;
  /** The route the request matched (unset for 404, 405 and preflights). */
  route?: { id: OperationId; def: RouteDef };
  /** The caller a key vouched for (authentication.ts). */
  auth?: AuthContext;
  /** This request counted against its address's limit (requests without a valid key). */
  addressAdmission?: AddressAdmission;
  /** The methods of the requested path, when the method asked is not one of them (405, preflight). */
  allow?: string[];
}

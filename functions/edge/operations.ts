import type { z } from 'zod';
import type { AuthContext } from '../core/api-keys/api-keys.ts';
import type { Deps } from '../platform/deps.ts';
import type { OperationId, ResourceModule, RouteDef, Routes } from '../platform/routes.ts';
import type { BinaryBody, StreamBody } from './operation-input.ts';

/*
 * What the edge hands an operation of functions/http/<module>.ts, and what it may answer: typed by
 * the operation's route, so a route's schemas and its operation cannot disagree.
 */

type Out<S> = S extends z.ZodType ? z.output<S> : Record<string, never>;

export interface OperationInput<R extends RouteDef> {
  params: Out<R['params']>;
  query: Out<R['query']>;
  body: R['binaryBody'] extends { stream: true }
    ? StreamBody
    : R['binaryBody'] extends object
      ? BinaryBody
      : Out<R['body']>;
  auth: R['auth'] extends 'api-key' ? AuthContext : undefined;
  deps: Deps;
  requestId: string;
  /** API Gateway's own id of the request, on AWS (EdgeContext.gatewayRequestId). */
  gatewayRequestId?: string | undefined;
  /** The request's path as sent (its percent-encoding kept), without the query. */
  path: string;
  /** A request header by lower-case name. */
  header: (name: string) => string | undefined;
  /** Hands the shell work the answer need not wait for (AfterAnswer.waitUntil, edge-context.ts). */
  waitUntil: (work: Promise<unknown>) => void;
  /** Hands the shell work to run once the answer is delivered (AfterAnswer.onDelivered); absent where it cannot tell. */
  onDelivered?: ((run: () => Promise<unknown>) => void) | undefined;
}

type Body<R extends RouteDef> = R['success']['schema'] extends z.ZodType
  ? BeforeMetadata<z.input<R['success']['schema']>>
  : undefined;

/**
 * A body as its operation answers it: answer-mapping.ts adds `metadata.request_id` to every JSON
 * answer, so a schema that lists it (the call's envelope) does not ask the operation for it.
 */
type BeforeMetadata<B> = B extends { metadata: infer M }
  ? Omit<B, 'metadata'> & { metadata: Omit<M, 'request_id'> }
  : B;
/** The route's body (sent as its JSON with the route's status), or an answer built whole (answers.ts). */
type Result<R extends RouteDef> = R['protocol'] extends string ? Response : Body<R> | Response;

/** The operations a resource module implements: one per route of that module, typed by the route. */
export type Operations<M extends ResourceModule> = {
  [K in OperationId as Routes[K]['module'] extends M ? K : never]: (
    input: OperationInput<Routes[K]>,
  ) => Promise<Result<Routes[K]>>;
};

/** An operation as the edge calls it, its types erased. */
export type AnyOperation = (input: {
  params: unknown;
  query: unknown;
  body: unknown;
  auth: AuthContext | undefined;
  deps: Deps;
  requestId: string;
  gatewayRequestId?: string | undefined;
  path: string;
  header: (name: string) => string | undefined;
  waitUntil: (work: Promise<unknown>) => void;
  onDelivered?: ((run: () => Promise<unknown>) => void) | undefined;
}) => Promise<unknown>;

import type { operations } from './generated/openapi.ts';

/**
 * The parts of an operation's request, by its operationId: what the generated resource methods
 * (generated/resources.ts) take as arguments. The `paths` entries openapi-fetch checks are these
 * same `operations` types.
 */
export type OperationId = keyof operations;

/** The query parameters (an object; every one optional unless the route requires it). */
export type Query<O extends OperationId> = operations[O]['parameters'] extends { query?: infer Q }
  ? NonNullable<Q>
  : never;

/** The request headers the operation documents. */
export type Header<O extends OperationId> = operations[O]['parameters'] extends { header?: infer H }
  ? NonNullable<H>
  : never;

/** The JSON request body. */
export type JsonBody<O extends OperationId> = operations[O] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;

/** The content types of a raw (non-JSON) request body, such as a code bundle. */
export type ContentType<O extends OperationId> = operations[O] extends { requestBody?: { content: infer C } }
  ? keyof C & string
  : never;

/** The bytes of a raw request body. */
export type RawBody = Uint8Array | Blob;

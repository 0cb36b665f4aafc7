import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import { errorEnvelope } from '../functions/edge/error-answer.ts';
import { eventBodyTooLarge } from '../functions/edge/event-body-budget.ts';
import { ERROR_CODES, type ErrorCode } from '../functions/shared/errors.ts';

/**
 * API Gateway answers some requests itself (no route, throttled, too large, a function that
 * failed or timed out). These templates give those answers the platform's error envelope, so a
 * client handles one shape. Codes, statuses and retryability come from functions/shared/errors.ts.
 */
export function addGatewayResponses(api: apigateway.RestApi): void {
  const headers = { 'Content-Type': "'application/json; charset=utf-8'", 'Cache-Control': "'no-store'" };
  const add = (
    id: string,
    type: apigateway.ResponseType,
    code: ErrorCode,
    /** A JSON string literal, or `$context.error.messageString` (already quoted and escaped). */
    message: string,
    options: { keepStatus?: boolean; waitSeconds?: number } = {},
  ) => {
    const wait = options.waitSeconds;
    api.addGatewayResponse(id, {
      type,
      ...(options.keepStatus ? {} : { statusCode: String(ERROR_CODES[code].status) }),
      responseHeaders: wait === undefined ? headers : { ...headers, 'Retry-After': `'${wait}'` },
      templates: {
        'application/json': gatewayErrorBody(code, message, wait),
      },
    });
  };

  // A path (or a method on a path) with no route: API Gateway calls it a missing token (403).
  add(
    'NotFound',
    apigateway.ResponseType.MISSING_AUTHENTICATION_TOKEN,
    'NOT_FOUND',
    json('No route matches this method and path'),
  );
  // The same answer the platform gives a body past AWS's event budget (event-body-budget.ts): what
  // API Gateway or Lambda refuse before the function runs is answered as `npm start` answers it.
  api.addGatewayResponse('TooLarge', {
    type: apigateway.ResponseType.REQUEST_TOO_LARGE,
    statusCode: String(ERROR_CODES.DOCUMENT_TOO_LARGE.status),
    responseHeaders: headers,
    templates: {
      'application/json': JSON.stringify(errorEnvelope(eventBodyTooLarge(), 'req_$context.requestId')),
    },
  });
  add(
    'Throttled',
    apigateway.ResponseType.THROTTLED,
    'RATE_LIMITED',
    json('Too many requests; retry after the suggested wait'),
    {
      waitSeconds: 1,
    },
  );
  add('Timeout', apigateway.ResponseType.INTEGRATION_TIMEOUT, 'TIMEOUT', json('The request timed out'));
  // Every other 4xx and 5xx API Gateway produces keeps its status.
  add('Default4xx', apigateway.ResponseType.DEFAULT_4XX, 'INVALID_INPUT', '$context.error.messageString', {
    keepStatus: true,
  });
  add(
    'Default5xx',
    apigateway.ResponseType.DEFAULT_5XX,
    'INTERNAL_ERROR',
    json('Internal error; quote request id req_$context.requestId when reporting it'),
    { keepStatus: true },
  );
}

/**
 * The envelope as an API Gateway template. An answer of API Gateway's own reached no function,
 * which would have minted the platform's id (http/lambda-shell.ts): it reports API Gateway's id
 * (its access log's) with the platform's `req_` prefix, so the field has one shape.
 */
export function gatewayErrorBody(code: ErrorCode, message: string, waitSeconds?: number): string {
  const wait = waitSeconds === undefined ? '' : `,"suggested_wait_time":${waitSeconds}`;
  return `{"error":{"code":"${code}","message":${message},"is_retryable":${ERROR_CODES[code].retryable}${wait}},"metadata":{"request_id":"req_$context.requestId"}}`;
}

function json(text: string): string {
  return JSON.stringify(text);
}

/**
 * How the Lambda API emulator (lambda-api-emulator.ts) reports a function's failure: the error an
 * `invoke` rejects with for an unknown function, and the Node.js runtime's error payload (with
 * its headers) for a handler that threw, answered to a synchronous call and recorded for an
 * asynchronous one.
 */

/** What `invoke` rejects with when no function has that name (answered as ResourceNotFoundException). */
export class FunctionNotFoundError extends Error {
  override name = 'FunctionNotFoundError';
}

export const functionErrorHeaders = {
  'x-amz-function-error': 'Unhandled',
  'x-amz-executed-version': '$LATEST',
};

/** The error payload of Lambda's Node.js runtime for a handler that threw. */
export function functionError(err: unknown): { errorType: string; errorMessage: string; trace?: string[] } {
  if (err instanceof Error) {
    return {
      errorType: err.name,
      errorMessage: err.message,
      ...(err.stack ? { trace: err.stack.split('\n') } : {}),
    };
  }
  return { errorType: 'Error', errorMessage: String(err) };
}

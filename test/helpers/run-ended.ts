import type { ApiResponse, RequestOptions } from './platform.ts';
import { waitFor } from './wait-for.ts';

type Requester = <T = Record<string, unknown>>(
  method: string,
  path: string,
  options?: RequestOptions,
) => Promise<ApiResponse<T>>;

/**
 * The run's document once it is no longer `running` (GET /runs/{run_id} polled with `request`,
 * a deployment's or a test platform's); `context` is added to the timeout's message (a
 * deployment's output, say).
 */
export async function runEnded<T extends { status: string }>(
  request: Requester,
  runId: string,
  options: { timeoutMs?: number; context?: () => string } = {},
): Promise<T> {
  return waitFor(
    'the run to end',
    async () => {
      const run = await request<T>('GET', `/runs/${runId}`);
      return run.body.status === 'running' ? undefined : run.body;
    },
    options.timeoutMs,
  ).catch((err: Error) => {
    throw new Error(options.context ? `${err.message}\n${options.context()}` : err.message);
  });
}

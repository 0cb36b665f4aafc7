/**
 * Retries of retryable errors (spec "Errors": RATE_LIMITED 429, INTERNAL_ERROR 500, LLM_ERROR 502,
 * TIMEOUT 504 have is_retryable true), as a fetch wrapper that openapi-fetch uses for every request.
 * The wait is the error's suggested_wait_time, else Retry-After, else an exponential backoff; a
 * wait longer than maxWaitMs (a daily quota resets at midnight) is not waited for: the error is
 * returned at once.
 */

export interface RetryOptions {
  /** Attempts in all, the first included (default 3; 1 disables retries). */
  maxAttempts?: number;
  /** The longest single wait worth waiting (default 30 s). */
  maxWaitMs?: number;
  /** The first backoff when the platform suggests no wait (default 500 ms, doubled each attempt). */
  baseDelayMs?: number;
}

/** Statuses whose errors the spec marks retryable; 503 is what a proxy in front answers when busy. */
const RETRYABLE_STATUSES = new Set([429, 500, 502, 503, 504]);

const sleep = (ms: number, signal?: AbortSignal | null) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

/** How long to wait before retrying `res`, or undefined when it must not be retried. */
async function retryDelay(res: Response, attempt: number, options: Required<RetryOptions>) {
  if (!RETRYABLE_STATUSES.has(res.status)) return undefined;
  let suggested: number | undefined;
  try {
    const body = (await res.clone().json()) as {
      error?: { is_retryable?: unknown; suggested_wait_time?: unknown };
    };
    if (body.error?.is_retryable === false) return undefined;
    if (typeof body.error?.suggested_wait_time === 'number') suggested = body.error.suggested_wait_time;
  } catch {
    // Not JSON (a proxy's page): the status alone decides.
  }
  const retryAfter = Number(res.headers.get('retry-after'));
  const seconds = suggested ?? (Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : undefined);
  const delay = seconds !== undefined ? seconds * 1000 : options.baseDelayMs * 2 ** (attempt - 1);
  return delay <= options.maxWaitMs ? delay : undefined;
}

/** A call's X-Platform-Deadline-Ms (epoch ms): no retry starts after it. */
function pastDeadline(request: Request, delay: number): boolean {
  const deadline = Number(request.headers.get('x-platform-deadline-ms') ?? Number.NaN);
  return Number.isFinite(deadline) && Date.now() + delay >= deadline;
}

export function retryingFetch(
  fetchImpl: (request: Request) => Promise<Response>,
  retry: RetryOptions = {},
): (request: Request) => Promise<Response> {
  const options: Required<RetryOptions> = {
    maxAttempts: retry.maxAttempts ?? 3,
    maxWaitMs: retry.maxWaitMs ?? 30_000,
    baseDelayMs: retry.baseDelayMs ?? 500,
  };
  return async (request) => {
    for (let attempt = 1; ; attempt++) {
      // A body can be sent once: each attempt but the last sends a copy.
      const last = attempt >= options.maxAttempts;
      const res = await fetchImpl(last ? request : request.clone());
      if (last) return res;
      const delay = await retryDelay(res, attempt, options);
      if (delay === undefined || pastDeadline(request, delay)) return res;
      await res.body?.cancel();
      await sleep(delay, request.signal);
    }
  };
}

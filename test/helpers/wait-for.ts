/**
 * Polls `fn` until it returns something other than undefined, or fails naming `what` after
 * `timeoutMs`: what a test waits with for anything that happens in another process (a service
 * becoming ready, a log line arriving, a CLI printing).
 */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 20_000,
  everyMs = 100,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * As `waitFor`, for a condition that throws until it holds (a connection refused while a process
 * starts): a throw counts as not yet, and the timeout's error names the last one.
 */
export async function waitForIgnoringErrors<T>(
  what: string,
  fn: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 20_000,
  everyMs = 100,
): Promise<T> {
  let last: unknown;
  const attempt = async () => {
    try {
      return await fn();
    } catch (err) {
      last = err;
      return undefined;
    }
  };
  try {
    return await waitFor(what, attempt, timeoutMs, everyMs);
  } catch (err) {
    if (!last) throw err;
    throw new Error(`${(err as Error).message}: ${String(last)}`);
  }
}

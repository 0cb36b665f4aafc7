/**
 * Sends `total` calls through `send`, `concurrency` in flight, and times each: the load every call
 * bench puts on a gateway. A call that does not answer 200 stops the bench.
 */
export async function driveCalls(
  concurrency: number,
  total: number,
  send: () => Promise<number>,
): Promise<{ samples: number[]; wallMs: number }> {
  const samples: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        const s = performance.now();
        const status = await send();
        if (status !== 200) throw new Error(`a bench call answered ${status}`);
        samples.push(performance.now() - s);
      }
    }),
  );
  return { samples, wallMs: performance.now() - t0 };
}

/**
 * Preloaded into a platform process (`node --import`) to run its wall clock
 * AGENTHOST_TEST_CLOCK_AHEAD_MS ahead: the process behaves as if it started that much later, so a
 * test about what happens after a deadline needs no sleep. Only Date moves; timers do not.
 */
const aheadMs = Number(process.env.AGENTHOST_TEST_CLOCK_AHEAD_MS ?? 0);
if (Number.isFinite(aheadMs) && aheadMs !== 0) {
  const RealDate = Date;
  const realNow = RealDate.now.bind(RealDate);
  class AheadDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(realNow() + aheadMs);
      else super(...(args as [string | number | Date]));
    }
    static override now(): number {
      return realNow() + aheadMs;
    }
  }
  globalThis.Date = AheadDate as DateConstructor;
}

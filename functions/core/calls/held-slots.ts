/**
 * The concurrency slots this process's calls hold now, per account: the order in which admitCall
 * (quotas.ts) tries an account's slots. A slot held here is tried only after every other slot, so
 * a burst of one account's calls in one process (a thousand schedules due in the same minute, or a
 * client at its concurrency limit) finds a free slot at the first try instead of trying held ones
 * one transaction at a time. It only orders the search: the store's conditional writes still
 * decide, so it is exact across processes (and Lambdas) as before, and a slot whose lease expired
 * while its call still runs here is still tried, last.
 */
export class HeldSlots {
  private readonly byAccount = new Map<string, Set<number>>();

  /**
   * Every slot of `count`, from a random one: those not held here first, then the held ones. Made
   * as the search goes (it usually stops at the first slot; an enterprise account has 500), over
   * the slots held when it began.
   */
  *order(accountId: string, count: number): Generator<number> {
    const heldNow = this.byAccount.get(accountId);
    const held = heldNow ? new Set(heldNow) : undefined;
    const start = Math.floor(Math.random() * count);
    for (let i = 0; i < count; i++) {
      const n = (start + i) % count;
      if (!held?.has(n)) yield n;
    }
    if (held)
      for (let i = 0; i < count; i++) {
        const n = (start + i) % count;
        if (held.has(n)) yield n;
      }
  }

  hold(accountId: string, n: number): void {
    const held = this.byAccount.get(accountId) ?? new Set<number>();
    held.add(n);
    this.byAccount.set(accountId, held);
  }

  release(accountId: string, n: number): void {
    const held = this.byAccount.get(accountId);
    if (!held) return;
    held.delete(n);
    if (held.size === 0) this.byAccount.delete(accountId);
  }

  /** How many slots of the account this process holds (for tests). */
  heldBy(accountId: string): number {
    return this.byAccount.get(accountId)?.size ?? 0;
  }
}

/** This process's slots (a Lambda serves one call at a time: there it orders nothing). */
export const heldSlots = new HeldSlots();

/**
 * How many of something (open connections, bodies being read without a key) each client address
 * holds at once, up to a maximum. The address is the connection's peer, never a header.
 */
export class PerAddressCount {
  private readonly held = new Map<string, number>();
  private readonly max: number;

  constructor(max: number) {
    this.max = max;
  }

  /**
   * Takes one of `address`'s places: the function that gives it back (once, however often it is
   * called), or undefined when the address holds its maximum already.
   */
  take(address: string): (() => void) | undefined {
    const n = this.held.get(address) ?? 0;
    if (n >= this.max) return undefined;
    this.held.set(address, n + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.held.get(address) ?? 1) - 1;
      if (left <= 0) this.held.delete(address);
      else this.held.set(address, left);
    };
  }
}

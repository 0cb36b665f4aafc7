import type { Clock } from '../../functions/ports/clock.ts';

/** A clock tests move by hand: no sleeps. */
export class FakeClock implements Clock {
  private current: number;
  constructor(start: string | Date = '2026-06-15T12:00:00.000Z') {
    this.current = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.current);
  }
  set(at: string | Date): void {
    this.current = new Date(at).getTime();
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

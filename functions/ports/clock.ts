/** Time, injected so tests use a fake clock instead of sleeping. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export function epochSeconds(clock: Clock): number {
  return Math.floor(clock.now().getTime() / 1000);
}

import type { Schedule } from './components/schedule-form.tsx';

/** Enabled, disabled by its owner, or disabled by the platform after too many failures in a row. */
export function scheduleState(s: Schedule): { text: string; tone: '' | 'ok' | 'bad' } {
  if (s.enabled) return { text: 'enabled', tone: 'ok' };
  return s.auto_disabled ? { text: 'auto-disabled', tone: 'bad' } : { text: 'disabled', tone: '' };
}

/** The streak as "2 of 10": failures in a row, of the number that disables it. */
export function failureStreak(s: Schedule): string {
  return `${s.consecutive_failures} of ${s.max_consecutive_failures}`;
}

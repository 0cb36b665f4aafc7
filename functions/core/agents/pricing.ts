import type { Manifest } from './manifest.ts';

/** A paid agent charges price_credits per call (docs/manifest.md, directory fields). Free of heavy imports. */
export function isPaid(m: Pick<Manifest, 'price_credits'>): boolean {
  return m.price_credits > 0;
}

/** Source-available: the author allows local download, and the agent is not paid (paid agents are server-only). */
export function isSourceAvailable(m: Pick<Manifest, 'allow_local_download' | 'price_credits'>): boolean {
  return m.allow_local_download && !isPaid(m);
}

/*
 * Walking the two formats. `visit` sees each checked entry with a way to read its content.
 */

import type { BundleLimits } from '../bundle-limits.ts';
import type { EntryChecker, Visit } from './entry-checker.ts';
import type { BundleArchiveFormat } from './format.ts';
import { walkTar } from './walk-tar.ts';
import { walkZip } from './walk-zip.ts';

export async function walk(
  data: Buffer,
  format: BundleArchiveFormat,
  limits: BundleLimits,
  checker: EntryChecker,
  visit: Visit,
): Promise<void> {
  if (format === 'zip') await walkZip(data, checker, visit);
  else await walkTar(data, limits, checker, visit);
}

/*
 * Which archive an upload is: the magic bytes, cross-checked with the declared Content-Type.
 */

import { GENERIC_CONTENT_TYPES, GZIP_CONTENT_TYPES, ZIP_CONTENT_TYPES } from '../bundle-limits.ts';
import { quote, Refusal } from './refusal.ts';

export type BundleArchiveFormat = 'tar.gz' | 'zip';

const ACCEPTED_TYPES = [...GZIP_CONTENT_TYPES, ...ZIP_CONTENT_TYPES, ...GENERIC_CONTENT_TYPES].join(', ');

/** The archive format from the magic bytes, cross-checked with the declared type. */
export function detectFormat(data: Buffer, declaredContentType: string | undefined): BundleArchiveFormat {
  const declared = (declaredContentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const isGzip = data.length >= 2 && data[0] === 0x1f && data[1] === 0x8b;
  const isZip =
    data.length >= 4 &&
    data[0] === 0x50 &&
    data[1] === 0x4b &&
    ((data[2] === 0x03 && data[3] === 0x04) || (data[2] === 0x05 && data[3] === 0x06));
  const sniffed: BundleArchiveFormat | undefined = isGzip ? 'tar.gz' : isZip ? 'zip' : undefined;
  const declaredFormat: BundleArchiveFormat | 'any' | undefined =
    declared === '' || GENERIC_CONTENT_TYPES.includes(declared)
      ? 'any'
      : GZIP_CONTENT_TYPES.includes(declared)
        ? 'tar.gz'
        : ZIP_CONTENT_TYPES.includes(declared)
          ? 'zip'
          : undefined;
  if (declaredFormat === undefined) {
    throw new Refusal(
      'UNSUPPORTED_TYPE',
      `Content-Type ${quote(declared)} is not a code bundle type; send a .tar.gz or .zip archive as one of: ${ACCEPTED_TYPES}.`,
    );
  }
  if (!sniffed) {
    throw new Refusal(
      'UNSUPPORTED_TYPE',
      `The code bundle is neither a gzip-compressed tar archive nor a zip archive; send a .tar.gz or .zip archive as one of: ${ACCEPTED_TYPES}.`,
    );
  }
  if (declaredFormat !== 'any' && declaredFormat !== sniffed) {
    throw new Refusal(
      'UNSUPPORTED_TYPE',
      `Content-Type ${declared} says ${declaredFormat} but the bytes are a ${sniffed} archive; send it as ${sniffed === 'zip' ? 'application/zip' : 'application/gzip'} or application/octet-stream.`,
    );
  }
  return sniffed;
}

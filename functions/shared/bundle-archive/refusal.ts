/*
 * How a code bundle is refused: the refusal codes, the error extractBundle throws, the internal
 * Refusal a walk throws (inspectBundle turns it into its `{ ok: false }` result), and the wording
 * helpers the messages share.
 */

export type RefusalCode = 'DOCUMENT_TOO_LARGE' | 'UNSUPPORTED_TYPE' | 'UNPROCESSABLE' | 'INVALID_INPUT';

/** Thrown by extractBundle when the bundle breaks a rule or cannot be written safely. */
export class BundleExtractionError extends Error {
  override name = 'BundleExtractionError';
  readonly code: RefusalCode;
  constructor(code: RefusalCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** A rule broken while walking an archive; becomes the `{ ok: false }` result. */
export class Refusal extends Error {
  readonly code: RefusalCode;
  constructor(code: RefusalCode, message: string) {
    super(message);
    this.code = code;
  }
}

export const unprocessable = (message: string) => new Refusal('UNPROCESSABLE', message);

/** An entry path for messages: quoted, control characters escaped, long ones shortened. */
export function quote(path: string): string {
  const shown = path.length > 200 ? `${path.slice(0, 200)}…` : path;
  return JSON.stringify(shown);
}

export function describeBytes(bytes: number): string {
  const mib = 1024 * 1024;
  return bytes % mib === 0 ? `${bytes / mib} MB` : `${bytes} bytes`;
}

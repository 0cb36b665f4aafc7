/**
 * Secret redaction: every injected secret value, and its encoded forms, replaced with [REDACTED]
 * before text leaves a run or a service. Pure and dependency-free on purpose: the platform's run
 * paths, the local service host and the ECS service launcher (functions/containers/) share it, so
 * a service's logs are redacted the same way in both deployments.
 */

/** The secret values and their encoded forms that redaction looks for. */
function needlesOf(secrets: Record<string, string>): Set<string> {
  const needles = new Set<string>();
  for (const value of Object.values(secrets)) {
    if (value.length < 4) continue;
    needles.add(value);
    if (value.length >= ENCODED_FORMS_MIN) for (const form of encodedForms(value)) needles.add(form);
  }
  return needles;
}

/** Replaces every secret value in `text` (long enough to be meaningful) with [REDACTED]. */
export function redactSecrets(text: string, secrets: Record<string, string>): string {
  return redactNeedles(text, secretNeedles(secrets));
}

/**
 * What redactSecrets looks for, longest first (the order it replaces them in): computed once for
 * text that comes in pieces (shared/stream-redactor.ts) and redacted with redactNeedles.
 */
export function secretNeedles(secrets: Record<string, string>): string[] {
  return [...needlesOf(secrets)].filter((n) => n.length >= 4).sort((a, b) => b.length - a.length);
}

/** redactSecrets with its needles already computed (secretNeedles). */
export function redactNeedles(text: string, needles: readonly string[]): string {
  let out = text;
  for (const needle of needles) out = out.split(needle).join('[REDACTED]');
  return out;
}

/** redactSecrets over every string (keys too) of a JSON value: a run's output before anyone sees or stores it. */
export function redactSecretsInJson(value: unknown, secrets: Record<string, string>): unknown {
  if (typeof value === 'string') return redactSecrets(value, secrets);
  if (Array.isArray(value)) return value.map((v) => redactSecretsInJson(v, secrets));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [redactSecrets(k, secrets), redactSecretsInJson(v, secrets)]),
    );
  }
  return value;
}

/** Values this long are also redacted in their encoded forms (shorter ones would match noise). */
const ENCODED_FORMS_MIN = 8;

/**
 * The encoded forms of a secret that user code can print to slip past a plain match: hex (both
 * cases), URL encoding, and base64/base64url. Base64 of the secret inside a longer string depends
 * on where it starts modulo 3, so for each of the three alignments the part of the encoding that
 * depends only on the secret (whole 4-character groups, without the partial first and last) is a
 * needle: an encoded secret inside a bigger encoded blob is still caught.
 */
export function encodedForms(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const forms = [bytes.toString('hex'), bytes.toString('hex').toUpperCase(), encodeURIComponent(value)];
  for (const shift of [0, 1, 2]) {
    const shifted = Buffer.concat([Buffer.alloc(shift), bytes]);
    const encoded = shifted.toString('base64');
    // Characters 0..ceil(shift*4/3) also carry the prefix's bits; those past the last whole
    // group carry the following bytes' bits (or padding).
    const stable = encoded.slice(Math.ceil((shift * 4) / 3), Math.floor(shifted.length / 3) * 4);
    if (stable.length >= 4) forms.push(stable, stable.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return forms.filter((f) => f !== value);
}

/**
 * The two ends of a line cut in its middle (shared/log-line-cutter.ts), with any part of a secret
 * that the cut split masked too: a head that ends with the start of a secret value (or of an
 * encoded form), a tail that begins with the end of one. Whole values are left to redactSecrets.
 */
export function redactCutEdges(
  head: string,
  tail: string,
  secrets: Record<string, string>,
): { head: string; tail: string } {
  for (const needle of needlesOf(secrets)) {
    // The earliest position from which the head's end is a start of the needle.
    for (let p = Math.max(0, head.length - needle.length + 1); p <= head.length - 4; p++) {
      p = head.indexOf(needle.slice(0, 4), p);
      if (p === -1 || p > head.length - 4) break;
      if (needle.startsWith(head.slice(p))) {
        head = `${head.slice(0, p)}[REDACTED]`;
        break;
      }
    }
    // The latest position up to which the tail's start is an end of the needle.
    for (let e = Math.min(tail.length, needle.length - 1); e >= 4; e--) {
      e = tail.lastIndexOf(needle.slice(-4), e - 4) + 4;
      if (e < 4) break;
      if (needle.endsWith(tail.slice(0, e))) {
        tail = `[REDACTED]${tail.slice(e)}`;
        break;
      }
    }
  }
  return { head, tail };
}

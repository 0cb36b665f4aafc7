import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * S3's request authentication, as the emulated S3 enforces it in front of s3rver (whose own check
 * lets unsigned requests through and canonicalizes query strings differently from the SDK): a
 * request is served only when it carries a Signature Version 4 signature, in its Authorization
 * header or as a presigned URL's query, made with the emulated deployment's key pair over its
 * method, path, query and signed headers. Unsigned requests are AccessDenied, a wrong key
 * InvalidAccessKeyId, a wrong secret or any change to what was signed SignatureDoesNotMatch, an
 * expired presigned URL AccessDenied, as S3 answers them.
 *
 * Every `x-amz-*` header a request carries must be among its signed headers, as S3 requires: an
 * `x-amz-*` header changes what the request does (`x-amz-copy-source` turns a PUT into a copy of
 * another object, `x-amz-acl`, `x-amz-metadata-directive`...), so one added to a presigned URL by
 * whoever holds it (a sandboxed run, given its result slot's PUT URL) is refused, AccessDenied with
 * the headers named in HeadersNotSigned, rather than obeyed.
 *
 * Not checked, as documented in docs/deploy.md: that the body matches a signed payload hash (a
 * signed request is made and sent by the platform's own processes on loopback), and the
 * per-chunk signatures of streamed uploads.
 */

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

export interface S3AuthError {
  status: number;
  code: string;
  message: string;
  /** The `x-amz-*` headers present but not signed, which S3 names in its answer. */
  headersNotSigned?: string[];
}

export interface SignedRequest {
  method: string;
  /** The request target as received: raw path and query. */
  url: string;
  /** Header name (lower case) to its values. */
  headers: Record<string, string[] | undefined>;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';
/** How far a header-signed request's time may be from the server's (S3: 15 minutes). */
const MAX_SKEW_MS = 15 * 60 * 1000;
/** The longest a presigned URL may be valid (S3: 7 days). */
const MAX_EXPIRES_SECONDS = 604_800;
const AMZ_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

const denied = (code: string, message: string, status = 403): S3AuthError => ({ status, code, message });

/** undefined when the request is signed by `credentials` for `region`; otherwise S3's error. */
export function verifyS3Request(
  request: SignedRequest,
  credentials: S3Credentials,
  region: string,
  now = Date.now(),
): S3AuthError | undefined {
  const query = parseQuery(request.url);
  if (!query) return denied('InvalidURI', "Couldn't parse the specified URI.", 400);
  const authorization = request.headers.authorization?.[0];
  const presigned = query.some(([k]) => k === 'X-Amz-Algorithm');
  if (authorization !== undefined && presigned) {
    return denied('InvalidArgument', 'Only one auth mechanism allowed', 400);
  }
  if (authorization === undefined && !presigned) {
    if (query.some(([k]) => k === 'Signature' || k === 'AWSAccessKeyId')) return onlyV4();
    return denied('AccessDenied', 'Access Denied');
  }
  const parts = presigned ? fromQuery(query) : fromHeader(authorization as string, request.headers);
  if ('code' in parts) return parts;

  const [accessKeyId, date, scopeRegion, service, terminal, ...rest] = parts.credential.split('/');
  if (accessKeyId !== credentials.accessKeyId) {
    return denied('InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.');
  }
  if (rest.length > 0 || service !== 's3' || terminal !== 'aws4_request' || !date) {
    return denied('AuthorizationHeaderMalformed', 'The credential scope is malformed.', 400);
  }
  if (scopeRegion !== region) {
    return denied(
      'AuthorizationHeaderMalformed',
      `The authorization header is malformed; the region '${scopeRegion}' is wrong; expecting '${region}'`,
      400,
    );
  }
  const time = parseAmzDate(parts.amzDate);
  if (time === undefined || !parts.amzDate.startsWith(date)) {
    return denied('AccessDenied', 'AWS authentication requires a valid Date or x-amz-date header');
  }
  if (presigned) {
    const expires = Number(parts.expires);
    if (!Number.isInteger(expires) || expires < 1 || expires > MAX_EXPIRES_SECONDS) {
      return denied(
        'AuthorizationQueryParametersError',
        'X-Amz-Expires must be a whole number of seconds from 1 to 604800',
        400,
      );
    }
    if (time > now + MAX_SKEW_MS) return denied('AccessDenied', 'Request is not valid yet');
    if (now > time + expires * 1000) return denied('AccessDenied', 'Request has expired');
  } else if (Math.abs(now - time) > MAX_SKEW_MS) {
    return denied(
      'RequestTimeTooSkewed',
      'The difference between the request time and the current time is too large.',
    );
  }
  const signed = parts.signedHeaders.split(';');
  if (!signed.includes('host')) return notSigned(['host']);
  const unsigned = Object.keys(request.headers).filter(
    (name) => name.startsWith('x-amz-') && !signed.includes(name),
  );
  if (unsigned.length > 0) return notSigned(unsigned);

  const canonicalRequest = [
    request.method,
    canonicalPath(request.url),
    canonicalQuery(query.filter(([k]) => k !== 'X-Amz-Signature')),
    ...signed.map((name) => `${name}:${headerValue(request.headers[name])}`),
    '',
    parts.signedHeaders,
    parts.payloadHash,
  ].join('\n');
  const scope = `${date}/${region}/s3/aws4_request`;
  const stringToSign = [ALGORITHM, parts.amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const key = ['s3', 'aws4_request'].reduce(
    (k, part) => hmac(k, part),
    hmac(hmac(`AWS4${credentials.secretAccessKey}`, date), region),
  );
  const expected = Buffer.from(hmac(key, stringToSign).toString('hex'));
  const given = Buffer.from(parts.signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return denied(
      'SignatureDoesNotMatch',
      'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
    );
  }
  return undefined;
}

interface SignatureParts {
  credential: string;
  signedHeaders: string;
  signature: string;
  amzDate: string;
  payloadHash: string;
  expires?: string;
}

const notSigned = (headers: string[]): S3AuthError => ({
  ...denied('AccessDenied', 'There were headers present in the request which were not signed'),
  headersNotSigned: headers,
});

const onlyV4 = () =>
  denied(
    'InvalidRequest',
    'The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.',
    400,
  );

function fromHeader(authorization: string, headers: SignedRequest['headers']): SignatureParts | S3AuthError {
  if (!authorization.startsWith(`${ALGORITHM} `)) return onlyV4();
  const fields = new Map<string, string>();
  for (const part of authorization.slice(ALGORITHM.length + 1).split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) fields.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  const credential = fields.get('Credential');
  const signedHeaders = fields.get('SignedHeaders');
  const signature = fields.get('Signature');
  if (!credential || !signedHeaders || !signature) {
    return denied(
      'AuthorizationHeaderMalformed',
      'The authorization header is malformed; it needs Credential, SignedHeaders and Signature.',
      400,
    );
  }
  const payloadHash = headers['x-amz-content-sha256']?.[0];
  if (!payloadHash) {
    return denied('InvalidRequest', 'Missing required header for this request: x-amz-content-sha256', 400);
  }
  const amzDate = headers['x-amz-date']?.[0] ?? '';
  return { credential, signedHeaders, signature, amzDate, payloadHash };
}

function fromQuery(query: [string, string][]): SignatureParts | S3AuthError {
  const get = (name: string) => query.find(([k]) => k === name)?.[1];
  if (get('X-Amz-Algorithm') !== ALGORITHM) {
    return denied(
      'AuthorizationQueryParametersError',
      'X-Amz-Algorithm only supports "AWS4-HMAC-SHA256"',
      400,
    );
  }
  const credential = get('X-Amz-Credential');
  const signedHeaders = get('X-Amz-SignedHeaders');
  const signature = get('X-Amz-Signature');
  const amzDate = get('X-Amz-Date');
  const expires = get('X-Amz-Expires');
  if (!credential || !signedHeaders || !signature || !amzDate || !expires) {
    return denied(
      'AuthorizationQueryParametersError',
      'Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.',
      400,
    );
  }
  return { credential, signedHeaders, signature, amzDate, expires, payloadHash: 'UNSIGNED-PAYLOAD' };
}

/** The query's parameters, decoded; undefined when one cannot be decoded. */
function parseQuery(url: string): [string, string][] | undefined {
  const q = url.indexOf('?');
  if (q < 0) return [];
  const pairs: [string, string][] = [];
  for (const part of url.slice(q + 1).split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const name = eq < 0 ? part : part.slice(0, eq);
    const value = eq < 0 ? '' : part.slice(eq + 1);
    try {
      pairs.push([decodeURIComponent(name), decodeURIComponent(value)]);
    } catch {
      return undefined;
    }
  }
  return pairs;
}

/** RFC 3986 encoding, as SigV4 canonicalizes: everything but unreserved characters. */
function encode(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** S3 signs the path as given (no dot-segment normalization), each segment encoded once. */
function canonicalPath(url: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  return path
    .split('/')
    .map((segment) => {
      try {
        return encode(decodeURIComponent(segment));
      } catch {
        return segment;
      }
    })
    .join('/');
}

function canonicalQuery(pairs: [string, string][]): string {
  return pairs
    .map(([k, v]) => [encode(k), encode(v)] as const)
    .sort(([ak, av], [bk, bv]) => (ak === bk ? (av < bv ? -1 : av > bv ? 1 : 0) : ak < bk ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

function headerValue(values: string[] | undefined): string {
  return (values ?? []).map((v) => v.trim().replace(/\s+/g, ' ')).join(',');
}

function parseAmzDate(text: string): number | undefined {
  const m = AMZ_DATE.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  const ms = Date.UTC(y as number, (mo as number) - 1, d, h, mi, s);
  return Number.isNaN(ms) ? undefined : ms;
}

const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();
const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

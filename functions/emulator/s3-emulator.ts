import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import S3rver from '@20minutes/s3rver';
import { keepBucketConfigs } from './s3-bucket-configs.ts';
import { type S3Credentials, verifyS3Request } from './s3-request-signature.ts';

export type { S3Credentials } from './s3-request-signature.ts';

/**
 * S3 for the emulated deployment: s3rver (a maintained fork), which speaks S3's REST API and keeps
 * objects in a directory, so bundles and run files survive a restart. The SDK reaches it through
 * AWS_ENDPOINT_URL_S3; with an IP address as the endpoint it addresses buckets by path.
 *
 * It answers only what S3 would: every request must be signed (SigV4, in its Authorization header
 * or as a presigned URL) with the deployment's key pair, which is made at random for each start and
 * given only to the platform's own processes (a sandbox gets presigned URLs, never the key). The
 * check is s3-request-signature.ts, in front of s3rver, whose own check lets unsigned requests
 * through; s3rver's is then told to accept what passed ours (allowMismatchedSignatures: its
 * canonical query string disagrees with the SDK's). The endpoint listens on loopback only.
 *
 * And an object becomes visible only once whole (s3rver streams it into its final file, so a
 * reader polling for a sandbox run's result could read half of it): written beside, then renamed.
 */

/** A fresh key pair for one emulated deployment: nothing outside the platform's processes knows it. */
export function newEmulatorCredentials(): S3Credentials {
  return {
    accessKeyId: `AKIA${randomBytes(10).toString('hex').toUpperCase().slice(0, 16)}`,
    secretAccessKey: randomBytes(30).toString('base64'),
  };
}

export interface S3EmulatorOptions {
  directory: string;
  port: number;
  host: string;
  buckets: string[];
  credentials: S3Credentials;
  /** The region signatures must be scoped to (default us-east-1). */
  region?: string;
  /**
   * The account's KMS keys (their ARNs and ids): a write under SSE-KMS must name one of them, as S3
   * refuses a key KMS does not have (KMS.NotFoundException). Without the list, any key is taken.
   */
  kmsKeys?: string[];
  /** Each request S3 served (for the deployment's meter: S3 bills by request class). */
  onRequest?: (method: string, path: string, query: string) => void;
}

export class S3Emulator {
  private readonly s3rver: S3rver;
  private readonly options: S3EmulatorOptions;
  private server: Server | undefined;

  constructor(options: S3EmulatorOptions) {
    if (!isLoopback(options.host))
      throw new Error(`The S3 emulator listens on loopback only, not ${options.host}`);
    this.options = options;
    this.s3rver = new S3rver({
      directory: options.directory,
      silent: true,
      allowMismatchedSignatures: true,
      configureBuckets: options.buckets.map((name) => ({ name })),
    });
    this.s3rver.store.putContent = writeWhole;
    keepBucketConfigs(this.s3rver.store);
    // s3rver looks the key up in its own account registry after our check: it must know the pair.
    const { DUMMY_ACCOUNT } = require('@20minutes/s3rver/lib/models/account') as {
      DUMMY_ACCOUNT: { createKeyPair(id: string, secret: string): void };
    };
    DUMMY_ACCOUNT.createKeyPair(options.credentials.accessKeyId, options.credentials.secretAccessKey);
  }

  async listen(): Promise<string> {
    await this.s3rver.configureBuckets();
    const serve = this.s3rver.callback();
    const region = this.options.region ?? 'us-east-1';
    const server = createServer((req, res) => {
      const refused = verifyS3Request(
        { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headersDistinct },
        this.options.credentials,
        region,
      );
      const refusedKey = refused ? undefined : this.unknownKmsKey(req.headers);
      if (refusedKey) {
        req.resume();
        const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>KMS.NotFoundException</Code><Message>Invalid keyId ${escapeXml(refusedKey)}</Message></Error>`;
        res.writeHead(400, {
          'content-type': 'application/xml',
          'x-amz-error-code': 'KMS.NotFoundException',
        });
        res.end(body);
        return;
      }
      if (!refused) {
        const [path = '/', query = ''] = (req.url ?? '/').split(/\?(.*)/s);
        this.options.onRequest?.(req.method ?? 'GET', path, query);
        const params = new URLSearchParams(query);
        if (req.method === 'GET' && params.has('versions') && /^\/[^/]+\/?$/.test(path)) {
          req.resume();
          this.listVersions(decodeURIComponent(path.replaceAll('/', '')), params).then(
            (xml) => {
              res.writeHead(200, { 'content-type': 'application/xml' });
              res.end(xml);
            },
            (err: unknown) => {
              res.writeHead(500, { 'content-type': 'application/xml' });
              res.end(
                `<Error><Code>InternalError</Code><Message>${escapeXml(String(err))}</Message></Error>`,
              );
            },
          );
          return;
        }
        serve(req, res);
        return;
      }
      const body =
        req.method === 'HEAD'
          ? ''
          : `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${refused.code}</Code><Message>${escapeXml(refused.message)}</Message>${notSignedElement(refused.headersNotSigned)}<RequestId>${randomBytes(8).toString('hex').toUpperCase()}</RequestId></Error>`;
      // The body of a refused request is not read: the connection closes after the answer.
      res.writeHead(refused.status, {
        'content-type': 'application/xml',
        'content-length': String(Buffer.byteLength(body)),
        'x-amz-error-code': refused.code,
        connection: 'close',
      });
      res.end(body);
    });
    server.on('clientError', (_err, socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port, this.options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    const address = server.address() as AddressInfo;
    return `http://${address.address}:${address.port}`;
  }

  /** The KMS key a write names under SSE-KMS when the account has no such key, else undefined. */
  private unknownKmsKey(headers: import('node:http').IncomingHttpHeaders): string | undefined {
    if (headers['x-amz-server-side-encryption'] !== 'aws:kms' || !this.options.kmsKeys) return undefined;
    const key = headers['x-amz-server-side-encryption-aws-kms-key-id'];
    // No key named: S3 uses the account's AWS managed key (aws/s3).
    if (typeof key !== 'string' || key === '') return undefined;
    return this.options.kmsKeys.includes(key) ? undefined : key;
  }

  /**
   * ListObjectVersions, which s3rver does not implement, answered as S3 answers it for a bucket
   * that was never versioned: each object once, as its `null` version, the latest. The platform's
   * sweep of run objects lists versions (functions/adapters/aws/run-object-sweep.ts), since the
   * deployed bucket is versioned; the emulated bucket keeps one version of each object.
   */
  private async listVersions(bucket: string, params: URLSearchParams): Promise<string> {
    const store = this.s3rver.store;
    const prefix = params.get('prefix') ?? '';
    const maxKeys = Math.min(1000, Number(params.get('max-keys') ?? 1000) || 1000);
    const keyMarker = params.get('key-marker') ?? '';
    const listed = await store.listObjects(bucket, { prefix, startAfter: keyMarker, maxKeys });
    const last = listed.objects.at(-1)?.key ?? '';
    const versions = listed.objects
      .map(
        (o) =>
          `<Version><Key>${escapeXml(o.key)}</Key><VersionId>null</VersionId><IsLatest>true</IsLatest><LastModified>${o.lastModifiedDate.toISOString()}</LastModified><ETag>${escapeXml(o.metadata.etag ?? '""')}</ETag><Size>${o.size}</Size><StorageClass>STANDARD</StorageClass></Version>`,
      )
      .join('');
    const next = listed.isTruncated
      ? `<NextKeyMarker>${escapeXml(last)}</NextKeyMarker><NextVersionIdMarker>null</NextVersionIdMarker>`
      : '';
    return `<?xml version="1.0" encoding="UTF-8"?>\n<ListVersionsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${escapeXml(bucket)}</Name><Prefix>${escapeXml(prefix)}</Prefix><KeyMarker>${escapeXml(keyMarker)}</KeyMarker><VersionIdMarker></VersionIdMarker><MaxKeys>${maxKeys}</MaxKeys><IsTruncated>${listed.isTruncated}</IsTruncated>${next}${versions}</ListVersionsResult>`;
  }

  /** Bytes of every object stored (s3rver keeps each object's bytes in one `._S3rver_object` file). */
  storedBytes(): number {
    let total = 0;
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith('._S3rver_object')) total += statSync(path).size;
      }
    };
    walk(this.options.directory);
    return total;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    }
    // What s3rver's own server does on close: its logger lets go of the process.
    const logger = this.s3rver.logger;
    logger.exceptions.unhandle();
    logger.close();
  }
}

const require = createRequire(import.meta.url);

const isLoopback = (host: string) => host === '127.0.0.1' || host === '::1' || host === 'localhost';

const escapeXml = (text: string) => text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);

const notSignedElement = (headers: string[] | undefined) =>
  headers ? `<HeadersNotSigned>${escapeXml(headers.join(', '))}</HeadersNotSigned>` : '';

type PutContent = S3rver['store']['putContent'];

/** s3rver's putContent, made atomic: the whole object is written beside its file, then renamed over it. */
const writeWhole: PutContent = async (objectPath, content) => {
  let data: Buffer;
  if (Buffer.isBuffer(content)) data = content;
  else {
    const chunks: Buffer[] = [];
    for await (const chunk of content) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    data = Buffer.concat(chunks);
  }
  const staging = `${objectPath}.${randomBytes(6).toString('hex')}.partial`;
  await writeFile(staging, data);
  await rename(staging, objectPath);
  return [data.length, createHash('md5').update(data).digest('hex')];
};

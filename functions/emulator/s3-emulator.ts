import { createHash, randomBytes } from 'node:crypto';
import { rename, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import S3rver from '@20minutes/s3rver';

/**
 * S3 for the emulated deployment: s3rver (a maintained fork), which speaks S3's REST API with
 * signature V4 checks, presigned URLs included, and keeps objects in a directory, so bundles and run
 * files survive a restart. The SDK reaches it through AWS_ENDPOINT_URL_S3; with an IP address as
 * the endpoint it addresses buckets by path. s3rver checks signatures against its one key pair,
 * which is therefore the emulated deployment's credentials (S3_EMULATOR_CREDENTIALS).
 *
 * Two corrections to s3rver, so the emulated deployment behaves as S3 does:
 * - an object becomes visible only once whole (s3rver streams it into its final file, so a reader
 *   polling for a sandbox run's result could read half of it): written beside, then renamed;
 * - its signature check disagrees with the SDK's on requests with a query string (DeleteObjects,
 *   ListObjectsV2: a sandbox session's clean-up of its run objects, secrets included, failed
 *   silently), so signatures are checked for form only (allowMismatchedSignatures). The endpoint
 *   listens on loopback only.
 */

export const S3_EMULATOR_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export class S3Emulator {
  private readonly server: S3rver;

  constructor(options: { directory: string; port: number; host: string; buckets: string[] }) {
    this.server = new S3rver({
      address: options.host,
      port: options.port,
      directory: options.directory,
      silent: true,
      allowMismatchedSignatures: true,
      configureBuckets: options.buckets.map((name) => ({ name })),
    });
    const store = (this.server as unknown as { store: { putContent: PutContent } }).store;
    store.putContent = writeWhole;
  }

  async listen(): Promise<string> {
    const address = (await this.server.run()) as AddressInfo;
    return `http://${address.address}:${address.port}`;
  }

  async close(): Promise<void> {
    await this.server.close();
  }
}

type PutContent = (objectPath: string, content: Buffer | Readable) => Promise<[number, string]>;

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

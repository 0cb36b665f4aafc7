import {
  DeleteObjectCommand,
  GetObjectCommand,
  NoSuchKey,
  PutObjectCommand,
  type PutObjectCommandInput,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import {
  assertBundleKey,
  assertDownloadUrlTtl,
  assertSha256,
  type BundleMeta,
  type BundleStore,
} from '../../ports/bundle-store.ts';

export interface S3BundleStoreOptions {
  bucket: string;
  /** The platform's KMS key; bundles are encrypted with it when set, with SSE-S3 otherwise. */
  kmsKeyId?: string | undefined;
  client?: S3Client;
}

/**
 * The AWS bundle store: one S3 object per key in the bundles bucket.
 *
 * Encryption: with a KMS key configured (the stack's key, as for Secrets Manager) objects are
 * written with SSE-KMS under that key and an S3 Bucket Key (one KMS data key per bucket, not one
 * KMS request per object), so reading a bundle needs kms:Decrypt on the key as well as
 * s3:GetObject. Without one, SSE-S3 (AES256): bundles are user code, not secrets, and the bucket
 * still never holds plaintext at rest.
 *
 * Integrity: PutObject carries ChecksumSHA256 (the bundle's digest, base64), so S3 refuses bytes
 * that do not match what was validated; the digest is also checked here first.
 *
 * A missing key reads as NoSuchKey only when the caller may s3:ListBucket; without it S3 answers
 * AccessDenied, which this adapter rethrows. The functions' role is granted ListBucket on the
 * bucket for that reason.
 *
 * Presigned URLs are signed with the caller's credentials: with a Lambda's temporary role
 * credentials a URL stops working when the session does, even if its TTL is longer.
 */
export class S3BundleStore implements BundleStore {
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly kmsKeyId: string | undefined;

  constructor(options: S3BundleStoreOptions) {
    this.client = options.client ?? new S3Client({});
    this.bucket = options.bucket;
    this.kmsKeyId = options.kmsKeyId;
  }

  async put(key: string, data: Buffer, meta: BundleMeta): Promise<void> {
    assertBundleKey(key);
    assertSha256(data, meta.sha256);
    const encryption: Pick<
      PutObjectCommandInput,
      'ServerSideEncryption' | 'SSEKMSKeyId' | 'BucketKeyEnabled'
    > = this.kmsKeyId
      ? { ServerSideEncryption: 'aws:kms', SSEKMSKeyId: this.kmsKeyId, BucketKeyEnabled: true }
      : { ServerSideEncryption: 'AES256' };
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: data,
        ContentType: meta.contentType,
        ChecksumSHA256: Buffer.from(meta.sha256, 'hex').toString('base64'),
        ...encryption,
      }),
    );
  }

  async get(key: string): Promise<Buffer | undefined> {
    assertBundleKey(key);
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!res.Body) return Buffer.alloc(0);
      return Buffer.from(await res.Body.transformToByteArray());
    } catch (err) {
      if (err instanceof NoSuchKey || (err as Error).name === 'NoSuchKey') return undefined;
      throw err;
    }
  }

  /** S3 answers 204 for a missing key too, so no special case is needed. */
  async delete(key: string): Promise<void> {
    assertBundleKey(key);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async downloadUrl(key: string, ttlSeconds: number): Promise<string> {
    assertBundleKey(key);
    assertDownloadUrlTtl(ttlSeconds);
    return getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.bucket, Key: key }), {
      expiresIn: ttlSeconds,
    });
  }

  /** A client outside the platform fetches from S3 as a runner does. */
  shareUrl(key: string, ttlSeconds: number): Promise<string> {
    return this.downloadUrl(key, ttlSeconds);
  }
}

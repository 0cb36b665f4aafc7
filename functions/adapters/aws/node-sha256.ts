import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import type { SourceData } from '@smithy/types';

const bytes = (data: SourceData): string | Uint8Array =>
  typeof data === 'string' ? data : data instanceof Uint8Array ? data : new Uint8Array(data as ArrayBuffer);

/**
 * SHA-256 (or HMAC-SHA-256 with a secret) in the shape the SDK's SigV4 signer takes, on node:crypto:
 * the SDK's own implementations (@smithy/hash-node, @aws-crypto/sha256-js) are not dependencies of
 * ours, and node:crypto is what they would wrap. Used by the presigned S3 URLs (s3-presign.ts) and
 * the signed X-Ray span export (telemetry/xray-transport.ts).
 */
export class NodeSha256 {
  private readonly secret: string | Uint8Array | undefined;
  private hash: Hash | Hmac;
  constructor(secret?: SourceData) {
    this.secret = secret === undefined ? undefined : bytes(secret);
    this.hash = this.secret ? createHmac('sha256', this.secret) : createHash('sha256');
  }
  update(data: SourceData): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {
    this.hash = this.secret ? createHmac('sha256', this.secret) : createHash('sha256');
  }
}

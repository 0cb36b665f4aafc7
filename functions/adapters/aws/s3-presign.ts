import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { HttpRequest } from '@smithy/core/transport';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, Provider } from '@smithy/types';
import { NodeSha256 } from './node-sha256.ts';

export interface PresignOptions {
  bucket: string;
  key: string;
  region: string;
  expiresIn: number;
  credentials?: AwsCredentialIdentity | Provider<AwsCredentialIdentity>;
  signingDate?: Date;
  /**
   * An S3-compatible endpoint other than AWS's (AWS_ENDPOINT_URL_S3, as the S3 client reads it):
   * the URL then addresses the bucket by path on that endpoint, as the client does for an endpoint
   * given by IP address (the emulated deployment's S3).
   */
  endpoint?: string | undefined;
}

/**
 * A presigned S3 GET URL (virtual-hosted style, SigV4 query signing), made with the SDK's own
 * signer rather than the S3 client: the signer and the credential chain are already in every
 * bundle (the DynamoDB client uses them), the S3 client would add about 155 KB to the handlers
 * that only hand out download URLs. test/adapters/s3-presign.test.ts checks the URL equals
 * @aws-sdk/s3-request-presigner's for the same inputs.
 */
export function presignS3Get(options: PresignOptions): Promise<string> {
  return presignS3('GET', options);
}

/**
 * A presigned S3 PUT URL, the same way (no checksum: the SDK's presigner would sign the CRC32 of
 * an empty body). The ECS service runner uploads the service launcher through it without the S3
 * client; test/adapters/s3-presign.test.ts checks it against @aws-sdk/s3-request-presigner's too.
 */
export function presignS3Put(options: PresignOptions): Promise<string> {
  return presignS3('PUT', options);
}

async function presignS3(method: 'GET' | 'PUT', options: PresignOptions): Promise<string> {
  const signer = new SignatureV4({
    service: 's3',
    region: options.region,
    credentials: options.credentials ?? defaultProvider(),
    sha256: NodeSha256,
    uriEscapePath: false,
    applyChecksum: false,
  });
  const custom = options.endpoint ? new URL(options.endpoint) : undefined;
  const hostname = custom ? custom.hostname : `${options.bucket}.s3.${options.region}.amazonaws.com`;
  const host = custom ? custom.host : hostname;
  const keyPath = `/${options.key.split('/').map(encodeURIComponent).join('/')}`;
  const path = custom ? `/${options.bucket}${keyPath}` : keyPath;
  const request = new HttpRequest({
    method,
    protocol: custom ? custom.protocol : 'https:',
    hostname,
    ...(custom?.port ? { port: Number(custom.port) } : {}),
    path,
    // As the S3 client's presigner: an unsigned payload (hoisted into the query) and checksum mode.
    headers: { host, 'X-Amz-Content-Sha256': 'UNSIGNED-PAYLOAD' },
    query:
      method === 'GET' ? { 'x-id': 'GetObject', 'x-amz-checksum-mode': 'ENABLED' } : { 'x-id': 'PutObject' },
  });
  const signed = await signer.presign(request, {
    expiresIn: options.expiresIn,
    ...(options.signingDate ? { signingDate: options.signingDate } : {}),
    unsignableHeaders: new Set(['content-type']),
  });
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(signed.query ?? {})) {
    if (typeof v === 'string') query.append(k, v);
    else if (Array.isArray(v)) for (const item of v) query.append(k, item);
  }
  const origin = custom ? custom.origin : `https://${hostname}`;
  return `${origin}${path}?${query.toString().replace(/\+/g, '%20')}`;
}

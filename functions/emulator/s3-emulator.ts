import type { AddressInfo } from 'node:net';
import S3rver from '@20minutes/s3rver';

/**
 * S3 for the emulated deployment: s3rver (a maintained fork), which speaks S3's REST API with
 * signature V4 checks, presigned URLs included, and keeps objects in a directory, so bundles and run
 * files survive a restart. The SDK reaches it through AWS_ENDPOINT_URL_S3; with an IP address as
 * the endpoint it addresses buckets by path. s3rver checks signatures against its one key pair,
 * which is therefore the emulated deployment's credentials (S3_EMULATOR_CREDENTIALS).
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
      configureBuckets: options.buckets.map((name) => ({ name })),
    });
  }

  async listen(): Promise<string> {
    const address = (await this.server.run()) as AddressInfo;
    return `http://${address.address}:${address.port}`;
  }

  async close(): Promise<void> {
    await this.server.close();
  }
}

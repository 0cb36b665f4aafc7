import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  DeleteBucketCorsCommand,
  GetBucketCorsCommand,
  PutBucketCorsCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import type { S3Emulator } from '../../functions/emulator/s3-emulator.ts';
import { S3_EMULATOR_CREDENTIALS, startEmulatedS3 } from '../helpers/emulated-aws.ts';

/**
 * The S3 emulator keeps a bucket's configurations in memory once read (s3-bucket-configs.ts): what
 * a reader sees must still be what was last put, through a put, a delete and a put again.
 */
describe('the S3 emulator’s kept bucket configurations follow every change', () => {
  const BUCKET = 'configs-bundles';
  let dir: string;
  let s3: S3Emulator;
  let client: S3Client;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-s3-configs-'));
    let endpoint: string;
    ({ s3, endpoint } = await startEmulatedS3(dir, BUCKET, []));
    client = new S3Client({
      region: 'us-east-1',
      endpoint,
      forcePathStyle: true,
      credentials: S3_EMULATOR_CREDENTIALS,
      requestChecksumCalculation: 'WHEN_REQUIRED',
    });
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'a.txt', Body: 'a' }));
  });
  after(async () => {
    client?.destroy();
    await s3?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const cors = (origin: string) =>
    new PutBucketCorsCommand({
      Bucket: BUCKET,
      CORSConfiguration: { CORSRules: [{ AllowedMethods: ['GET'], AllowedOrigins: [origin] }] },
    });
  const origins = async () => {
    try {
      const got = await client.send(new GetBucketCorsCommand({ Bucket: BUCKET }));
      return got.CORSRules?.flatMap((r) => r.AllowedOrigins ?? []);
    } catch (err) {
      return (err as { name: string }).name;
    }
  };

  it('none, then put, then deleted, then put anew: each read answers the latest', async () => {
    assert.equal(await origins(), 'NoSuchCORSConfiguration');
    assert.equal(await origins(), 'NoSuchCORSConfiguration', 'the absence, kept, is still absent');
    await client.send(cors('http://127.0.0.1:1'));
    assert.deepEqual(await origins(), ['http://127.0.0.1:1']);
    assert.deepEqual(await origins(), ['http://127.0.0.1:1']);
    await client.send(new DeleteBucketCorsCommand({ Bucket: BUCKET }));
    assert.equal(await origins(), 'NoSuchCORSConfiguration');
    await client.send(cors('http://127.0.0.1:2'));
    assert.deepEqual(await origins(), ['http://127.0.0.1:2']);
  });
});

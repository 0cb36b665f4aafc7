import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { presignS3Get, presignS3Put } from '../../functions/adapters/aws/s3-presign.ts';

describe('presignS3Get and presignS3Put', () => {
  const credentials = {
    accessKeyId: 'AKIDEXAMPLE',
    secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  };
  const signingDate = new Date('2026-11-21T12:00:00Z');

  for (const key of ['bundles/acme/word-count/v3.tar.gz', 'bundles/a-b/c_d/v12.zip']) {
    it(`signs exactly as @aws-sdk/s3-request-presigner does (${key})`, async () => {
      const client = new S3Client({ region: 'eu-west-1', credentials });
      const expected = await getSignedUrl(
        client,
        new GetObjectCommand({ Bucket: 'agenthost-bundles-x1', Key: key }),
        {
          expiresIn: 900,
          signingDate,
        },
      );
      client.destroy();
      const ours = await presignS3Get({
        bucket: 'agenthost-bundles-x1',
        key,
        region: 'eu-west-1',
        expiresIn: 900,
        credentials,
        signingDate,
      });
      const a = new URL(ours);
      const b = new URL(expected);
      assert.equal(a.origin + a.pathname, b.origin + b.pathname);
      assert.deepEqual(
        Object.fromEntries([...a.searchParams].sort()),
        Object.fromEntries([...b.searchParams].sort()),
      );
      assert.equal(a.searchParams.get('X-Amz-Expires'), '900');
    });
  }

  it('signs a PUT as @aws-sdk/s3-request-presigner does with checksums only when required', async () => {
    const key = 'service-programs/service-app-launcher-0123456789abcdef.cjs';
    const client = new S3Client({
      region: 'eu-west-1',
      credentials,
      requestChecksumCalculation: 'WHEN_REQUIRED',
    });
    const expected = await getSignedUrl(
      client,
      new PutObjectCommand({ Bucket: 'agenthost-bundles-x1', Key: key }),
      {
        expiresIn: 300,
        signingDate,
      },
    );
    client.destroy();
    const ours = await presignS3Put({
      bucket: 'agenthost-bundles-x1',
      key,
      region: 'eu-west-1',
      expiresIn: 300,
      credentials,
      signingDate,
    });
    const a = new URL(ours);
    const b = new URL(expected);
    assert.equal(a.origin + a.pathname, b.origin + b.pathname);
    assert.deepEqual(
      Object.fromEntries([...a.searchParams].sort()),
      Object.fromEntries([...b.searchParams].sort()),
    );
  });
  for (const method of ['GET', 'PUT'] as const) {
    it(`signs a ${method} for an S3 endpoint given by address as the client does (path style)`, async () => {
      const endpoint = 'http://127.0.0.1:45123';
      const key = 'bundles/acme/word-count/v3.tar.gz';
      const client = new S3Client({
        region: 'us-east-1',
        credentials,
        endpoint,
        requestChecksumCalculation: 'WHEN_REQUIRED',
      });
      const command =
        method === 'GET'
          ? new GetObjectCommand({ Bucket: 'agenthost-bundles-x1', Key: key })
          : new PutObjectCommand({ Bucket: 'agenthost-bundles-x1', Key: key });
      const expected = await getSignedUrl(client, command, { expiresIn: 600, signingDate });
      client.destroy();
      const ours = await (method === 'GET' ? presignS3Get : presignS3Put)({
        bucket: 'agenthost-bundles-x1',
        key,
        region: 'us-east-1',
        expiresIn: 600,
        credentials,
        signingDate,
        endpoint,
      });
      const a = new URL(ours);
      const b = new URL(expected);
      assert.equal(a.origin + a.pathname, `${endpoint}/agenthost-bundles-x1/${key}`);
      assert.equal(a.origin + a.pathname, b.origin + b.pathname);
      assert.deepEqual(
        Object.fromEntries([...a.searchParams].sort()),
        Object.fromEntries([...b.searchParams].sort()),
      );
    });
  }
});

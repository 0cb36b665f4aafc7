import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  CopyObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3Emulator } from '../../functions/emulator/s3-emulator.ts';
import { S3_EMULATOR_CREDENTIALS, startEmulatedS3 } from '../helpers/emulated-aws.ts';

/**
 * The emulated deployment's S3 from the side of someone who does not hold its key pair (a tenant's
 * sandboxed code, which is given presigned URLs only): S3 answers only signed requests, as S3 does.
 */

const BUCKET = 'auth-bundles';
const KMS_KEY = 'arn:aws:kms:us-east-1:000000000000:key/0b7e0000-0000-4000-8000-000000000002';
const REGION = 'us-east-1';

const errorCode = (text: string) => /<Code>([^<]+)<\/Code>/.exec(text)?.[1];

describe('the S3 emulator answers only signed requests', () => {
  let dir: string;
  let s3: S3Emulator;
  let endpoint: string;
  let owner: S3Client;

  const clientWith = (credentials: { accessKeyId: string; secretAccessKey: string }) =>
    new S3Client({
      region: REGION,
      endpoint,
      forcePathStyle: true,
      credentials,
      requestChecksumCalculation: 'WHEN_REQUIRED',
    });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-s3-auth-'));
    ({ s3, endpoint } = await startEmulatedS3(dir, BUCKET, [KMS_KEY]));
    owner = clientWith(S3_EMULATOR_CREDENTIALS);
    await owner.send(
      new PutObjectCommand({ Bucket: BUCKET, Key: 'runs/other/run.json', Body: '{"secret":"s3cr3t"}' }),
    );
  });
  after(async () => {
    owner?.destroy();
    await s3?.close();
    await rm(dir, { recursive: true, force: true });
  });

  for (const [label, method, path, body] of [
    ['lists the buckets', 'GET', '/', undefined],
    ['lists a bucket', 'GET', `/${BUCKET}?list-type=2`, undefined],
    ['reads an object', 'GET', `/${BUCKET}/runs/other/run.json`, undefined],
    ['writes into the bundle bucket', 'PUT', `/${BUCKET}/bundles/planted.tgz`, 'planted'],
    ['deletes an object', 'DELETE', `/${BUCKET}/runs/other/run.json`, undefined],
  ] as const) {
    it(`an unsigned request that ${label} is 403 AccessDenied`, async () => {
      const res = await fetch(`${endpoint}${path}`, { method, body });
      const text = await res.text();
      assert.equal(res.status, 403, text);
      assert.equal(errorCode(text), 'AccessDenied');
      assert.doesNotMatch(text, /s3cr3t/);
    });
  }

  it('nothing an unsigned request tried changed the bucket', async () => {
    const listed = await owner.send(new ListObjectsV2Command({ Bucket: BUCKET }));
    assert.deepEqual(
      listed.Contents?.map((o) => o.Key),
      ['runs/other/run.json'],
    );
  });

  it('a request signed with a wrong secret is 403 SignatureDoesNotMatch; an unknown key is InvalidAccessKeyId', async () => {
    const wrongSecret = clientWith({ ...S3_EMULATOR_CREDENTIALS, secretAccessKey: 'not-the-secret' });
    const wrongKey = clientWith({ accessKeyId: 'AKIAWRONG', secretAccessKey: 'whatever' });
    try {
      for (const send of [
        () => wrongSecret.send(new ListBucketsCommand({})),
        () => wrongSecret.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'runs/other/run.json' })),
        () => wrongSecret.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'bundles/x', Body: 'x' })),
      ]) {
        await assert.rejects(send(), (err: Error & { $metadata?: { httpStatusCode?: number } }) => {
          assert.equal(err.name, 'SignatureDoesNotMatch');
          assert.equal(err.$metadata?.httpStatusCode, 403);
          return true;
        });
      }
      await assert.rejects(wrongKey.send(new ListBucketsCommand({})), { name: 'InvalidAccessKeyId' });
    } finally {
      wrongSecret.destroy();
      wrongKey.destroy();
    }
  });

  it('the key pair’s own requests work, query strings included (list, batch delete)', async () => {
    await owner.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'runs/mine/a b+c.json', Body: '1' }));
    const got = await owner.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'runs/mine/a b+c.json' }));
    assert.equal(await got.Body?.transformToString(), '1');
    const listed = await owner.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'runs/mine/' }));
    assert.deepEqual(
      listed.Contents?.map((o) => o.Key),
      ['runs/mine/a b+c.json'],
    );
    const deleted = await owner.send(
      new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: [{ Key: 'runs/mine/a b+c.json' }] } }),
    );
    assert.equal(deleted.Errors?.length ?? 0, 0);
    const buckets = await owner.send(new ListBucketsCommand({}));
    assert.ok(buckets.Buckets?.some((b) => b.Name === BUCKET));
  });

  it('a write under SSE-KMS must name a key the account has (KMS.NotFoundException), and reads back through a presigned URL', async () => {
    const sse = { ServerSideEncryption: 'aws:kms' as const, BucketKeyEnabled: true };
    await owner.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: 'runs/kms/run.json',
        Body: 'sealed',
        ...sse,
        SSEKMSKeyId: KMS_KEY,
      }),
    );
    const url = await getSignedUrl(
      owner,
      new GetObjectCommand({ Bucket: BUCKET, Key: 'runs/kms/run.json' }),
      {
        expiresIn: 60,
      },
    );
    assert.equal(await (await fetch(url)).text(), 'sealed');
    await assert.rejects(
      owner.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: 'runs/kms/other.json',
          Body: 'x',
          ...sse,
          SSEKMSKeyId: KMS_KEY.replace('0002', '0003'),
        }),
      ),
      (err: Error & { $metadata?: { httpStatusCode?: number } }) =>
        err.name === 'KMS.NotFoundException' && err.$metadata?.httpStatusCode === 400,
    );
    await owner.send(
      new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: [{ Key: 'runs/kms/run.json' }] } }),
    );
  });

  it('a presigned URL works for its own object and method only', async () => {
    const getUrl = await getSignedUrl(
      owner,
      new GetObjectCommand({ Bucket: BUCKET, Key: 'runs/other/run.json' }),
      { expiresIn: 300 },
    );
    const ok = await fetch(getUrl);
    assert.equal(ok.status, 200);
    assert.equal(await ok.text(), '{"secret":"s3cr3t"}');

    // The same signature on another object, another method, or with a query parameter added.
    const otherObject = getUrl.replace('/runs/other/run.json', '/runs/other/result.json');
    const listing = getUrl.replace('/runs/other/run.json', '');
    for (const [url, method] of [
      [otherObject, 'GET'],
      [listing, 'GET'],
      [getUrl, 'PUT'],
      [getUrl, 'DELETE'],
      [`${getUrl}&list-type=2`, 'GET'],
    ] as const) {
      const res = await fetch(url, { method, ...(method === 'PUT' ? { body: 'overwritten' } : {}) });
      const text = await res.text();
      assert.equal(res.status, 403, `${method} ${url}: ${text}`);
      assert.equal(errorCode(text), 'SignatureDoesNotMatch');
    }

    const putUrl = await getSignedUrl(
      owner,
      new PutObjectCommand({ Bucket: BUCKET, Key: 'runs/mine/result.json' }),
      { expiresIn: 300 },
    );
    assert.equal((await fetch(putUrl, { method: 'PUT', body: 'result' })).status, 200);
    const elsewhere = putUrl.replace('/runs/mine/result.json', '/bundles/planted.tgz');
    assert.equal((await fetch(elsewhere, { method: 'PUT', body: 'planted' })).status, 403);
    const got = await owner.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'runs/other/run.json' }));
    assert.equal(await got.Body?.transformToString(), '{"secret":"s3cr3t"}');
  });

  it('a run’s result URL with an unsigned x-amz-* header added is refused and copies nothing; signed ones work', async () => {
    // What the ECS sandbox hands a run (ecs-sandbox-staging.ts): the presigned PUT of its result slot.
    const slot = 'sandbox-results/run-a/exec-1.json';
    const putUrl = await getSignedUrl(owner, new PutObjectCommand({ Bucket: BUCKET, Key: slot }), {
      expiresIn: 300,
    });
    const readSlot = async () => {
      try {
        const got = await owner.send(new GetObjectCommand({ Bucket: BUCKET, Key: slot }));
        return await got.Body?.transformToString();
      } catch (err) {
        if ((err as Error).name === 'NoSuchKey') return undefined;
        throw err;
      }
    };

    // The run adds a copy source naming another tenant's object, hoping S3 copies it into its slot.
    for (const headers of [
      { 'x-amz-copy-source': `/${BUCKET}/runs/other/run.json` },
      { 'X-Amz-Copy-Source': `${BUCKET}/runs/other/run.json`, 'x-amz-metadata-directive': 'COPY' },
    ]) {
      const res = await fetch(putUrl, { method: 'PUT', headers });
      const text = await res.text();
      assert.equal(res.status, 403, text);
      assert.equal(errorCode(text), 'AccessDenied');
      assert.match(text, /<HeadersNotSigned>[^<]*x-amz-copy-source[^<]*<\/HeadersNotSigned>/);
      assert.doesNotMatch(text, /s3cr3t/);
      assert.equal(await readSlot(), undefined, 'nothing was copied into the slot');
    }

    // The same URL, as the runner sends it, works.
    assert.equal((await fetch(putUrl, { method: 'PUT', body: '{"ok":true}' })).status, 200);
    assert.equal(await readSlot(), '{"ok":true}');

    // A header that was signed is honoured: a presigned PUT that signs its x-amz-meta-* header...
    const metaUrl = await getSignedUrl(
      owner,
      new PutObjectCommand({ Bucket: BUCKET, Key: 'runs/mine/meta.json', Metadata: { origin: 'runner' } }),
      { expiresIn: 300, unhoistableHeaders: new Set(['x-amz-meta-origin']) },
    );
    assert.match(new URL(metaUrl).searchParams.get('X-Amz-SignedHeaders') ?? '', /x-amz-meta-origin/);
    const withMeta = await fetch(metaUrl, {
      method: 'PUT',
      body: 'meta',
      headers: { 'x-amz-meta-origin': 'runner' },
    });
    assert.equal(withMeta.status, 200, await withMeta.text());
    const meta = await owner.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'runs/mine/meta.json' }));
    assert.equal(meta.Metadata?.origin, 'runner');
    // ...and the key pair's own copy, whose x-amz-copy-source the SDK signs.
    await owner.send(
      new CopyObjectCommand({ Bucket: BUCKET, Key: 'runs/mine/copy.json', CopySource: `${BUCKET}/${slot}` }),
    );
    const copied = await owner.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'runs/mine/copy.json' }));
    assert.equal(await copied.Body?.transformToString(), '{"ok":true}');
  });

  it('an expired presigned URL is refused', async () => {
    const url = await getSignedUrl(
      owner,
      new GetObjectCommand({ Bucket: BUCKET, Key: 'runs/other/run.json' }),
      { expiresIn: 60, signingDate: new Date(Date.now() - 120_000) },
    );
    const res = await fetch(url);
    const text = await res.text();
    assert.equal(res.status, 403, text);
    assert.equal(errorCode(text), 'AccessDenied');
    assert.match(text, /expired/);
  });
});

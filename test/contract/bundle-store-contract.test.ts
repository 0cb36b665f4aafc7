/**
 * The BundleStore contract: one suite, run against both adapters (the file store on a temp dir,
 * and the S3 store on a client mocked with aws-sdk-client-mock and backed by an in-memory map that
 * answers as S3 does). Then each adapter's own guarantees: the exact S3 requests and presigned
 * URLs, and the file store's permissions and file:// URLs.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  type GetObjectCommandOutput,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { S3BundleStore } from '../../functions/adapters/aws/s3-bundle-store.ts';
import { FileBundleStore } from '../../functions/adapters/local/file-bundle-store.ts';
import {
  BundleIntegrityError,
  type BundleStore,
  bundleKey,
  InvalidBundleKeyError,
  MAX_DOWNLOAD_URL_TTL_SECONDS,
} from '../../functions/ports/bundle-store.ts';

interface StoreFixture {
  store: BundleStore;
  close(): Promise<void>;
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const meta = (data: Buffer, contentType = 'application/gzip') => ({ contentType, sha256: sha256(data) });

/** Every byte value, so encodings that mangle binary data show. */
const binary = () =>
  Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), randomBytes(4096)]);

const KEY = 'bundles/acme/summarizer/v1.tar.gz';

const BAD_KEYS = [
  '',
  '../outside',
  'bundles/../outside',
  'bundles/acme/../../outside',
  'bundles/acme/..',
  'bundles/./acme/v1.tar.gz',
  '/etc/passwd',
  '/bundles/acme/v1.tar.gz',
  'bundles//acme/v1.tar.gz',
  'bundles/acme/',
  'bundles/',
  'bundles',
  'bundles\\..\\outside',
  'bundles/acme/v1 .tar.gz',
  'bundles/acme/\0/v1.tar.gz',
  'other/acme/v1.tar.gz',
  `bundles/${'a'.repeat(1100)}`,
];

function storeContract(label: string, open: () => Promise<StoreFixture>): void {
  describe(`BundleStore contract: ${label}`, () => {
    let fx: StoreFixture;
    beforeEach(async () => {
      fx = await open();
    });
    afterEach(async () => {
      await fx.close();
    });

    it('put then get returns the same binary bytes', async () => {
      const data = binary();
      await fx.store.put(KEY, data, meta(data));
      const got = await fx.store.get(KEY);
      assert.ok(got);
      assert.ok(Buffer.isBuffer(got));
      assert.ok(got.equals(data));
    });

    it('an empty blob round-trips', async () => {
      const data = Buffer.alloc(0);
      await fx.store.put(KEY, data, meta(data));
      assert.deepEqual(await fx.store.get(KEY), Buffer.alloc(0));
    });

    it('put over an existing key replaces the bytes', async () => {
      const first = binary();
      const second = Buffer.from('second version of the bundle');
      await fx.store.put(KEY, first, meta(first));
      await fx.store.put(KEY, second, meta(second));
      assert.deepEqual(await fx.store.get(KEY), second);
    });

    it('keys are independent', async () => {
      const a = Buffer.from('a');
      const b = Buffer.from('b');
      await fx.store.put('bundles/acme/x/v1.zip', a, meta(a, 'application/zip'));
      await fx.store.put('bundles/acme/x/v2.zip', b, meta(b, 'application/zip'));
      assert.deepEqual(await fx.store.get('bundles/acme/x/v1.zip'), a);
      assert.deepEqual(await fx.store.get('bundles/acme/x/v2.zip'), b);
      assert.equal(await fx.store.get('bundles/acme/x/v3.zip'), undefined);
    });

    it('get of a missing key is undefined', async () => {
      assert.equal(await fx.store.get(KEY), undefined);
      assert.equal(await fx.store.get('bundles/nobody/nothing/v9.zip'), undefined);
    });

    it('delete then get is undefined, and the key can be written again', async () => {
      const data = binary();
      await fx.store.put(KEY, data, meta(data));
      await fx.store.delete(KEY);
      assert.equal(await fx.store.get(KEY), undefined);
      await fx.store.put(KEY, data, meta(data));
      assert.ok((await fx.store.get(KEY))?.equals(data));
    });

    it('delete of a missing key is not an error, twice', async () => {
      await fx.store.delete(KEY);
      await fx.store.delete(KEY);
      await fx.store.delete('bundles/nobody/nothing/v1.zip');
    });

    it('put refuses bytes that do not match the declared sha256, and stores nothing', async () => {
      const data = binary();
      await assert.rejects(
        fx.store.put(KEY, data, { contentType: 'application/gzip', sha256: sha256(Buffer.from('other')) }),
        BundleIntegrityError,
      );
      await assert.rejects(
        fx.store.put(KEY, data, { contentType: 'application/gzip', sha256: 'not-hex' }),
        BundleIntegrityError,
      );
      await assert.rejects(
        fx.store.put(KEY, data, { contentType: 'application/gzip', sha256: sha256(data).toUpperCase() }),
        BundleIntegrityError,
      );
      assert.equal(await fx.store.get(KEY), undefined);
    });

    for (const bad of BAD_KEYS) {
      it(`refuses the key ${JSON.stringify(bad.length > 40 ? `${bad.slice(0, 40)}…` : bad)}`, async () => {
        const data = Buffer.from('x');
        await assert.rejects(fx.store.put(bad, data, meta(data)), InvalidBundleKeyError);
        await assert.rejects(fx.store.get(bad), InvalidBundleKeyError);
        await assert.rejects(fx.store.delete(bad), InvalidBundleKeyError);
        await assert.rejects(fx.store.downloadUrl(bad, 60), InvalidBundleKeyError);
      });
    }

    it('downloadUrl refuses lifetimes outside 1 second to 7 days', async () => {
      for (const ttl of [0, -1, 1.5, MAX_DOWNLOAD_URL_TTL_SECONDS + 1, Number.NaN]) {
        await assert.rejects(fx.store.downloadUrl(KEY, ttl), RangeError, String(ttl));
      }
      assert.equal(typeof (await fx.store.downloadUrl(KEY, 1)), 'string');
      assert.equal(typeof (await fx.store.downloadUrl(KEY, MAX_DOWNLOAD_URL_TTL_SECONDS)), 'string');
    });

    it('bundleKey builds keys every store accepts', async () => {
      const key = bundleKey('acme', 'pdf-summarizer', 'v12', 'zip');
      assert.equal(key, 'bundles/acme/pdf-summarizer/v12.zip');
      const data = Buffer.from('zip bytes');
      await fx.store.put(key, data, meta(data, 'application/zip'));
      assert.deepEqual(await fx.store.get(key), data);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// File store fixture

async function fileFixture(): Promise<StoreFixture & { dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'agenthost-bundles-'));
  return {
    dir,
    store: new FileBundleStore(dir),
    close: () => rm(dir, { recursive: true, force: true }),
  };
}

// ---------------------------------------------------------------------------------------------
// S3 fixture: a mocked client backed by a map, answering as S3 does.

interface StoredObject {
  body: Buffer;
  contentType: string | undefined;
  checksumSha256: string | undefined;
}

interface FakeS3 {
  client: S3Client;
  mock: ReturnType<typeof mockS3>;
  objects: Map<string, StoredObject>;
}

const mockS3 = (client: S3Client) => mockClient(client);

/** What the SDK hands back as a GetObject body: a stream with the transform helpers mixed in. */
function sdkBody(bytes: Buffer): GetObjectCommandOutput['Body'] {
  return {
    transformToByteArray: async () => new Uint8Array(bytes),
    transformToString: async (encoding?: string) => bytes.toString((encoding as BufferEncoding) ?? 'utf8'),
    transformToWebStream: () => new Blob([new Uint8Array(bytes)]).stream(),
  } as unknown as GetObjectCommandOutput['Body'];
}

function fakeS3(): FakeS3 {
  // Static fake credentials and a region: the presigner signs offline with them.
  const client = new S3Client({
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKIAEXAMPLEEXAMPLE00', secretAccessKey: 'fake-secret-access-key' },
  });
  const objects = new Map<string, StoredObject>();
  const mock = mockS3(client);
  const id = (bucket: unknown, key: unknown) => `${String(bucket)}/${String(key)}`;

  mock.on(PutObjectCommand).callsFake(async (input) => {
    const body = Buffer.from(input.Body as Uint8Array);
    if (
      input.ChecksumSHA256 !== undefined &&
      createHash('sha256').update(body).digest('base64') !== input.ChecksumSHA256
    ) {
      throw new S3ServiceException({
        name: 'BadDigest',
        $fault: 'client',
        message: 'The SHA256 you specified did not match the calculated checksum.',
        $metadata: { httpStatusCode: 400 },
      });
    }
    objects.set(id(input.Bucket, input.Key), {
      body,
      contentType: input.ContentType,
      checksumSha256: input.ChecksumSHA256,
    });
    return {
      ETag: `"${createHash('md5').update(body).digest('hex')}"`,
      ChecksumSHA256: input.ChecksumSHA256,
    };
  });
  mock.on(GetObjectCommand).callsFake(async (input) => {
    const object = objects.get(id(input.Bucket, input.Key));
    if (!object) {
      throw new NoSuchKey({
        message: 'The specified key does not exist.',
        $metadata: { httpStatusCode: 404 },
      });
    }
    return {
      Body: sdkBody(object.body),
      ContentLength: object.body.length,
      ContentType: object.contentType,
    };
  });
  mock.on(DeleteObjectCommand).callsFake(async (input) => {
    // S3 answers 204 whether or not the key existed.
    objects.delete(id(input.Bucket, input.Key));
    return {};
  });
  return { client, mock, objects };
}

async function s3Fixture(): Promise<StoreFixture> {
  const fake = fakeS3();
  return {
    store: new S3BundleStore({ bucket: 'agenthost-bundles-test', client: fake.client }),
    close: async () => {
      fake.mock.restore();
      fake.client.destroy();
    },
  };
}

storeContract('FileBundleStore on a temp dir', fileFixture);
storeContract('S3BundleStore on a mocked client', s3Fixture);

// ---------------------------------------------------------------------------------------------
// bundleKey

describe('bundleKey', () => {
  it('builds bundles/<org>/<agent>/<version>.<format>', () => {
    assert.equal(bundleKey('acme', 'agent-1', 'v1', 'tar.gz'), 'bundles/acme/agent-1/v1.tar.gz');
    assert.equal(
      bundleKey('0b6f7c1e-8a1d-4c1e-9a4f-2f9c8e7d6b5a', 'x', 'v123456789', 'zip'),
      'bundles/0b6f7c1e-8a1d-4c1e-9a4f-2f9c8e7d6b5a/x/v123456789.zip',
    );
    // Whatever an agent name may be (manifest.ts AGENT_NAME_PATTERN) fits.
    assert.equal(bundleKey('acme', 'a--b-', 'v2', 'zip'), 'bundles/acme/a--b-/v2.zip');
    assert.equal(bundleKey('acme', 'a'.repeat(64), 'v2', 'zip'), `bundles/acme/${'a'.repeat(64)}/v2.zip`);
  });

  it('refuses anything that is not slug-shaped', () => {
    const bad: [string, string, string, string][] = [
      ['../acme', 'a', 'v1', 'zip'],
      ['acme', '../a', 'v1', 'zip'],
      ['Acme', 'a', 'v1', 'zip'],
      ['ac/me', 'a', 'v1', 'zip'],
      ['acme', 'a b', 'v1', 'zip'],
      ['', 'a', 'v1', 'zip'],
      ['acme', '', 'v1', 'zip'],
      ['-acme', 'a', 'v1', 'zip'],
      ['a'.repeat(65), 'a', 'v1', 'zip'],
      ['acme', 'a', '1', 'zip'],
      ['acme', 'a', 'v0', 'zip'],
      ['acme', 'a', 'v01', 'zip'],
      ['acme', 'a', 'v1/../x', 'zip'],
      ['acme', 'a', 'latest', 'zip'],
      ['acme', 'a', 'v1', 'tar'],
    ];
    for (const [org, agent, version, format] of bad) {
      assert.throws(
        () => bundleKey(org, agent, version, format as 'zip'),
        InvalidBundleKeyError,
        `${org} ${agent} ${version} ${format}`,
      );
    }
  });
});

// ---------------------------------------------------------------------------------------------
// S3 specifics: the exact requests and the presigned URL.

describe('S3BundleStore requests', () => {
  let fake: FakeS3;
  beforeEach(() => {
    fake = fakeS3();
  });
  afterEach(() => {
    fake.mock.restore();
    fake.client.destroy();
  });

  const inputs = () => fake.mock.calls().map((c) => [c.args[0].constructor.name, c.args[0].input]);

  it('put with a KMS key: SSE-KMS under that key with a bucket key, SHA-256 checksum, content type', async () => {
    const store = new S3BundleStore({
      bucket: 'bundles-bucket',
      kmsKeyId: 'arn:aws:kms:eu-west-1:123456789012:key/abcd',
      client: fake.client,
    });
    const data = binary();
    await store.put(KEY, data, meta(data));
    assert.deepEqual(inputs(), [
      [
        'PutObjectCommand',
        {
          Bucket: 'bundles-bucket',
          Key: KEY,
          Body: data,
          ContentType: 'application/gzip',
          ChecksumSHA256: createHash('sha256').update(data).digest('base64'),
          ServerSideEncryption: 'aws:kms',
          SSEKMSKeyId: 'arn:aws:kms:eu-west-1:123456789012:key/abcd',
          BucketKeyEnabled: true,
        },
      ],
    ]);
    assert.ok(fake.objects.get(`bundles-bucket/${KEY}`)?.body.equals(data));
  });

  it('put without a KMS key: SSE-S3 (AES256) and no KMS fields', async () => {
    const store = new S3BundleStore({ bucket: 'b', client: fake.client });
    const data = Buffer.from('zip bytes');
    await store.put('bundles/o/a/v2.zip', data, meta(data, 'application/zip'));
    const input = fake.mock.commandCalls(PutObjectCommand)[0]?.args[0].input;
    assert.deepEqual(input, {
      Bucket: 'b',
      Key: 'bundles/o/a/v2.zip',
      Body: data,
      ContentType: 'application/zip',
      ChecksumSHA256: createHash('sha256').update(data).digest('base64'),
      ServerSideEncryption: 'AES256',
    });
  });

  it('a put refused locally for a digest mismatch sends nothing', async () => {
    const store = new S3BundleStore({ bucket: 'b', client: fake.client });
    await assert.rejects(
      store.put(KEY, Buffer.from('a'), { contentType: 'application/gzip', sha256: sha256(Buffer.from('b')) }),
      BundleIntegrityError,
    );
    assert.deepEqual(inputs(), []);
  });

  it('get sends GetObject with bucket and key; a missing key (NoSuchKey) is undefined', async () => {
    const store = new S3BundleStore({ bucket: 'b', client: fake.client });
    assert.equal(await store.get(KEY), undefined);
    const data = Buffer.from('bytes');
    await store.put(KEY, data, meta(data));
    fake.mock.resetHistory();
    assert.deepEqual(await store.get(KEY), data);
    assert.deepEqual(inputs(), [['GetObjectCommand', { Bucket: 'b', Key: KEY }]]);
  });

  it('get rethrows other S3 errors (AccessDenied)', async () => {
    const store = new S3BundleStore({ bucket: 'b', client: fake.client });
    fake.mock.on(GetObjectCommand).rejects(
      new S3ServiceException({
        name: 'AccessDenied',
        $fault: 'client',
        message: 'Access Denied',
        $metadata: { httpStatusCode: 403 },
      }),
    );
    await assert.rejects(store.get(KEY), { name: 'AccessDenied' });
  });

  it('delete sends DeleteObject with bucket and key', async () => {
    const store = new S3BundleStore({ bucket: 'b', client: fake.client });
    await store.delete(KEY);
    assert.deepEqual(inputs(), [['DeleteObjectCommand', { Bucket: 'b', Key: KEY }]]);
  });

  it('downloadUrl is a presigned GET URL for the bucket and key with the TTL and a signature', async () => {
    const store = new S3BundleStore({ bucket: 'agenthost-bundles-test', client: fake.client });
    const url = new URL(await store.downloadUrl(KEY, 900));
    assert.equal(url.protocol, 'https:');
    assert.ok(url.href.includes('agenthost-bundles-test'), url.href);
    assert.ok(url.pathname.endsWith(`/${KEY}`), url.pathname);
    assert.match(url.href, /[?&]X-Amz-Expires=900(&|$)/);
    assert.equal(url.searchParams.get('X-Amz-Algorithm'), 'AWS4-HMAC-SHA256');
    assert.match(
      String(url.searchParams.get('X-Amz-Credential')),
      /^AKIAEXAMPLEEXAMPLE00\/\d{8}\/eu-west-1\/s3\//,
    );
    assert.match(String(url.searchParams.get('X-Amz-Signature')), /^[0-9a-f]{64}$/);
    assert.equal(url.searchParams.get('X-Amz-SignedHeaders'), 'host');
    // Signed offline: no request went through the client.
    assert.deepEqual(inputs(), []);

    const week = new URL(await store.downloadUrl(KEY, MAX_DOWNLOAD_URL_TTL_SECONDS));
    assert.equal(week.searchParams.get('X-Amz-Expires'), String(MAX_DOWNLOAD_URL_TTL_SECONDS));
    assert.notEqual(week.searchParams.get('X-Amz-Signature'), url.searchParams.get('X-Amz-Signature'));
  });
});

// ---------------------------------------------------------------------------------------------
// File store specifics: permissions, atomic writes, file:// URLs.

describe('FileBundleStore on disk', () => {
  let fx: Awaited<ReturnType<typeof fileFixture>>;
  beforeEach(async () => {
    fx = await fileFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  it('writes 0600 files under 0700 directories at <dataDir>/<key>', async () => {
    const data = binary();
    await fx.store.put(KEY, data, meta(data));
    const file = join(fx.dir, 'bundles', 'acme', 'summarizer', 'v1.tar.gz');
    assert.ok((await readFile(file)).equals(data));
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    for (const dir of ['bundles', 'bundles/acme', 'bundles/acme/summarizer']) {
      assert.equal((await stat(join(fx.dir, dir))).mode & 0o777, 0o700, dir);
    }
  });

  it('leaves no temp files behind, after success and after a refused put', async () => {
    const data = binary();
    await fx.store.put(KEY, data, meta(data));
    await fx.store.put(KEY, data, meta(data));
    await assert.rejects(fx.store.put(KEY, data, { contentType: 'x', sha256: sha256(Buffer.from('no')) }));
    assert.deepEqual(await readdir(join(fx.dir, 'bundles', 'acme', 'summarizer')), ['v1.tar.gz']);
  });

  it('downloadUrl is a file:// URL of the stored file, holding the same bytes', async () => {
    const data = binary();
    await fx.store.put(KEY, data, meta(data));
    const url = await fx.store.downloadUrl(KEY, 60);
    assert.match(url, /^file:\/\//);
    const path = fileURLToPath(url);
    assert.equal(path, join(fx.dir, 'bundles', 'acme', 'summarizer', 'v1.tar.gz'));
    assert.ok((await readFile(path)).equals(data));
  });

  it('writes nothing outside the data dir for refused keys', async () => {
    const data = Buffer.from('x');
    for (const bad of BAD_KEYS) await assert.rejects(fx.store.put(bad, data, meta(data)));
    assert.deepEqual(await readdir(fx.dir), []);
  });
});

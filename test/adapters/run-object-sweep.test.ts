import assert from 'node:assert/strict';
import { mkdtemp, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { RUN_OBJECT_MAX_AGE_MS, sweepRunObjects } from '../../functions/adapters/aws/run-object-sweep.ts';
import type { S3Emulator } from '../../functions/emulator/s3-emulator.ts';
import { S3_EMULATOR_CREDENTIALS, startEmulatedS3 } from '../helpers/emulated-aws.ts';

/**
 * Housekeeping's sweep of the ECS sandbox's run objects: what sessions that
 * never closed left (a run manifest or a warm runner's claim holds the run's secret values) is
 * deleted once older than any session may live, every version of it; what a session still running
 * wrote, and the bucket's other objects, stay. Against the emulated deployment's S3 (s3rver behind
 * the platform's SigV4 check), whose ListObjectVersions answers as S3 does for a bucket never
 * versioned.
 */

const BUCKET = 'agenthost-bundles';

describe('sweepRunObjects: the run objects of sessions that never closed', () => {
  let dir: string;
  let s3: S3Emulator;
  let client: S3Client;
  const sweep = () => sweepRunObjects({ bucket: BUCKET, s3: async () => client }, new Date());

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-sweep-'));
    const started = await startEmulatedS3(dir, BUCKET);
    s3 = started.s3;
    client = new S3Client({
      region: 'us-east-1',
      endpoint: started.endpoint,
      forcePathStyle: true,
      credentials: S3_EMULATOR_CREDENTIALS,
    });
  });
  after(async () => {
    client?.destroy();
    await s3?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const put = (key: string) =>
    client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: `{"secret":"${key}"}` }));
  /** Backdates an object as S3 would date one written `ms` ago (s3rver dates it by its file). */
  const age = async (key: string, ms: number) => {
    const when = new Date(Date.now() - ms);
    await utimes(join(dir, 's3', BUCKET, `${key}._S3rver_object`), when, when);
  };
  const keys = async () =>
    ((await client.send(new ListObjectsV2Command({ Bucket: BUCKET }))).Contents ?? [])
      .map((o) => o.Key)
      .sort();

  test('deletes what is older than any session lives, and keeps a running session’s objects and the bundles', async () => {
    const stale = [
      'sandbox-inputs/run-crashed/run.json',
      'sandbox-inputs/run-crashed/exec-2.json',
      'sandbox-inputs/pool/wr-0a1b/claim-3.json',
      'sandbox-results/run-crashed/exec-1.json',
    ];
    const fresh = ['sandbox-inputs/run-live/run.json', 'sandbox-results/run-live/exec-1.json'];
    const other = ['bundles/ws/agv/1.tar.gz'];
    for (const key of [...stale, ...fresh, ...other]) await put(key);
    for (const key of [...stale, ...other]) await age(key, RUN_OBJECT_MAX_AGE_MS + 60_000);
    // A session may still hold an object just under the bound.
    await age(fresh[0] as string, RUN_OBJECT_MAX_AGE_MS - 60_000);

    assert.equal(await sweep(), stale.length);
    assert.deepEqual(await keys(), [...other, ...fresh].sort());
    await assert.rejects(
      client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'sandbox-inputs/pool/wr-0a1b/claim-3.json' })),
      /NoSuchKey|does not exist/,
    );
    assert.equal(await sweep(), 0, 'nothing left to sweep');
  });

  test('pages through more objects than one listing holds', async () => {
    const many = Array.from(
      { length: 1005 },
      (_, i) => `sandbox-results/run-${String(i).padStart(4, '0')}/exec-1.json`,
    );
    for (const key of many) await put(key);
    for (const key of many) await age(key, RUN_OBJECT_MAX_AGE_MS + 60_000);
    assert.equal(await sweep(), many.length);
    assert.ok(!(await keys()).some((k) => k?.startsWith('sandbox-results/run-0')));
  });
});

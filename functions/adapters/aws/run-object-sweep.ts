import type { S3Client } from '@aws-sdk/client-s3';
import { deleteRunObjects, SANDBOX_INPUTS_PREFIX, SANDBOX_RESULTS_PREFIX } from './ecs-sandbox-staging.ts';

/** Loaded on first use, as in the session (ecs-sandbox-session.ts): no static import may name it. */
const s3Sdk = () => import('@aws-sdk/client-s3');

/**
 * How old a run object must be before housekeeping deletes it: a session lives inside the function
 * invocation that opened it, and no Lambda invocation lasts more than 15 minutes, so an object this
 * old belongs to a session that ended, by closing (which deleted it already) or not (a crashed or
 * timed-out function). A warm runner's own program and pool manifest are read at its start, minutes
 * before.
 */
export const RUN_OBJECT_MAX_AGE_MS = 15 * 60_000;

/**
 * Deletes every version (and delete marker) of the sandbox's run objects (`sandbox-inputs/`,
 * `sandbox-results/`) older at `now` than RUN_OBJECT_MAX_AGE_MS: what a session that never closed
 * left, its secret values among it, within minutes rather than at the one-day lifecycle rule
 * (docs/sandbox-aws.md). Versions, not keys: the bucket is versioned, and
 * deleting a key would only hide its content behind a delete marker. Resolves to how many versions
 * it asked S3 to delete (a failed batch is left for the next sweep and the lifecycle rule).
 */
export async function sweepRunObjects(
  ctx: { bucket: string; s3: () => Promise<S3Client> },
  now: Date,
): Promise<number> {
  const olderThan = new Date(now.getTime() - RUN_OBJECT_MAX_AGE_MS);
  const { ListObjectVersionsCommand } = await s3Sdk();
  const s3 = await ctx.s3();
  let deleted = 0;
  for (const prefix of [SANDBOX_INPUTS_PREFIX, SANDBOX_RESULTS_PREFIX]) {
    let keyMarker: string | undefined;
    let versionIdMarker: string | undefined;
    do {
      const page = await s3.send(
        new ListObjectVersionsCommand({
          Bucket: ctx.bucket,
          Prefix: prefix,
          ...(keyMarker ? { KeyMarker: keyMarker } : {}),
          ...(versionIdMarker ? { VersionIdMarker: versionIdMarker } : {}),
        }),
      );
      const stale = [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])]
        .filter((v) => v.Key && v.LastModified && v.LastModified < olderThan)
        .map((v) => ({ Key: v.Key as string, ...(v.VersionId ? { VersionId: v.VersionId } : {}) }));
      await deleteRunObjects(ctx, stale);
      deleted += stale.length;
      keyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
      versionIdMarker = page.IsTruncated ? page.NextVersionIdMarker : undefined;
    } while (keyMarker);
  }
  return deleted;
}

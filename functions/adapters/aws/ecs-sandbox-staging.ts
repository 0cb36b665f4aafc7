/**
 * A run's staging in S3 for the ECS sandbox (functions/adapters/aws/ecs-sandbox.ts): where its
 * objects live, the upload of its inputs (runner, bundle, files) and its manifest, and the
 * presigned URLs through which the task, which has no role, reaches them.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { AwsCredentialIdentity, Provider } from '@smithy/types';
import type { ExecCommand, RunManifest } from '../../containers/sandbox-protocol.ts';
import { isAgentBundleKey } from '../../ports/bundle-store.ts';
import type { SessionSpec } from '../../ports/sandbox.ts';
import { SANDBOX_WORK_DIR } from '../../shared/sandbox-conventions.ts';
import { TASK_ENV_FILE, writeTaskEnvFile } from './ecs-sandbox-env-file.ts';
import type { Presign, SessionContext } from './ecs-sandbox-options.ts';

/** Where a run's inputs (manifest, bundle, files) are staged; the calls function may write here. */
export const SANDBOX_INPUTS_PREFIX = 'sandbox-inputs/';
/** Where the runner puts a run's result, through the presigned PUT URL only that run received. */
export const SANDBOX_RESULTS_PREFIX = 'sandbox-results/';
/**
 * The warm runners' objects (ecs-sandbox-warm.ts): each runner's pool manifest, its program and its
 * claims, under `<runner id>/`. The pool function may read and write here only.
 */
export const WARM_POOL_PREFIX = `${SANDBOX_INPUTS_PREFIX}pool/`;

/** Loaded on first use, as in the session (ecs-sandbox-session.ts): no static import may name it. */
const s3Sdk = () => import('@aws-sdk/client-s3');

const MAX_URL_TTL_SECONDS = 7 * 24 * 60 * 60;
/** DeleteObjects takes at most this many keys a request. */
const DELETE_BATCH = 1000;

/** The key of a run's input object `name` (manifest, runner, bundle, files, commands). */
export function sandboxInputKey(runId: string, name: string): string {
  return `${SANDBOX_INPUTS_PREFIX}${runId}/${name}`;
}

/** The key of the result object of a run's command n. */
export function sandboxResultKey(runId: string, n: number): string {
  return `${SANDBOX_RESULTS_PREFIX}${runId}/exec-${n}.json`;
}

/**
 * PutObject of one of the sandbox's run objects. A run's inputs (`sandbox-inputs/`: manifests,
 * claims, commands, the task's env file) carry its secret values, so they are written under the
 * sandbox's customer-managed KMS key (`inputsKey`), which only the roles that run sandboxes may
 * use: a principal that may read the bucket (AWS's ReadOnlyAccess) cannot decrypt them. With an S3
 * Bucket Key, S3 asks KMS for a data key once in a while, not once an object (docs/sandbox-aws.md,
 * "Who can read a run's secrets"). Results keep the bucket's SSE-S3: the runner's presigned PUT
 * would otherwise have to sign the encryption headers too.
 */
export async function putRunObject(
  ctx: Pick<SessionContext, 'bucket' | 's3' | 'inputsKey'>,
  key: string,
  body: Buffer,
  contentType: string,
): Promise<{ VersionId?: string | undefined }> {
  const { PutObjectCommand } = await s3Sdk();
  const encrypted =
    ctx.inputsKey && key.startsWith(SANDBOX_INPUTS_PREFIX)
      ? { ServerSideEncryption: 'aws:kms' as const, SSEKMSKeyId: ctx.inputsKey, BucketKeyEnabled: true }
      : {};
  const s3 = await ctx.s3();
  return s3.send(
    new PutObjectCommand({
      Bucket: ctx.bucket,
      Key: key,
      Body: body,
      ContentType: contentType,
      ...encrypted,
    }),
  );
}

/**
 * Uploads a run's inputs (the runner, the bundle, the files staged so far, which it clears), its
 * manifest and the env file holding the manifest's presigned GET URL, and returns the manifest and
 * the env file's S3 ARN: the task's only override (ecs-sandbox-env-file.ts).
 * `forClaim`: for a warm runner, which gets the manifest itself in its claim and runs its own
 * runner already, neither the runner, the manifest nor an env file is uploaded (envFile is empty).
 * `first`: the command that starts the run, carried in the manifest (no exec-1.json).
 */
export async function stageRun(
  ctx: SessionContext,
  spec: SessionSpec,
  files: Map<string, Buffer>,
  put: (key: string, body: Buffer, contentType: string) => Promise<void>,
  { forClaim = false, first }: { forClaim?: boolean; first?: ExecCommand | undefined } = {},
): Promise<{ manifest: RunManifest; envFile: string }> {
  const inputKey = (name: string) => sandboxInputKey(spec.runId, name);
  const deadlineMs = spec.deadlineMs;
  const ttl = Math.min(MAX_URL_TTL_SECONDS, Math.max(60, Math.ceil((deadlineMs - Date.now()) / 1000) + 60));
  const bundle = spec.bundle;
  // An agent version's bundle is read where the bundle store keeps it (the same bucket): no copy
  // a run, so a steadily called tool writes one object fewer each call.
  const stored =
    bundle?.key !== undefined && bundle.sha256 !== undefined && isAgentBundleKey(bundle.key)
      ? bundle.key
      : undefined;
  const bundleKey = bundle ? (stored ?? inputKey(`bundle.${bundle.format}`)) : undefined;
  const placed = [...files].map(([path, data], i) => ({
    path,
    data,
    key: inputKey(`files/${i}`),
  }));
  files.clear();
  const runnerKey = inputKey('runner.cjs');
  await Promise.all([
    ...(forClaim ? [] : [put(runnerKey, Buffer.from(ctx.runnerSource), 'application/javascript')]),
    ...(bundle && bundleKey && !stored ? [put(bundleKey, bundle.data, 'application/octet-stream')] : []),
    ...placed.map((f) => put(f.key, f.data, 'application/octet-stream')),
  ]);
  // The command slots the run may use, each a pair of presigned URLs in the manifest: a run whose
  // first command is its last (a tool's) uses one, and its command rides in the manifest, so one
  // URL, not maxExecs pairs. Signing 200 pairs took most of a tool call's CPU in the calls
  // function (at Lambda's share of a vCPU, about a second of its billed time) and made its claim
  // 400 KB (docs/sandbox-aws.md, "What a run costs").
  const oneCommand = first !== undefined && 'command' in first && first.last === true;
  const slots = oneCommand ? [1] : Array.from({ length: ctx.maxExecs }, (_, i) => i + 1);
  const manifest: RunManifest = {
    v: 2,
    runId: spec.runId,
    workDir: SANDBOX_WORK_DIR,
    env: { ...spec.env },
    bundle:
      bundle && bundleKey
        ? {
            url: await ctx.presign('GET', bundleKey, ttl),
            format: bundle.format,
            ...(stored && bundle.sha256 ? { sha256: bundle.sha256 } : {}),
          }
        : null,
    files: await Promise.all(
      placed.map(async (f) => ({ path: f.path, url: await ctx.presign('GET', f.key, ttl) })),
    ),
    execs: await Promise.all(
      slots.map(async (n) => ({
        // Command 1 given in the manifest is read from nowhere else.
        commandUrl: n === 1 && first ? '' : await ctx.presign('GET', inputKey(`exec-${n}.json`), ttl),
        resultUrl: await ctx.presign('PUT', sandboxResultKey(spec.runId, n), ttl),
      })),
    ),
    ...(first ? { first } : {}),
    pollMs: [ctx.pollMs, ctx.maxPollMs],
    deadlineMs,
    runner: { url: forClaim ? '' : await ctx.presign('GET', runnerKey, ttl) },
    limits: {
      cpuSeconds: spec.limits.cpuSeconds,
      processes: spec.limits.processes,
      outputBytes: spec.limits.outputBytes,
      diskBytes: spec.limits.diskBytes,
    },
  };
  if (forClaim) return { manifest, envFile: '' };
  const manifestKey = inputKey('run.json');
  await put(manifestKey, Buffer.from(JSON.stringify(manifest)), 'application/json');
  const url = await ctx.presign('GET', manifestKey, ttl);
  return { manifest, envFile: await writeTaskEnvFile(ctx, put, inputKey(TASK_ENV_FILE), url) };
}

/**
 * Deletes a run's objects, the exact versions it wrote and read. Best effort: what is left goes
 * with the bucket's lifecycle rule (docs/sandbox-aws.md), and never masks the run's outcome.
 */
export async function deleteRunObjects(
  ctx: Pick<SessionContext, 'bucket' | 's3'>,
  objects: { Key: string; VersionId?: string }[],
): Promise<void> {
  for (let i = 0; i < objects.length; i += DELETE_BATCH) {
    try {
      const { DeleteObjectsCommand } = await s3Sdk();
      const s3 = await ctx.s3();
      await s3.send(
        new DeleteObjectsCommand({
          Bucket: ctx.bucket,
          Delete: { Objects: objects.slice(i, i + DELETE_BATCH), Quiet: true },
        }),
      );
    } catch {
      // Left for the lifecycle rule.
    }
  }
}

/**
 * Presigned GET and PUT URLs for the bucket's sandbox objects, signed with the caller's (the calls
 * function's role) credentials. Checksums only when required: by default the SDK puts the CRC32 of
 * an empty body into a presigned PutObject URL, and S3 would then refuse the runner's upload.
 */
export function createS3Presigner(options: {
  bucket: string;
  region: string;
  credentials?: AwsCredentialIdentity | Provider<AwsCredentialIdentity>;
}): Presign {
  let client: S3Client | undefined;
  const clientOf = async () => {
    const { S3Client } = await s3Sdk();
    client ??= new S3Client({
      region: options.region,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      ...(options.credentials ? { credentials: options.credentials } : {}),
    });
    return client;
  };
  const presign: Presign = async (method, key, ttlSeconds) => {
    // A run's objects, and (to read only) an agent version's bundle; never a payload or anything else.
    const runObject = key.startsWith(SANDBOX_INPUTS_PREFIX) || key.startsWith(SANDBOX_RESULTS_PREFIX);
    if (!runObject && !(method === 'GET' && isAgentBundleKey(key))) {
      throw new Error(`ECS sandbox: will not sign ${key}`);
    }
    const { GetObjectCommand, PutObjectCommand } = await s3Sdk();
    const { getSignedUrl } = await import('@aws-sdk/s3-request-presigner');
    const client = await clientOf();
    const command =
      method === 'GET'
        ? new GetObjectCommand({ Bucket: options.bucket, Key: key })
        : new PutObjectCommand({ Bucket: options.bucket, Key: key });
    return getSignedUrl(client, command, { expiresIn: ttlSeconds });
  };
  presign.credentialsExpireAt = async () =>
    (await (await clientOf()).config.credentials()).expiration?.getTime();
  return presign;
}

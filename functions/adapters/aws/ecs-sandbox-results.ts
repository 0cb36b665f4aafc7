/**
 * The result side of the ECS sandbox's command protocol (functions/adapters/aws/ecs-sandbox.ts):
 * reading a command's result object from S3, checking what the runner wrote, and turning it into
 * the port's ExecResult (its limits enforced again here).
 */
import type { GetObjectCommandOutput } from '@aws-sdk/client-s3';
import * as z from 'zod';
import type { RunResult } from '../../containers/sandbox-protocol.ts';
import {
  type ExecResult,
  type SandboxLimits,
  SandboxUnavailableError,
  type SessionSpec,
} from '../../ports/sandbox.ts';
import { STDERR_TAIL_BYTES } from '../../shared/sandbox-conventions.ts';
import type { SessionContext } from './ecs-sandbox-options.ts';

/** Loaded on first use, as in the session (ecs-sandbox-session.ts): no static import may name it. */
const s3Sdk = () => import('@aws-sdk/client-s3');

/** A result object larger than this is not a runner's: refused rather than read into memory. */
const RESULT_OVERHEAD_BYTES = 1024 * 1024;

/**
 * Command n's result object, or undefined while there is none. Without s3:ListBucket (the calls
 * role has none) S3 answers a missing key with 403 AccessDenied rather than NoSuchKey: both mean
 * "not yet". `writtenAtMs` is when S3 took the object (its Last-Modified, whole seconds, so never
 * later than the runner's upload ended): a warm runner's wait for its next claim is counted from
 * its upload, so the pool's record of that wait is too (ecs-sandbox-warm.ts, `release`).
 */
export async function readRunResult(
  ctx: SessionContext,
  spec: SessionSpec,
  key: string,
  /** The session's objects, deleted at close: the result's version is added to them. */
  objects: { Key: string; VersionId?: string }[],
): Promise<{ result: RunResult; writtenAtMs: number } | undefined> {
  const { GetObjectCommand } = await s3Sdk();
  const s3 = await ctx.s3();
  let out: GetObjectCommandOutput;
  try {
    out = await s3.send(new GetObjectCommand({ Bucket: ctx.bucket, Key: key }));
  } catch (err) {
    const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
    if (e.name === 'NoSuchKey' || e.name === 'AccessDenied' || e.$metadata?.httpStatusCode === 404) {
      return undefined;
    }
    throw err;
  }
  objects.push({ Key: key, ...(out.VersionId ? { VersionId: out.VersionId } : {}) });
  const limit = spec.limits.outputBytes * 6 + RESULT_OVERHEAD_BYTES;
  if (out.ContentLength !== undefined && out.ContentLength > limit) {
    throw new SandboxUnavailableError(`ECS sandbox: the result of run ${spec.runId} is too large`);
  }
  const text = (await out.Body?.transformToString()) ?? '';
  return { result: parseResult(text, spec.runId), writtenAtMs: out.LastModified?.getTime() ?? Date.now() };
}

/** What a runner may write as a command's result: RunResult, checked on read (the task is user code's). */
const RUN_RESULT = z.union([
  z.object({ v: z.literal(1), error: z.string() }),
  z.object({
    v: z.literal(1),
    exitCode: z.number().int().nullable(),
    signal: z.string().nullable(),
    stdout: z.string(),
    stdoutTruncated: z.boolean(),
    stderrTail: z.string(),
    timedOut: z.boolean(),
    durationMs: z.number().min(0),
    cpuMs: z.number().min(0).optional(),
  }),
]);

function parseResult(text: string, runId: string): RunResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const parsed = RUN_RESULT.safeParse(value);
  if (!parsed.success)
    throw new SandboxUnavailableError(`ECS sandbox: the result of run ${runId} is malformed`);
  const r = parsed.data;
  return 'error' in r ? { v: 1, error: r.error.slice(0, 2000) } : r;
}

export function toExecResult(
  r: Extract<RunResult, { exitCode: unknown }>,
  limits: SandboxLimits,
): ExecResult {
  // The runner already caps both; capped again here so the port's limits hold whatever the object says.
  const stdoutBytes = Buffer.from(r.stdout, 'utf8');
  const over = stdoutBytes.length > limits.outputBytes;
  const stderrBytes = Buffer.from(r.stderrTail, 'utf8');
  return {
    exitCode: r.exitCode,
    signal: r.signal,
    stdout: over ? stdoutBytes.subarray(0, limits.outputBytes).toString('utf8') : r.stdout,
    stderrTail:
      stderrBytes.length > STDERR_TAIL_BYTES
        ? stderrBytes.subarray(stderrBytes.length - STDERR_TAIL_BYTES).toString('utf8')
        : r.stderrTail,
    timedOut: r.timedOut,
    stdoutTruncated: r.stdoutTruncated || over,
    durationMs: Math.round(r.durationMs),
    ...(r.cpuMs === undefined ? {} : { cpuMs: Math.round(r.cpuMs) }),
  };
}

export function timedOutResult(durationMs: number, stderrTail: string): ExecResult {
  return {
    exitCode: null,
    signal: 'SIGKILL',
    stdout: '',
    stderrTail,
    timedOut: true,
    stdoutTruncated: false,
    durationMs,
  };
}

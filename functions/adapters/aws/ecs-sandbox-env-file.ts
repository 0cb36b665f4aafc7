/**
 * The task's env file: how a sandbox task learns its manifest's URL without the URL travelling in
 * the ECS API. RunTask's overrides are visible to anyone who may DescribeTasks and are written to
 * CloudTrail, and the manifest's presigned URL reaches a run's secret values, so the override names
 * only an S3 object (`environmentFiles`): ECS's agent reads it with the task's execution role, over
 * the task's own network interface (Fargate platform 1.4.0: through the sandbox VPC's S3 endpoint,
 * which the bucket's policy requires for `sandbox-inputs/`), and sets what it holds as the
 * container's environment. The runner's bootstrap reads the URL and removes it from its
 * environment before anything of the run starts (sandbox-protocol.ts, RUNNER_BOOTSTRAP).
 */
import { SANDBOX_MANIFEST_ENV } from '../../containers/sandbox-protocol.ts';

/** The file's name beside the manifest it points to (ECS reads only files named `*.env`). */
export const TASK_ENV_FILE = 'task.env';

/** The partition of a region, for ARNs (aws, aws-cn, aws-us-gov). */
export function partitionOf(region: string): string {
  if (region.startsWith('cn-')) return 'aws-cn';
  if (region.startsWith('us-gov-')) return 'aws-us-gov';
  return 'aws';
}

/** What the env file holds: one `NAME=value` line, as ECS reads env files. */
export function taskEnvFileContent(manifestUrl: string): string {
  if (/[\r\n]/.test(manifestUrl)) throw new Error('a manifest URL has no line break');
  return `${SANDBOX_MANIFEST_ENV}=${manifestUrl}\n`;
}

/**
 * Writes the env file at `key` (beside the manifest, under the same prefix: sandbox-inputs/, where
 * the sweep and the session's close find it) and returns the S3 ARN RunTask names.
 */
export async function writeTaskEnvFile(
  ctx: { bucket: string; region: string },
  put: (key: string, body: Buffer, contentType: string) => Promise<void>,
  key: string,
  manifestUrl: string,
): Promise<string> {
  await put(key, Buffer.from(taskEnvFileContent(manifestUrl)), 'text/plain');
  return `arn:${partitionOf(ctx.region)}:s3:::${ctx.bucket}/${key}`;
}

import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { AwsWireError } from './emulator-http.ts';

/**
 * A container's env files (`environmentFiles` of a container definition or of RunTask's container
 * overrides), as ECS reads them: an S3 object whose ARN ends in `.env`, of `VARIABLE=VALUE` lines
 * (lines that start with `#`, and blank lines, are skipped; the value is everything after the first
 * `=`, unquoted). ECS's agent downloads them before the container starts, with the task's execution
 * role; a file it cannot read stops the task (TaskFailedToStart, ResourceInitializationError).
 */

export interface EnvironmentFileLocation {
  bucket: string;
  key: string;
}

/** A file the task could not read: the task stops before its container runs. */
export class EnvironmentFileError extends Error {
  override name = 'EnvironmentFileError';
}

/** Where one `environmentFiles` entry points; RunTask refuses an entry ECS would refuse. */
export function environmentFileLocation(entry: { type?: string; value?: string }): EnvironmentFileLocation {
  const arn = /^arn:aws[\w-]*:s3:::([^/]+)\/(.+\.env)$/.exec(String(entry.value ?? ''));
  if (entry.type !== 's3' || !arn) {
    throw new AwsWireError(
      'ClientException',
      400,
      `Environment file ${String(entry.value)} must be an S3 object ARN of a file named *.env, with type s3.`,
    );
  }
  return { bucket: arn[1] as string, key: arn[2] as string };
}

/** The variables an env file's text sets. */
export function parseEnvironmentFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    env[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return env;
}

/** Every file's variables, later files over earlier ones; a file that cannot be read stops the task. */
export async function readEnvironmentFiles(
  files: EnvironmentFileLocation[],
  read: ((bucket: string, key: string) => Promise<string>) | undefined,
): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const file of files) {
    if (!read) throw new EnvironmentFileError('ResourceInitializationError: env files are not readable here');
    let text: string;
    try {
      text = await read(file.bucket, file.key);
    } catch (err) {
      throw new EnvironmentFileError(
        `ResourceInitializationError: failed to download env files: s3://${file.bucket}/${file.key}: ${String(
          (err as Error).name ?? err,
        )}`,
      );
    }
    Object.assign(env, parseEnvironmentFile(text));
  }
  return env;
}

/** Reads an env file's object through `client` (signed, as the execution role's read is). */
export function objectReader(client: S3Client): (bucket: string, key: string) => Promise<string> {
  return async (bucket, key) => {
    const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return (await out.Body?.transformToString('utf8')) ?? '';
  };
}

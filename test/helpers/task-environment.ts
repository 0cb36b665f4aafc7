import type { RunTaskCommandInput } from '@aws-sdk/client-ecs';
import {
  environmentFileLocation,
  parseEnvironmentFile,
} from '../../functions/emulator/ecs-environment-files.ts';

/**
 * The environment a RunTask's container gets, as ECS's agent makes it: the env files its overrides
 * name (read through `read`, by key: a test's stand-in for the bucket), under the variables set
 * directly.
 */
export function taskEnvironment(
  input: RunTaskCommandInput | undefined,
  read: (key: string) => string | Buffer | undefined,
): Record<string, string> {
  const override = input?.overrides?.containerOverrides?.[0];
  const env: Record<string, string> = {};
  for (const file of override?.environmentFiles ?? []) {
    const { key } = environmentFileLocation({ type: file.type, value: file.value });
    const text = read(key);
    if (text === undefined) throw new Error(`no env file at ${key}`);
    Object.assign(env, parseEnvironmentFile(String(text)));
  }
  for (const e of override?.environment ?? []) env[String(e.name)] = String(e.value);
  return env;
}

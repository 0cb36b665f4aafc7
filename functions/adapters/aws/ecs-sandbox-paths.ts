/**
 * The path checks of the ECS sandbox (functions/adapters/aws/ecs-sandbox.ts): the files a session
 * opens with and the paths its file operations name must be plain paths inside the working
 * directory.
 */
import { SandboxPathError } from '../../shared/sandbox-conventions.ts';

/** safeRelativePath for the file operations: a refusal is a SandboxPathError. */
export function checkedPath(path: string): string {
  try {
    return safeRelativePath(path);
  } catch (err) {
    throw new SandboxPathError((err as Error).message);
  }
}

/** A path relative to the working directory, normalised; absolute or escaping paths are refused. */
export function safeRelativePath(path: string): string {
  if (typeof path !== 'string' || path.includes('\0') || path.includes('\\') || path.startsWith('/')) {
    throw new Error(`ECS sandbox: refused path ${JSON.stringify(path)}`);
  }
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.length === 0 || parts.includes('..')) {
    throw new Error(`ECS sandbox: refused path ${JSON.stringify(path)}`);
  }
  return parts.join('/');
}

import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../bin/agenthost.ts', import.meta.url));

export interface RunningPlatform {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; stdout: string }>;
}

/** Starts `agenthost start` as its own process and waits for the line that names its URL. */
export async function startPlatformProcess(env: Record<string, string>): Promise<RunningPlatform> {
  const child = spawn(process.execPath, [CLI, 'start'], {
    env: { ...process.env, PORT: '0', PLATFORM_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    err += d;
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`platform did not start in 20 s:\n${out}\n${err}`)),
      20_000,
    );
    const check = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        child.stdout?.off('data', check);
        resolve(m[1]);
      }
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`platform exited with ${code}:\n${out}\n${err}`));
    });
  });
  return {
    child,
    url,
    stdout: () => out,
    async stop(signal = 'SIGTERM') {
      const exited = once(child, 'exit');
      child.kill(signal);
      const [code] = (await exited) as [number | null];
      return { code, stdout: out };
    },
  };
}

/** Runs the CLI to completion. */
export async function runCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, PLATFORM_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

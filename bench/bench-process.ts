import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

/* The processes a bench starts (the platform, a fake model, a peer gateway) and stops. */

/**
 * Starts `args` with node (under `launcher`, a command that runs node, such as Valgrind, when
 * given); resolves once it prints "listening on <url>" (or the first line, for the fake).
 */
export async function startProcess(
  args: string[],
  env: Record<string, string>,
  firstLine = false,
  launcher: string[] = [],
): Promise<{ child: ChildProcess; url: string }> {
  const [command, ...prefix] = [...launcher, process.execPath];
  const child = spawn(command as string, [...prefix, ...args], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  const pattern = firstLine ? /^(http:\/\/\S+)\n/ : /listening on (http:\/\/\S+)/;
  while (!pattern.test(out)) {
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, url: (pattern.exec(out) as RegExpExecArray)[1] as string };
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.stdin?.end();
  child.kill('SIGTERM');
  await once(child, 'exit');
}

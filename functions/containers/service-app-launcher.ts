import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { extractBundle } from '../shared/bundle-archive/extract.ts';
import { detectEntrypoint, ENTRYPOINT_SCAN, installCommand } from '../shared/entrypoint.ts';
import { LogLineCutter } from '../shared/log-line-cutter.ts';
import { redactSecrets } from '../shared/redact-secrets.ts';
import {
  APP_DIR_ENV,
  BUNDLE_FORMAT_ENV,
  BUNDLE_URL_ENV,
  COMMAND_ENV,
  GATEWAY_PORT,
  INSTALL_FAILED_EXIT,
  LAUNCH_FAILED_EXIT,
  LAUNCHER_ENV,
  NO_ENTRYPOINT_EXIT,
  PORT_CONFLICT_EXIT,
  SECRET_NAMES_ENV,
} from './service-protocol.ts';

/**
 * The app container's launcher (docs/services.md), loaded and started by SERVICE_APP_BOOTSTRAP.
 * Bundled by esbuild into one CommonJS file (lib/container-programs.ts) that the platform uploads
 * on every start. It does what the local service host does, with the same code: downloads the
 * bundle and unpacks it with extractBundle (the local sandbox's), picks the entrypoint
 * (AGENTHOST_COMMAND, else detectEntrypoint), runs installCommand when the bundle declares
 * dependencies, and runs the entrypoint with its output line by line through redactSecrets over
 * the values of the variables named in AGENTHOST_SECRET_NAMES (encoded forms included, as
 * locally). Exits with the app's status; PORT_CONFLICT_EXIT when the app failed on port 8080;
 * NO_ENTRYPOINT_EXIT, INSTALL_FAILED_EXIT or LAUNCH_FAILED_EXIT when it never started.
 */

const note = (message: string) => process.stderr.write(`[platform] ${message}\n`);

class LaunchError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number) {
    super(message);
    this.exitCode = exitCode;
  }
}

async function download(url: string): Promise<Buffer> {
  const res = await fetch(url);
  if (!res.ok) throw new LaunchError(`bundle download failed: HTTP ${res.status}`, LAUNCH_FAILED_EXIT);
  return Buffer.from(await res.arrayBuffer());
}

/**
 * Copies a stream to `to` line by line, each line redacted; `onLine` sees the raw line first.
 * Resolves when the stream ends.
 */
function pipeLines(
  from: Readable,
  to: Writable,
  secrets: Record<string, string>,
  onLine: (line: string) => void,
): Promise<void> {
  return new Promise((resolve) => {
    // Cut as a local service's lines are (shared/log-line-cutter.ts), so both show the same line,
    // and a line that never ends costs 16 KiB here, not all it printed.
    const cutter = new LogLineCutter(secrets);
    const write = (line: string) => {
      onLine(line);
      to.write(`${redactSecrets(line, secrets)}\n`);
    };
    from.on('data', (chunk: Buffer) => {
      for (const line of cutter.push(chunk)) write(line);
    });
    from.on('close', () => {
      const rest = cutter.end();
      if (rest) write(rest);
      resolve();
    });
  });
}

/** Runs `command` in the app directory with its output redacted; resolves with its status. */
function runShell(
  command: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  secrets: Record<string, string>,
  onLine: (line: string) => void = () => {},
): Promise<number | null> {
  // Its own process group, so a stop (ECS sends SIGTERM) reaches everything the command started.
  const child = spawn('/bin/sh', ['-c', command], {
    cwd,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const forward = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  };
  process.on('SIGTERM', forward);
  const piped = Promise.all([
    pipeLines(child.stdout, process.stdout, secrets, onLine),
    pipeLines(child.stderr, process.stderr, secrets, onLine),
  ]);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      process.off('SIGTERM', forward);
      // Killed by a signal: the shell's convention, 128 + its number (143 for SIGTERM).
      void piped.then(() => resolve(code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : null)));
    });
  });
}

async function launch(): Promise<number> {
  const env = process.env;
  const root = env[APP_DIR_ENV] || '/tmp/app';
  const url = env[BUNDLE_URL_ENV];
  const format = env[BUNDLE_FORMAT_ENV] === 'zip' ? 'zip' : 'tar.gz';
  const override = env[COMMAND_ENV] || null;
  const secrets: Record<string, string> = {};
  for (const name of (env[SECRET_NAMES_ENV] ?? '').split(',').filter(Boolean)) {
    const value = env[name];
    if (value) secrets[name] = value;
  }
  // The app sees its own variables, not the launcher's.
  const appEnv: NodeJS.ProcessEnv = { ...env, PYTHONPATH: '.python-packages' };
  for (const name of LAUNCHER_ENV) delete appEnv[name];

  if (!url) throw new LaunchError(`${BUNDLE_URL_ENV} is not set`, LAUNCH_FAILED_EXIT);
  try {
    await extractBundle(await download(url), format, root);
  } catch (err) {
    if (err instanceof LaunchError) throw err;
    throw new LaunchError(`the bundle could not be unpacked: ${(err as Error).message}`, LAUNCH_FAILED_EXIT);
  }
  const files = readdirSync(root);
  const read = (file: string) => (files.includes(file) ? readFileSync(join(root, file), 'utf8') : undefined);
  const pkg = read('package.json');
  const command = override ?? detectEntrypoint(files, pkg);
  if (!command) {
    throw new LaunchError(
      `no entrypoint: no command given, no run_command, and none of ${ENTRYPOINT_SCAN.map((e) => e.file).join(', ')} (nor a package.json start script) in the bundle`,
      NO_ENTRYPOINT_EXIT,
    );
  }
  const install = installCommand(pkg, read('requirements.txt'));
  if (install) {
    note(`installing dependencies: ${install}`);
    const status = await runShell(install, root, appEnv, secrets);
    if (status !== 0) {
      throw new LaunchError(`dependency install failed (exit ${status})`, INSTALL_FAILED_EXIT);
    }
  }
  note(`starting: ${command}`);
  let conflict = false;
  const status = await runShell(command, root, appEnv, secrets, (line) => {
    if (line.includes('EADDRINUSE') && line.includes(String(GATEWAY_PORT))) conflict = true;
  });
  if (conflict) {
    note(`port ${GATEWAY_PORT} belongs to the service gateway; listen on $PORT`);
    return PORT_CONFLICT_EXIT;
  }
  return status ?? 1;
}

/** The bootstrap's call: launches the app and ends the process with the status that says how. */
export async function run(): Promise<void> {
  let status: number;
  try {
    status = await launch();
  } catch (err) {
    note(String((err as Error)?.message ?? err).slice(0, 1000));
    status = err instanceof LaunchError ? err.exitCode : LAUNCH_FAILED_EXIT;
  }
  process.exit(status);
}

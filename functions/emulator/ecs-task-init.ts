import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';

/**
 * What runs first inside an emulated multi-container ECS task (ecs-service-emulator.ts): the
 * task's containers share this one sandbox, and so one network namespace, as awsvpc tasks share
 * their ENI and its localhost. Given the containers on stdin (their commands, environments,
 * essential flags, dependsOn and health checks), it starts them in dependency order, runs their
 * health checks, and stops the rest when an essential container exits (SIGTERM to each container's
 * first process, SIGKILL to what is left after the stop timeout), as the ECS agent does. A stop
 * asked by the host is a file it names (spec.stopFile) appearing in the working directory.
 *
 * It reports on stdout, one JSON object a line, so a container's output cannot pass for a report:
 * `{"log": name, "line": …}` for every output line of a container, `{"started": name}`,
 * `{"health": name, "status": "HEALTHY" | "UNHEALTHY"}`, `{"exited": name, "code": n}`.
 *
 * It runs under the sandbox's node with type stripping, so it imports node built-ins only.
 */

export interface InitContainer {
  name: string;
  command: string[];
  env: Record<string, string>;
  essential: boolean;
  dependsOn: { containerName: string; condition: string }[];
  healthCheck?: {
    command: string[];
    intervalMs: number;
    timeoutMs: number;
    retries: number;
    startPeriodMs: number;
  };
}

export interface InitSpec {
  containers: InitContainer[];
  /** Base environment of every container (PATH and the like). */
  baseEnv: Record<string, string>;
  stopTimeoutMs: number;
  /** The host asks for a stop by creating this file (relative to the working directory). */
  stopFile: string;
}

const report = (o: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(o)}\n`);

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: the task's init process: its containers' starts, health checks and stop share one state
async function main(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  const spec = JSON.parse(Buffer.concat(chunks).toString('utf8')) as InitSpec;
  const children = new Map<string, ChildProcess>();
  const started = new Set<string>();
  const healthy = new Set<string>();
  const exited = new Map<string, number>();
  let stopping = false;

  const stopAll = () => {
    if (stopping) return;
    stopping = true;
    for (const child of children.values()) child.kill('SIGTERM');
    setTimeout(() => {
      for (const child of children.values()) {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }, spec.stopTimeoutMs).unref();
  };

  const healthLoop = (c: InitContainer) => {
    const hc = c.healthCheck;
    if (!hc) return;
    const since = Date.now();
    let failures = 0;
    let status: string | undefined;
    const run = () => {
      if (stopping || exited.has(c.name)) return;
      const [kind, ...rest] = hc.command;
      const argv =
        kind === 'CMD-SHELL' ? ['/bin/sh', '-c', rest.join(' ')] : kind === 'CMD' ? rest : hc.command;
      const probe = spawn(argv[0] as string, argv.slice(1), {
        env: { ...spec.baseEnv, ...c.env },
        stdio: 'ignore',
      });
      const timer = setTimeout(() => probe.kill('SIGKILL'), hc.timeoutMs);
      probe.on('error', () => undefined);
      probe.on('close', (code) => {
        clearTimeout(timer);
        if (code === 0) failures = 0;
        else if (Date.now() - since >= hc.startPeriodMs || status === 'HEALTHY') failures++;
        const next = code === 0 ? 'HEALTHY' : failures >= hc.retries ? 'UNHEALTHY' : status;
        if (next && next !== status) {
          status = next;
          if (next === 'HEALTHY') healthy.add(c.name);
          else healthy.delete(c.name);
          report({ health: c.name, status: next });
          startReady();
        }
        setTimeout(run, hc.intervalMs).unref();
      });
    };
    setTimeout(run, Math.min(hc.intervalMs, 500)).unref();
  };

  const start = (c: InitContainer) => {
    const [file, ...args] = c.command;
    const child = spawn(file as string, args, {
      env: { ...spec.baseEnv, ...c.env },
      // Its own process group: the final SIGKILL reaches everything the container started.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.set(c.name, child);
    started.add(c.name);
    for (const stream of [child.stdout, child.stderr]) {
      if (stream) createInterface({ input: stream }).on('line', (line) => report({ log: c.name, line }));
    }
    child.on('error', (err) => report({ log: c.name, line: `CannotStartContainerError: ${err.message}` }));
    child.on('close', (code, signal) => {
      const status = code ?? 128 + (signal === 'SIGKILL' ? 9 : signal === 'SIGTERM' ? 15 : 1);
      exited.set(c.name, status);
      children.delete(c.name);
      report({ exited: c.name, code: status });
      if (c.essential) stopAll();
      if (children.size === 0 && (stopping || exited.size === spec.containers.length)) process.exit(0);
      startReady();
    });
    report({ started: c.name });
    healthLoop(c);
  };

  const ready = (c: InitContainer) =>
    c.dependsOn.every((d) => {
      if (d.condition === 'HEALTHY') return healthy.has(d.containerName);
      if (d.condition === 'COMPLETE') return exited.has(d.containerName);
      if (d.condition === 'SUCCESS') return exited.get(d.containerName) === 0;
      return started.has(d.containerName);
    });
  function startReady(): void {
    if (stopping) return;
    let progress = true;
    while (progress) {
      progress = false;
      for (const c of spec.containers) {
        if (!started.has(c.name) && ready(c)) {
          start(c);
          progress = true;
        }
      }
    }
  }

  const watch = setInterval(() => {
    if (existsSync(spec.stopFile)) {
      clearInterval(watch);
      stopAll();
      if (children.size === 0) process.exit(0);
    }
  }, 100);
  startReady();
}

main().catch((err: unknown) => {
  process.stderr.write(`ecs task init failed: ${String((err as Error)?.stack ?? err)}\n`);
  process.exit(1);
});

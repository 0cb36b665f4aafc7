#!/usr/bin/env node
/**
 * `npm run bench:cli-start`: how long a command of the installed CLI takes to
 * start and end, against Node's own start (`node -e 0`) on the same Node in the same run. The CLI
 * is packed and installed as a user does (scripts/cli-pack.ts, `npm install -g --prefix` into a
 * temporary prefix), and timed on the machine's own Node (the first `node` on PATH outside
 * node_modules, 20 on the project's machines) and on the pinned one, with the CLI run from source
 * in the clone (bin/agenthost.ts on the pinned Node, `npm run agenthost`) as its peer. Commands:
 * `--version`, and `tasks list` against a local platform started for the bench (`npm start`'s
 * command on a temporary data dir).
 *
 * Per repeat, in an order rotated per repeat after one uncounted run of each (the page cache, and
 * each Node's code cache for the CLI, which the CLI keeps per user: here a temporary one), each
 * command is one fresh process, run by `sh`, which then reads its own /proc/<pid>/stat: the
 * children's CPU time (cutime + cstime) is the command's user plus system time (commandCpu,
 * bench/proc-stats.ts). Medians over the repeats. Results go to docs/performance.md.
 *
 *   npm run bench:cli-start              BENCH_REPEATS=n (default 15); --no-write to only print
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packCli } from '../scripts/cli-pack.ts';
import { machineNode } from '../test/helpers/machine-node.ts';
import { startProcess, stop } from './bench-process.ts';
import { platformStartArgs } from './platform-command.ts';
import { commandCpu } from './proc-stats.ts';
import { machineLine, median, writeReport } from './report.ts';

const REPEATS = Number(process.env.BENCH_REPEATS ?? 15);
/** The target: a command of the installed CLI starts (and here ends) within 0.5 s. */
const TARGET_MS = 500;
const root = fileURLToPath(new URL('..', import.meta.url));

const home = mkdtempSync(join(tmpdir(), 'agenthost-bench-cli-'));
/** A timed command's stderr, shown if it fails. */
const errors = join(home, 'stderr');

interface Row {
  node: string;
  label: string;
  argv: string[];
  /** The floor row this row is compared with: the same Node's `node -e 0`. */
  floor?: Row;
  wall: number[];
  cpu: number[];
}

/** Runs `argv` with `env`; answers its wall time and its CPU time, in ms (bench/proc-stats.ts, commandCpu). */
async function timed(argv: string[], env: Record<string, string>): Promise<{ wall: number; cpu: number }> {
  const t = await commandCpu(argv, { env, stderr: errors });
  if (t.exit !== 0) throw new Error(`${argv.join(' ')} exited ${t.exit}: ${readFileSync(errors, 'utf8')}`);
  return { wall: t.wallMs, cpu: t.cpuMs };
}

const started = Date.now();
/** The machine's load when the run starts: wall times on a shared machine scale with it. */
const loadAtStart = loadavg()[0] ?? 0;
let platform: Awaited<ReturnType<typeof startProcess>> | undefined;
try {
  const tarball = await packCli(home);
  const prefix = join(home, 'prefix');
  execFileSync(
    'npm',
    ['install', '--global', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', tarball],
    {
      stdio: 'ignore',
    },
  );
  const dataDir = join(home, 'data');
  platform = await startProcess(platformStartArgs(root), {
    PORT: '0',
    PLATFORM_DATA_DIR: dataDir,
    PLATFORM_LOG_LEVEL: 'warn',
  });
  const key = readFileSync(join(dataDir, 'admin-api-key'), 'utf8').trim();
  const installed = join(prefix, 'bin', 'agenthost');
  const pinned = process.execPath;
  const machine = machineNode();
  const nodes = [...(machine && realpathSync(machine) !== realpathSync(pinned) ? [machine] : []), pinned];
  const versionOf = (node: string) => execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  const rows: Row[] = [];
  const envs = new Map<Row, Record<string, string>>();
  for (const node of nodes) {
    const env: Record<string, string> = {
      HOME: home,
      XDG_CACHE_HOME: join(home, 'cache'),
      XDG_CONFIG_HOME: join(home, 'config'),
      PATH: [dirname(node), '/usr/local/bin', '/usr/bin', '/bin'].join(delimiter),
      AGENTHOST_URL: platform.url,
      AGENTHOST_API_KEY: key,
    };
    const v = versionOf(node);
    const floor: Row = {
      node: v,
      label: '`node -e 0` (the floor)',
      argv: [node, '-e', '0'],
      wall: [],
      cpu: [],
    };
    const add = (label: string, argv: string[]) => {
      const row: Row = { node: v, label, argv, floor, wall: [], cpu: [] };
      rows.push(row);
      envs.set(row, env);
    };
    rows.push(floor);
    envs.set(floor, env);
    add('installed: `agenthost --version`', [installed, '--version']);
    add('installed: `agenthost tasks list`', [installed, 'tasks', 'list']);
    if (node === pinned) {
      const source = [node, '--max-semi-space-size=16', join(root, 'bin', 'agenthost.ts')];
      add('from source: `--version`', [...source, '--version']);
      add('from source: `tasks list`', [...source, 'tasks', 'list']);
    }
  }
  for (const row of rows) await timed(row.argv, envs.get(row) as Record<string, string>);
  for (let r = 0; r < REPEATS; r++) {
    for (let i = 0; i < rows.length; i++) {
      const row = rows[(i + r) % rows.length] as Row;
      const t = await timed(row.argv, envs.get(row) as Record<string, string>);
      row.wall.push(t.wall);
      row.cpu.push(t.cpu);
    }
  }

  const ms = (n: number) => n.toFixed(0);
  const lines = rows.map((row) => {
    const wall = median(row.wall);
    const cpu = median(row.cpu);
    const over = row.floor
      ? ` ${ms(wall - median(row.floor.wall))} | ${ms(cpu - median(row.floor.cpu))} |`
      : ' | |';
    return `| ${row.node} | ${row.label} | ${ms(wall)} | ${ms(cpu)} |${over}`;
  });
  const commands = rows.filter((r) => r.label.startsWith('installed'));
  const worst = Math.max(...commands.map((r) => median(r.wall)));
  const table = [
    `${machineLine()}; run ${new Date().toISOString().slice(0, 10)}; \`npm run bench:cli-start\` (${REPEATS} repeats, commands in an order rotated per repeat after one uncounted run of each, one fresh process per run, ${Math.round((Date.now() - started) / 1000)} s, load average ${loadAtStart.toFixed(1)} at its start and ${(loadavg()[0] ?? 0).toFixed(1)} at its end). Medians over the repeats, in ms; "over the floor" subtracts the same Node's \`node -e 0\` median.`,
    '',
    '| Node | command | wall ms | CPU ms | wall over the floor | CPU over the floor |',
    '| --- | --- | ---: | ---: | ---: | ---: |',
    ...lines,
    '',
    `Target: a command of the installed CLI within ${TARGET_MS} ms: ${worst <= TARGET_MS ? 'met' : 'not met'} (the slowest installed row's median wall time: ${ms(worst)} ms).`,
  ].join('\n');
  process.stdout.write(`${table}\n`);
  await writeReport('cli-start', 'CLI start', table);
} finally {
  if (platform) await stop(platform.child);
  rmSync(home, { recursive: true, force: true });
}

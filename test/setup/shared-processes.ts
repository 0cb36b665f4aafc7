/**
 * Test files that share a process under `npm test`: node:test's run() gives every file a process of
 * its own, and each of those processes loads Node's TypeScript stripper and the platform's modules
 * again before its first test, about a second of CPU a file: more than most unit files spend on
 * their tests. Files of the directories below run instead a group at a time in one process, from an
 * entry file that imports them in order: their tests register as they would in a process of their
 * own, and a failure still names the test's own file and line. The CDK's files share more than
 * modules: the default stacks are synthesized once a process (test/helpers/synthesized-stacks.ts).
 *
 * What a file may not do to share a process: hooks at its top level that run per test
 * (`beforeEach`/`afterEach` there would run around every other file's tests too), mocks of a
 * process-wide thing (an AWS SDK client class, a global, the timers), changes to process.env, or
 * counts of its own process's (memory, write calls, child processes: the files before it in the
 * group may leave theirs running until the process ends, since a file's top-level `after` runs
 * then). Such a file is listed in ALONE and keeps a process of its own. One write to process.env
 * is shared knowingly: the placeholder AWS credentials (`??=`) that test/helpers/platform.ts and
 * test/cli/cli-aws.test.ts give the SDK's default chain for DynamoDB Local, whose values no engine
 * here reads. test/project/shared-processes.test.ts holds the rule against every file.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Directories whose files share processes, a group of at most GROUP_SIZE files each. */
export const SHARED_DIRS = [
  'test/core/',
  'test/edge/',
  'test/api/',
  'test/adapters/',
  'test/emulator/',
  'test/jobs/',
  'test/sdk/',
  'test/project/',
  'test/cdk/',
  // One build of the dashboard and one Chromium for all of them (test/helpers/dashboard.ts).
  'test/dashboard/',
  'test/cli/',
  'test/contract/',
  'test/platform/',
];

/** Whether `file` is one of those directories'. */
export const inSharedDir = (file: string) => SHARED_DIRS.some((d) => file.startsWith(d));

/** Files of those directories that keep a process of their own, and why. */
export const ALONE: Record<string, string> = {
  'test/adapters/direct-prompt-answers.test.ts': 'beforeEach at its top level',
  'test/adapters/direct-prompt-call.test.ts': 'beforeEach at its top level',
  'test/adapters/llm-gateway.test.ts': 'beforeEach at its top level',
  'test/adapters/ecs-sandbox-runner.test.ts': 'mocks the AWS SDK clients (beforeEach at its top level)',
  'test/adapters/ecs-sandbox-start-failures.test.ts':
    'mocks the AWS SDK clients (beforeEach at its top level)',
  'test/adapters/ecs-sandbox.test.ts': 'mocks the AWS SDK clients (beforeEach at its top level)',
  'test/adapters/dynamodb-transient-retry.test.ts': 'mocks the AWS SDK clients',
  'test/adapters/ecs-service-runner.test.ts': 'mocks the AWS SDK clients',
  'test/adapters/ecs-service-task-programs.test.ts':
    'mocks the AWS SDK clients (test/helpers/ecs-service-bench.ts)',
  'test/adapters/ecs-service-events.test.ts': 'mocks the AWS SDK clients (test/helpers/ecs-service-bench.ts)',
  'test/adapters/runner-capacity.test.ts': 'mocks the AWS SDK clients',
  'test/adapters/warm-pool-top-up.test.ts': 'mocks the AWS SDK clients',
  'test/jobs/schedule-firing.test.ts': 'mocks the AWS SDK clients',
  'test/emulator/lambda-api-emulator.test.ts': 'afterEach at its top level',
  'test/emulator/scheduler-emulator.test.ts': 'afterEach at its top level',
  'test/edge/body-memory.test.ts': 'measures the process’s own memory',
  'test/adapters/sandbox-isolation.test.ts': 'counts the sandbox spawners its own process started',
  'test/adapters/sqlite-group-commit.test.ts': 'counts its own process’s write calls',
  'test/project/bench-report.test.ts': 'changes process.env',
  'test/sdk/sdk-traceparent.test.ts': 'changes process.env',
  'test/cdk/lambda-assets.test.ts': 'changes process.env',
  'test/platform/config.test.ts': 'mocks the AWS SDK clients',
  'test/platform/provider-keys.test.ts': 'mocks the AWS SDK clients',
  'test/platform/data-dir-lock.test.ts': 'counts its own process’s children',
  'test/contract/bundle-store-contract.test.ts': 'mocks the AWS SDK clients',
  'test/contract/dynamodb-store-requests.test.ts': 'mocks the AWS SDK clients',
  'test/contract/vault-contract.test.ts': 'mocks the AWS SDK clients',
};

/** At most this many files in one process: their tests run one file after another there. */
const GROUP_SIZE = 12;

/**
 * The files to hand to run(), in the order given: for each file that keeps its own process an
 * entry file of its own, and for the others an entry file per group (written under `dir`) that
 * imports the group's files, in the place of the group's first file. Every entry ends by guarding
 * its process against outliving its tests (test/setup/linger-guard.ts).
 */
export function groupIntoProcesses(files: string[], root: string, dir: string): string[] {
  const groups = new Map<string, string[]>();
  const out: string[] = [];
  for (const file of files) {
    const shared = SHARED_DIRS.find((d) => file.startsWith(d));
    if (!shared || ALONE[file] !== undefined) {
      out.push(file);
      continue;
    }
    // The group's place in the order, kept by its directory's name until its entries are written.
    if (!groups.has(shared)) out.push(shared);
    const group = groups.get(shared) ?? [];
    group.push(file);
    groups.set(shared, group);
  }
  mkdirSync(dir, { recursive: true });
  // The guard is called in the entry's body, which runs once every file it imports has been
  // evaluated (their top-level awaits included): every test of the entry is declared by then.
  const guard = pathToFileURL(join(root, 'test', 'setup', 'linger-guard.ts')).href;
  const writeEntry = (name: string, part: string[]) => {
    const entry = join(dir, `${name}.test.mjs`);
    writeFileSync(
      entry,
      [
        ...part.map((f) => `import ${JSON.stringify(pathToFileURL(join(root, f)).href)};`),
        `import { guardAgainstLingering } from ${JSON.stringify(guard)};`,
        'guardAgainstLingering();',
        '',
      ].join('\n'),
    );
    return entry;
  };
  return out.flatMap((file) => {
    const group = groups.get(file);
    // A file of its own: its entry is named for it (test-e2e-schedules.test.mjs).
    if (!group) return [writeEntry(file.replaceAll('/', '-').replace(/\.test\.ts$/, ''), [file])];
    // Even groups, none over GROUP_SIZE.
    const count = Math.ceil(group.length / GROUP_SIZE);
    const size = Math.ceil(group.length / count);
    return Array.from({ length: count }, (_, i) =>
      writeEntry(
        `${file.replaceAll('/', '-').replace(/-$/, '')}-${i + 1}`,
        group.slice(i * size, (i + 1) * size),
      ),
    );
  });
}

/**
 * The ECS sandbox's test bench (test/adapters/ecs-sandbox*.test.ts): ECS and S3 mocked
 * (aws-sdk-client-mock), a presigner that records what it signed, the runner as the stack bundles
 * it, an EcsSandbox and a session spec to open, and what the mocked S3 was given. A file resets
 * the mocks before each test with `resetSandboxMocks`.
 */
import assert from 'node:assert/strict';
import { DescribeTasksCommand, ECSClient, RunTaskCommand, StopTaskCommand } from '@aws-sdk/client-ecs';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { EcsSandbox } from '../../functions/adapters/aws/ecs-sandbox.ts';
import type { ExecCommand, RunManifest, RunResult } from '../../functions/containers/sandbox-protocol.ts';
import { DEFAULT_SANDBOX_LIMITS, type SessionSpec } from '../../functions/ports/sandbox.ts';
import { buildContainerProgram } from '../../lib/container-programs.ts';

export const ecsMock = mockClient(ECSClient);
export const s3Mock = mockClient(S3Client);

export const TASK_ARN = 'arn:aws:ecs:eu-west-1:123456789012:task/agenthost-sandbox/0123456789abcdef';
export const TASK_DEFINITION = 'arn:aws:ecs:eu-west-1:123456789012:task-definition/AgenthostSandbox:7';
export const SECRET = 'sk-live-very-secret-value';
export const INPUTS_KEY = 'arn:aws:kms:eu-west-1:123456789012:key/0b7e0000-0000-4000-8000-000000000001';

/** The runner as the stack bundles it into the run paths' assets (lib/container-programs.ts). */
export const RUNNER = buildContainerProgram('sandbox-runner');

/** URLs that say what was signed; TTLs recorded apart (they depend on the clock). */
export const signed: { method: string; key: string; ttl: number }[] = [];
export const presign = async (method: 'GET' | 'PUT', key: string, ttl: number) => {
  signed.push({ method, key, ttl });
  return `https://signed.example/${method}/${key}`;
};

export function sandbox(
  pollMs = 1,
  extra: { maxExecs?: number; describeMs?: number; taskStartMs?: number } = {},
): EcsSandbox {
  return new EcsSandbox({
    cluster: 'agenthost-sandbox',
    taskDefinition: TASK_DEFINITION,
    subnets: ['subnet-a', 'subnet-b'],
    securityGroups: ['sg-1'],
    bucket: 'agenthost-bundles',
    region: 'eu-west-1',
    ecs: new ECSClient({ region: 'eu-west-1' }),
    s3: new S3Client({ region: 'eu-west-1' }),
    presign,
    pollMs,
    maxPollMs: 5,
    describeMs: 1,
    maxExecs: 4,
    runnerSource: RUNNER,
    inputsKey: INPUTS_KEY,
    // No start to wait for: a mocked RunTask answers at once (the refusal below sets its own).
    taskStartMs: 0,
    ...extra,
  });
}

export function spec(overrides: Partial<SessionSpec> = {}): SessionSpec {
  return {
    runId: 'req-0b7e',
    workspaceId: 'ws-42',
    bundle: { data: Buffer.from('bundle-bytes'), format: 'tar.gz' },
    files: [{ path: 'input/01-report.txt', data: Buffer.from('report') }],
    env: { API_TOKEN: SECRET, PLATFORM_RUN_ID: 'req-0b7e' },
    network: 'none',
    limits: DEFAULT_SANDBOX_LIMITS,
    deadlineMs: Date.now() + 60_000,
    ...overrides,
  };
}

export const okResult: RunResult = {
  v: 1,
  exitCode: 0,
  signal: null,
  stdout: '{"ok":true}',
  stdoutTruncated: false,
  stderrTail: 'warming up',
  timedOut: false,
  durationMs: 1234,
};

export const body = (value: unknown) => ({ transformToString: async () => JSON.stringify(value) }) as never;
export const task = (lastStatus: string, extra: Record<string, unknown> = {}) => ({
  tasks: [{ taskArn: TASK_ARN, lastStatus, ...extra }],
});
export const noSuchKey = () => new NoSuchKey({ message: 'no such key', $metadata: {} });

/** Result objects the mocked S3 serves, by key; any other key is NoSuchKey. */
export const results = new Map<string, { value: unknown; version?: string }>();
export const resultKey = (n: number) => `sandbox-results/req-0b7e/exec-${n}.json`;

export function manifestUploaded(): RunManifest {
  const put = s3Mock
    .commandCalls(PutObjectCommand)
    .find((c) => c.args[0].input.Key === 'sandbox-inputs/req-0b7e/run.json');
  assert.ok(put, 'no manifest uploaded');
  assert.equal(put.args[0].input.ContentType, 'application/json');
  return JSON.parse(String(put.args[0].input.Body));
}

/** The command objects written, in order. */
export function commandsUploaded(): { key: string; value: ExecCommand }[] {
  return s3Mock
    .commandCalls(PutObjectCommand)
    .map((c) => c.args[0].input)
    .filter((i) => /\/exec-\d+\.json$/.test(String(i.Key)))
    .map((i) => ({ key: String(i.Key), value: JSON.parse(String(i.Body)) }));
}

/**
 * The mocks as every test starts: S3 keeps what is put (answering a version id), serves `results`
 * (NoSuchKey for any other key), deletes; ECS starts a task that describes as RUNNING and stops.
 */
export function resetSandboxMocks(): void {
  ecsMock.reset();
  s3Mock.reset();
  signed.length = 0;
  results.clear();
  s3Mock.on(PutObjectCommand).callsFake((input: { Key: string }) => ({ VersionId: `v-${input.Key}` }));
  s3Mock.on(DeleteObjectsCommand).resolves({});
  s3Mock.on(GetObjectCommand).callsFake((input: { Key: string }) => {
    const r = results.get(input.Key);
    if (!r) throw noSuchKey();
    return { Body: body(r.value), ContentLength: 200, ...(r.version ? { VersionId: r.version } : {}) };
  });
  ecsMock
    .on(RunTaskCommand)
    .resolves({ tasks: [{ taskArn: TASK_ARN, lastStatus: 'PROVISIONING' }], failures: [] });
  ecsMock.on(DescribeTasksCommand).resolves(task('RUNNING'));
  ecsMock.on(StopTaskCommand).resolves({});
}

/**
 * The Sandbox contract (test/contract/sandbox-contract.ts) against every adapter: bubblewrap, the
 * unisolated opt-out, and the ECS sandbox against the emulated deployment's stand-ins (the ECS
 * emulator runs the task definition's container, the real runner bootstrap, under bubblewrap; S3
 * is s3rver), wired as functions/emulator/emulated-deployment.ts wires them, over a hand-made
 * template holding only the sandbox's task definition. Everything is on loopback.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ECSClient } from '@aws-sdk/client-ecs';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { EcsSandbox } from '../../functions/adapters/aws/ecs-sandbox.ts';
import { BwrapSandbox, UnisolatedSandbox } from '../../functions/adapters/local/bwrap/sandboxes.ts';
import { RUNNER_BOOTSTRAP } from '../../functions/containers/sandbox-protocol.ts';
import { TemplateResolver } from '../../functions/emulator/cloudformation-template.ts';
import { EcsEmulator } from '../../functions/emulator/ecs-emulator.ts';
import { objectReader } from '../../functions/emulator/ecs-environment-files.ts';
import { buildContainerProgram } from '../../lib/container-programs.ts';
import { S3_EMULATOR_CREDENTIALS, startEmulatedS3 } from '../helpers/emulated-aws.ts';
import { processesWith } from '../helpers/process.ts';
import { type SandboxFixture, sandboxContract } from './sandbox-contract.ts';

async function localFixture(
  make: (runsDir: string) => BwrapSandbox | UnisolatedSandbox,
  capabilities: SandboxFixture['capabilities'],
): Promise<SandboxFixture> {
  const dir = await mkdtemp(join(tmpdir(), 'agenthost-sandbox-contract-'));
  const runsDir = join(dir, 'runs');
  return {
    sandbox: make(runsDir),
    capabilities,
    async leftovers(runId) {
      const left: string[] = [];
      if (existsSync(join(runsDir, runId))) left.push(`run directory ${join(runsDir, runId)}`);
      left.push(...(await processesWith(join(runsDir, runId))).map((p) => `process ${p}`));
      return left;
    },
    close: () => rm(dir, { recursive: true, force: true }),
  };
}

sandboxContract('bubblewrap', () =>
  localFixture((runsDir) => new BwrapSandbox({ runsDir }), {
    kind: 'bubblewrap',
    workDir: '/work',
    baseEnv: ['PATH', 'HOME', 'LANG', 'TMPDIR'],
    noneIsolatesNetwork: true,
    egress: 'own',
    abort: 'kills-command',
  }),
);

sandboxContract('unisolated', () =>
  localFixture((runsDir) => new UnisolatedSandbox({ runsDir }), {
    kind: 'unisolated',
    workDir: 'host-path',
    baseEnv: ['PATH', 'HOME', 'LANG', 'TMPDIR'],
    noneIsolatesNetwork: false,
    egress: 'host',
    abort: 'kills-command',
  }),
);

const REGION = 'us-east-1';
const ACCOUNT = { region: REGION, accountId: '000000000000' };
const BUCKET = 'contract-bundles';

sandboxContract('ECS (emulated: the ECS emulator running the runner under bubblewrap, s3rver)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agenthost-ecs-contract-'));
  const { s3, endpoint: s3Endpoint } = await startEmulatedS3(dir, BUCKET);
  // Only what the sandbox needs of the stateless stack: its task definition, whose one container
  // runs the bootstrap that downloads the runner (lib/constructs/sandbox-cluster.ts).
  const resolver = new TemplateResolver(
    [
      {
        stackName: 'Contract',
        template: {
          Resources: {
            SandboxTask: {
              Type: 'AWS::ECS::TaskDefinition',
              Properties: {
                Cpu: '1024',
                Memory: '2048',
                ContainerDefinitions: [
                  { Name: 'runner', User: '0', EntryPoint: ['node', '-e', RUNNER_BOOTSTRAP] },
                ],
              },
            },
          },
        },
      },
    ],
    ACCOUNT,
  );
  const tasksDir = join(dir, 'tasks');
  const s3Client = new S3Client({
    region: REGION,
    endpoint: s3Endpoint,
    forcePathStyle: true,
    credentials: S3_EMULATOR_CREDENTIALS,
    requestChecksumCalculation: 'WHEN_REQUIRED',
  });
  const ecs = new EcsEmulator({
    resolver,
    sandbox: new BwrapSandbox({ runsDir: tasksDir }),
    hostPorts: [Number(new URL(s3Endpoint).port)],
    ...ACCOUNT,
    // The task's env file, read as the execution role reads it.
    readObject: objectReader(s3Client),
  });
  const ecsEndpoint = await ecs.listen(0, '127.0.0.1');
  // The emulator's task sandboxes (not .pasta, where pasta's pid files stay).
  const taskDirs = async () => (await readdir(tasksDir).catch(() => [])).filter((d) => !d.startsWith('.'));
  // The S3 emulator makes objects visible only once whole, as S3 does (s3-emulator.ts).
  const ecsClient = new ECSClient({
    region: REGION,
    endpoint: ecsEndpoint,
    credentials: S3_EMULATOR_CREDENTIALS,
  });
  const taskDefinition = String(resolver.resolve(resolver.stack('Contract'), { Ref: 'SandboxTask' }));
  const sandbox = new EcsSandbox({
    cluster: 'contract-sandbox',
    taskDefinition,
    subnets: ['subnet-contract'],
    securityGroups: ['sg-contract'],
    bucket: BUCKET,
    region: REGION,
    ecs: ecsClient,
    s3: s3Client,
    // As createS3Presigner signs, against the S3 stand-in.
    presign: (method, key, ttlSeconds) =>
      getSignedUrl(
        s3Client,
        method === 'GET'
          ? new GetObjectCommand({ Bucket: BUCKET, Key: key })
          : new PutObjectCommand({ Bucket: BUCKET, Key: key }),
        { expiresIn: ttlSeconds },
      ),
    pollMs: 20,
    maxPollMs: 60,
    describeMs: 300,
    runnerSource: buildContainerProgram('sandbox-runner'),
  });
  return {
    sandbox,
    capabilities: {
      kind: 'ecs',
      workDir: '/work',
      baseEnv: ['PATH', 'HOME'],
      noneIsolatesNetwork: true,
      egress: 'refused',
      abort: 'stops-session',
    },
    async leftovers(runId, { afterClose }) {
      const left: string[] = [];
      // s3rver keeps each object as files under its directory, named by the key.
      const stored = await readdir(join(dir, 's3', BUCKET), { recursive: true }).catch(() => []);
      for (const path of stored) {
        if (
          /^sandbox-(inputs|results)\//.test(path) &&
          path.includes(`/${runId}/`) &&
          /_S3rver_object$/.test(path)
        ) {
          left.push(`object ${path}`);
        }
      }
      // The task's sandbox ends once StopTask (or the runner's exit) has reached it.
      for (let i = 0; afterClose && i < 200; i++) {
        if ((await taskDirs()).length === 0) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      left.push(...(await taskDirs()).map((d) => `task directory ${d}`));
      return left;
    },
    async close() {
      await ecs.close();
      ecsClient.destroy();
      s3Client.destroy();
      await s3.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

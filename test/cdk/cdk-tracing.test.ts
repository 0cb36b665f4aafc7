import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { assemblyNestedTemplates, foldNestedStacks } from '../../functions/emulator/nested-stacks.ts';
import { ENV } from '../../functions/shared/env-names.ts';
import { PROJECT_ROOT } from '../../lib/constructs/platform-function.ts';

/**
 * `cdk deploy -c tracing=xray` (lib/tracing.ts; docs/deploy.md, "Traces to X-Ray"): every platform
 * function sends its spans to X-Ray's OTLP endpoint (PLATFORM_TRACES_EXPORT=xray) and its role may
 * (xray:PutSpans, xray:PutSpansForIndexing), with Lambda's active tracing and the stage's tracing on,
 * and no resource added; without the flag, or with `off`, none of the export is there; any other
 * value stops the synthesis. The app is synthesized as the CDK CLI runs it (bin/cdk-app.ts with its
 * context in CDK_CONTEXT_JSON), once per value, with bundling skipped: only the templates matter.
 */

const SERVICES = {
  servicesDomain: 'services.example.com',
  servicesCertificateArn:
    'arn:aws:acm:eu-west-1:123456789012:certificate/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b',
};
const XRAY_EXPORT_ACTIONS = ['xray:PutSpans', 'xray:PutSpansForIndexing'];
const XRAY_ACTIONS = [...XRAY_EXPORT_ACTIONS, 'xray:PutTelemetryRecords', 'xray:PutTraceSegments'];

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
}
interface Statement {
  Action: string | string[];
  Resource: unknown;
  Effect: string;
}

/** bin/cdk-app.ts with `-c <context>`, as `cdk synth` runs it; its exit status, stderr and stateless template. */
function synth(context: Record<string, string>): {
  status: number | null;
  stderr: string;
  template?: { Resources: Record<string, Resource> };
} {
  const outdir = mkdtempSync(join(tmpdir(), 'agenthost-cdk-tracing-'));
  dirs.push(outdir);
  const run = spawnSync(process.execPath, [join(PROJECT_ROOT, 'bin', 'cdk-app.ts')], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
    env: {
      ...process.env,
      CDK_OUTDIR: outdir,
      CDK_CONTEXT_JSON: JSON.stringify({ ...context, 'aws:cdk:bundling-stacks': [] }),
      // CloudFormation's own template checks are test/cdk/cdk.test.ts's: about 4 s each here.
      CDK_VALIDATION: 'false',
    },
  });
  const file = join(outdir, 'AgenthostStateless.template.json');
  return {
    status: run.status,
    stderr: run.stderr,
    // With its nested stacks folded in: the sandbox's and the operations' functions are there.
    ...(existsSync(file)
      ? {
          template: foldNestedStacks(
            JSON.parse(readFileSync(file, 'utf8')),
            assemblyNestedTemplates(outdir),
          ) as never,
        }
      : {}),
  };
}

const actionsOf = (s: Statement) => (Array.isArray(s.Action) ? s.Action : [s.Action]);

/** The platform's Lambdas, each with its environment and every action its role's policies allow on "*". */
function platformFunctions(template: { Resources: Record<string, Resource> }) {
  const resources = Object.entries(template.Resources);
  const anyResourceActions = (roleId: string) =>
    resources
      .filter(([, r]) => r.Type === 'AWS::IAM::Policy')
      .filter(([, r]) => (r.Properties.Roles as { Ref?: string }[]).some((role) => role.Ref === roleId))
      .flatMap(([, r]) => (r.Properties.PolicyDocument as { Statement: Statement[] }).Statement)
      .filter((s) => s.Effect === 'Allow' && s.Resource === '*')
      .flatMap(actionsOf);
  return (
    resources
      .filter(([, r]) => r.Type === 'AWS::Lambda::Function')
      // CDK's BucketDeployment handler (Python) copies the dashboard's build during a deploy: not a
      // platform function, it runs none of the platform's code.
      .filter(([, r]) => String(r.Properties.Runtime).startsWith('nodejs'))
      .map(([id, r]) => {
        const roleId = (r.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
        return {
          id,
          tracing: r.Properties.TracingConfig,
          env: (r.Properties.Environment as { Variables: Record<string, unknown> }).Variables,
          actions: new Set(anyResourceActions(roleId)),
        };
      })
  );
}

const stageOf = (template: { Resources: Record<string, Resource> }) => {
  const stages = Object.values(template.Resources).filter((r) => r.Type === 'AWS::ApiGateway::Stage');
  assert.equal(stages.length, 1);
  return (stages[0] as Resource).Properties;
};

const byDefault = synth(SERVICES);
const xray = synth({ ...SERVICES, tracing: 'xray' });

describe('-c tracing=xray', () => {
  test('synthesizes', () => {
    assert.equal(xray.status, 0, xray.stderr);
    assert.ok(xray.template);
  });

  test('every platform function traces actively and exports its spans to X-Ray, with the grants for it', () => {
    const functions = platformFunctions(xray.template ?? { Resources: {} });
    // The API's modules and the jobs (schedule firing, alert delivery, housekeeping, pool refill,
    // service events): more than twenty.
    assert.ok(functions.length > 20, String(functions.length));
    for (const fn of functions) {
      assert.deepEqual(fn.tracing, { Mode: 'Active' }, fn.id);
      assert.equal(fn.env[ENV.tracesExport], 'xray', fn.id);
      for (const action of XRAY_ACTIONS) assert.ok(fn.actions.has(action), `${fn.id}: ${action}`);
    }
  });

  test('the API stage traces too', () => {
    assert.equal(stageOf(xray.template ?? { Resources: {} }).TracingEnabled, true);
  });

  test('adds no resource to the stateless stack (CloudFormation’s 500 are near: test/cdk/cdk.test.ts)', () => {
    // A function version's logical id is a hash of its configuration, the tracing setting in it.
    const types = (t: typeof xray.template) =>
      Object.entries(t?.Resources ?? {}).map(
        ([id, r]) => `${r.Type === 'AWS::Lambda::Version' ? id.replace(/[0-9a-f]{32}$/, '') : id} ${r.Type}`,
      );
    assert.deepEqual(types(xray.template), types(byDefault.template));
  });
});

describe('without -c tracing, or with tracing=off', () => {
  test('no function exports spans or may write them to X-Ray’s OTLP endpoint', () => {
    assert.equal(byDefault.status, 0, byDefault.stderr);
    const functions = platformFunctions(byDefault.template ?? { Resources: {} });
    assert.ok(functions.length > 20, String(functions.length));
    for (const fn of functions) {
      assert.equal(fn.env[ENV.tracesExport], undefined, fn.id);
      for (const action of XRAY_EXPORT_ACTIONS) assert.ok(!fn.actions.has(action), `${fn.id}: ${action}`);
    }
    const everyAction = Object.values(byDefault.template?.Resources ?? {})
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .flatMap((r) =>
        (r.Properties.PolicyDocument as { Statement: Statement[] }).Statement.flatMap(actionsOf),
      );
    assert.ok(!everyAction.some((a) => XRAY_EXPORT_ACTIONS.includes(a)));
  });

  test('Lambda’s active tracing and the stage’s tracing stay as they were: on', () => {
    for (const fn of platformFunctions(byDefault.template ?? { Resources: {} })) {
      assert.deepEqual(fn.tracing, { Mode: 'Active' }, fn.id);
    }
    assert.equal(stageOf(byDefault.template ?? { Resources: {} }).TracingEnabled, true);
  });

  test('tracing=off is the default: the same template', () => {
    const off = synth({ ...SERVICES, tracing: 'off' });
    assert.equal(off.status, 0, off.stderr);
    assert.deepEqual(off.template, byDefault.template);
  });
});

describe('-c tracing=<anything else>', () => {
  test('stops the synthesis, naming the values it takes', () => {
    const bogus = synth({ tracing: 'bogus' });
    assert.notEqual(bogus.status, 0);
    assert.match(bogus.stderr, /tracing must be one of "off", "xray" \(-c tracing=xray\); got "bogus"/);
    assert.equal(bogus.template, undefined);
  });
});

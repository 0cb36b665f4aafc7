/**
 * The CDK app as a whole (lib/), on its synthesized templates with CloudFormation's validation on:
 * the stateful stack (the table, the bundle bucket), the functions, deployability (no cycle, no
 * stack near CloudFormation's resource limit), cdk-nag, failed events, alarms, the settings every
 * function starts with, and the agent-call timeout. By concern elsewhere: the API (cdk-api), least
 * privilege and secrets (cdk-least-privilege), the sandbox cluster (cdk-sandbox-cluster), schedule
 * firing, service hosting and the run worker (cdk-jobs), the dashboard (cdk-dashboard), the
 * handlers' bundles (handler-bundles).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { App, NestedStack, type Stack, Validations } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { TABLE_SCHEMA } from '../../functions/adapters/aws/table-schema.ts';
import { parseConfig } from '../../functions/platform/config.ts';
import { MODULES } from '../../functions/platform/routes.ts';
import { addAgenthostStacks } from '../../lib/agenthost-app.ts';
import type { ServiceHosting } from '../../lib/constructs/service-hosting.ts';
import { foldedTemplate } from '../helpers/folded-template.ts';
import {
  type CfnResourceJson,
  SERVICES,
  synthesizeStacks,
  templatesApp,
} from '../helpers/synthesized-stacks.ts';

// One synthesis for the whole file, templates only: bundling is skipped. The assets themselves
// (every Lambda's bundle, the dashboard's build) are tested as `cdk synth` writes them, in
// test/cdk/lambda-assets.test.ts; this file builds the handlers it inspects with esbuild itself.
const {
  outdir,
  app,
  stateful,
  stateless,
  statefulTemplate,
  statelessTemplate,
  statelessJson,
  resourcesOfType,
  platformFunctions,
  logicalIdOf,
  functionLogicalId,
} = synthesizeStacks({ validation: true });
after(() => rmSync(outdir, { recursive: true, force: true }));

describe('stateful stack: the single table', () => {
  test('keys, GSIs, on-demand billing, PITR, encryption, TTL and deletion protection match table-schema.ts', () => {
    statefulTemplate.resourceCountIs('AWS::DynamoDB::Table', 1);
    statefulTemplate.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: TABLE_SCHEMA.partitionKey, KeyType: 'HASH' },
        { AttributeName: TABLE_SCHEMA.sortKey, KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
      TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
      DeletionProtectionEnabled: true,
      GlobalSecondaryIndexes: TABLE_SCHEMA.indexes.map((index) => ({
        IndexName: index.name,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      })),
    });
    assert.equal(TABLE_SCHEMA.ttlAttribute, 'ttl');
    assert.deepEqual(
      TABLE_SCHEMA.indexes.map((i) => i.name),
      ['gsi1', 'gsi2'],
    );
  });

  test('the table is retained when the stack is deleted or the table replaced', () => {
    statefulTemplate.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
  });

  test('the table name is an output (for the CLI in AWS mode)', () => {
    statefulTemplate.hasOutput('TableName', {
      Value: { Ref: Match.stringLikeRegexp('^Table') },
      Export: { Name: 'AgenthostStateful-TableName' },
    });
  });
});

describe('stateful stack: the bundle bucket', () => {
  test('encrypted, private, TLS-only, versioned, access-logged and retained', () => {
    const bundleBucketId = stateful.getLogicalId(stateful.bundleBucket.node.defaultChild as never);
    statefulTemplate.hasResource('AWS::S3::Bucket', {
      Properties: Match.objectLike({
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        VersioningConfiguration: { Status: 'Enabled' },
        LoggingConfiguration: Match.objectLike({ DestinationBucketName: Match.anyValue() }),
      }),
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
    // The sandbox's run objects (secret values) are not kept past a day, in any version.
    const bucket = (statefulTemplate.toJSON() as { Resources: Record<string, CfnResourceJson> }).Resources[
      bundleBucketId
    ] as CfnResourceJson;
    const rules = (bucket.Properties.LifecycleConfiguration as { Rules: Record<string, unknown>[] }).Rules;
    for (const prefix of ['sandbox-inputs/', 'sandbox-results/']) {
      assert.deepEqual(
        rules.filter((r) => r.Prefix === prefix).map(({ Prefix, ...rest }) => rest),
        [
          { ExpirationInDays: 1, NoncurrentVersionExpiration: { NoncurrentDays: 1 }, Status: 'Enabled' },
          { ExpiredObjectDeleteMarker: true, Status: 'Enabled' },
        ],
        prefix,
      );
    }
    statefulTemplate.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: bundleBucketId },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });
});

describe('stateless stack: functions', () => {
  const functions = platformFunctions();

  test('exactly one function per module, from functions/http/<module>.ts, plus the six jobs', () => {
    assert.equal(functions.length, MODULES.length + 6);
    const ids = new Set(MODULES.map(functionLogicalId));
    assert.equal(ids.size, MODULES.length);
    for (const id of ids) assert.equal(statelessJson.Resources[id]?.Type, 'AWS::Lambda::Function', id);
  });

  test('arm64, Node.js 22 or newer, active tracing, own log group, AWS-mode environment', () => {
    for (const [id, fn] of functions) {
      const p = fn.Properties;
      assert.deepEqual(p.Architectures, ['arm64'], id);
      const runtime = /^nodejs(\d+)\.x$/.exec(String(p.Runtime));
      assert.ok(runtime && Number(runtime[1]) >= 22, `${id}: ${p.Runtime}`);
      assert.equal(p.Handler, 'index.handler', id);
      assert.deepEqual(p.TracingConfig, { Mode: 'Active' }, id);
      assert.ok((p.LoggingConfig as { LogGroup?: unknown }).LogGroup, id);
      const env = (p.Environment as { Variables: Record<string, unknown> }).Variables;
      assert.equal(env.PLATFORM_MODE, 'aws', id);
      assert.deepEqual(env.PLATFORM_TABLE_NAME, { 'Fn::ImportValue': stateful.exportNames.tableName }, id);
      assert.deepEqual(
        env.PLATFORM_BUNDLE_BUCKET,
        { 'Fn::ImportValue': stateful.exportNames.bundleBucketName },
        id,
      );
    }
    statelessTemplate.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: Match.anyValue() });
  });

  test('no function carries an emulator setting (PLATFORM_EMULATOR_*): the emulator adds them to its own copies', () => {
    // PLATFORM_EMULATOR_LOOPBACK_PORTS lets a function send to loopback ports: a test's receivers,
    // never a real deployment's (functions/emulator/template-functions.ts).
    for (const [id, fn] of functions) {
      const env = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      const emulator = Object.keys(env).filter((name) => name.startsWith('PLATFORM_EMULATOR_'));
      assert.deepEqual(emulator, [], id);
    }
  });

  test('function roles carry no AWS managed policies', () => {
    for (const module of MODULES) {
      const role =
        statelessJson.Resources[
          stateless.getLogicalId(stateless.functions[module].role.node.defaultChild as never)
        ];
      assert.ok(role, module);
      assert.equal(role.Properties.ManagedPolicyArns, undefined, module);
    }
  });
});

describe('deployability', () => {
  // CDK does not look for dependency cycles inside a stack; CloudFormation rejects them at deploy.
  for (const [name, template] of [
    ['AgenthostStateful', statefulTemplate],
    ['AgenthostStateless', statelessTemplate],
  ] as const) {
    test(`${name}: no circular dependency between resources`, () => {
      const resources = (
        template.toJSON() as { Resources: Record<string, { DependsOn?: string | string[] }> }
      ).Resources;
      const edges = new Map<string, Set<string>>();
      const collect = (node: unknown, into: Set<string>) => {
        if (Array.isArray(node)) for (const n of node) collect(n, into);
        else if (node && typeof node === 'object') {
          for (const [k, v] of Object.entries(node)) {
            if (k === 'Ref' && typeof v === 'string' && v in resources) into.add(v);
            else if (k === 'Fn::GetAtt' && Array.isArray(v) && String(v[0]) in resources)
              into.add(String(v[0]));
            else collect(v, into);
          }
        }
      };
      for (const [id, r] of Object.entries(resources)) {
        const deps = new Set<string>([r.DependsOn ?? []].flat());
        collect(r, deps);
        edges.set(id, deps);
      }
      const state = new Map<string, 'visiting' | 'done'>();
      const visit = (id: string, path: string[]): void => {
        if (state.get(id) === 'done') return;
        assert.notEqual(state.get(id), 'visiting', `cycle: ${[...path, id].join(' -> ')}`);
        state.set(id, 'visiting');
        for (const dep of edges.get(id) ?? []) visit(dep, [...path, id]);
        state.set(id, 'done');
      };
      for (const id of edges.keys()) visit(id, []);
    });
  }

  test('no stack holds more than 300 of CloudFormation’s 500 resources, with every option on', () => {
    // One stack would hold well over 300 with every option on, close to the limit of 500: a
    // one-module subtree of the API is one resource (api-resource-tree.ts), and the sandbox
    // (its VPC, cluster, key and the pool's refill) and the operations (alarms, dashboard,
    // housekeeping) are nested stacks: the parent keeps what has a name users or data depend
    // on (the API, the functions the schedules target, the services' load balancer, the secrets).
    const everything = templatesApp(outdir);
    const stacks = addAgenthostStacks(everything, { services: SERVICES, waf: 'on', tracing: 'xray' });
    const count = (stack: Stack) => Object.keys(Template.fromStack(stack).toJSON().Resources).length;
    const nested = stacks.stateless.node.findAll().filter((c): c is NestedStack => c instanceof NestedStack);
    const counts = Object.fromEntries(
      [stacks.stateful, stacks.stateless, ...nested].map((s) => [s.node.path, count(s)]),
    );
    assert.deepEqual(
      nested.map((n) => n.node.id),
      ['SandboxStack', 'OperationsStack', 'RunsStack'],
    );
    for (const [path, n] of Object.entries(counts))
      assert.ok(n <= 300, `${path} has ${n} resources: ${JSON.stringify(counts)}`);
    // Folded, every resource is there once (the nested stacks' own resources aside).
    const folded = Object.keys(foldedTemplate(stacks.stateless).toJSON().Resources).length;
    assert.equal(
      folded,
      (counts[stacks.stateless.node.path] ?? 0) -
        nested.length +
        nested.reduce((a, n) => a + (counts[n.node.path] ?? 0), 0),
    );
  });
});

describe('cdk-nag AwsSolutions and Serverless', () => {
  const ACK_KEY = Validations.ACKNOWLEDGED_RULES_METADATA_KEY;
  const acknowledgedIds = (stack: Stack): Set<string> => {
    const ids = new Set<string>();
    const visit = (c: IConstruct) => {
      for (const entry of c.node.metadata) {
        if (entry.type === ACK_KEY) {
          for (const k of Object.keys(entry.data as object)) ids.add(k.replace(/^annotation::/i, ''));
        }
      }
      for (const child of c.node.children) visit(child);
    };
    visit(stack);
    return ids;
  };

  const PACKS = [AwsSolutionsChecks, ServerlessChecks];
  for (const stack of [stateful, stateless]) {
    test(`${stack.stackName}: no unacknowledged finding, error or warning`, () => {
      const open = PACKS.flatMap((Pack) =>
        new Pack(app)
          .validateScope(stack)
          .violations.map((v) => `${v.severity} ${v.ruleName} at ${v.violatingResources[0]?.constructPath}`),
      );
      assert.deepEqual(open, []);
      // cdk-nag 3 reports through CDK's validation framework, not annotations; any CDK error is still a failure.
      assert.deepEqual(
        Annotations.fromStack(stack).findError('*', Match.stringLikeRegexp('AwsSolutions-.*')),
        [],
      );
      assert.deepEqual(Annotations.fromStack(stack).findError('*', Match.anyValue()), []);
    });

    test(`${stack.stackName}: every acknowledgement matches a real finding`, () => {
      // The same checks with acknowledgements ignored: the findings the design accepts.
      const found = new Set(
        PACKS.flatMap((Pack) => {
          const raw = new Pack(app);
          (raw as unknown as { isAcknowledged: () => boolean }).isAcknowledged = () => false;
          return raw.validateScope(stack).violations.map((v) => v.ruleName);
        }),
      );
      // CDK itself acknowledges some CloudFormation-Validate findings (flow logs, literal AZs): not cdk-nag's.
      const acknowledged = new Set(
        [...acknowledgedIds(stack)].filter((id) => !id.startsWith('CloudFormation-Validate::')),
      );
      assert.deepEqual(
        [...acknowledged].filter((id) => !found.has(id)),
        [],
        'stale acknowledgements',
      );
      assert.deepEqual(
        [...found].filter((id) => !acknowledged.has(id)),
        [],
      );
    });
  }
});

describe('stateless stack: no failed event vanishes (cdk-nag Serverless)', () => {
  const services = stateless.services as ServiceHosting;
  const queue = { 'Fn::GetAtt': [logicalIdOf(stateless.schedules.deadLetters), 'Arn'] };

  test('alert delivery and service events: a failed invocation goes to the dead-letter queue', () => {
    for (const fn of [stateless.schedules.alertsFunction, services.eventsFunction]) {
      statelessTemplate.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
        FunctionName: { Ref: logicalIdOf(fn.function) },
        DestinationConfig: { OnFailure: { Destination: queue } },
      });
    }
  });

  test('the ECS task state-change rule dead-letters what it cannot deliver, to the same queue', () => {
    statelessTemplate.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: Match.objectLike({ 'detail-type': ['ECS Task State Change'] }),
      Targets: [Match.objectLike({ DeadLetterConfig: { Arn: queue } })],
    });
    // EventBridge may send to it: the queue's policy names the rule.
    statelessTemplate.hasResourceProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Principal: { Service: 'events.amazonaws.com' }, Action: 'sqs:SendMessage' }),
        ]),
      },
    });
  });
});

describe('stateless stack: what to watch (docs/deploy.md)', () => {
  test('an alarm on API 5xx, on every function’s errors and on lost cron fires; one dashboard', () => {
    const alarms = resourcesOfType('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
    const functions = platformFunctions().map(([id]) => id);
    const errorAlarms = alarms.filter((a) => a.MetricName === 'Errors' && a.Namespace === 'AWS/Lambda');
    const watched = errorAlarms.map(
      (a) =>
        ((a.Dimensions as { Name: string; Value: { Ref: string } }[])[0] as { Value: { Ref: string } }).Value
          .Ref,
    );
    assert.deepEqual(watched.sort(), functions.sort(), 'every function has an error alarm');
    const api = alarms.filter((a) => a.MetricName === '5XXError' && a.Namespace === 'AWS/ApiGateway');
    assert.equal(api.length, 1);
    const lost = alarms.filter((a) => a.MetricName === 'ApproximateNumberOfMessagesVisible');
    assert.equal(lost.length, 1);
    const [queueAlarm] = lost as [Record<string, unknown>];
    assert.equal(queueAlarm.Threshold, 0);
    assert.deepEqual((queueAlarm.Dimensions as { Value: unknown }[])[0]?.Value, {
      'Fn::GetAtt': [logicalIdOf(stateless.schedules.deadLetters), 'QueueName'],
    });
    assert.equal(alarms.length, functions.length + 2);
    statelessTemplate.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
  });
});

describe('settings (functions/ports/config.ts DEPLOYMENT_SETTINGS)', () => {
  /** A function's environment as it runs: tokens (refs, imports) as plain values, Lambda's region added. */
  const runtimeEnvironment = (vars: Record<string, unknown>) => ({
    AWS_REGION: 'eu-west-1',
    ...Object.fromEntries(
      Object.entries(vars).map(([name, value]) => [
        name,
        typeof value === 'string'
          ? value
          : name.endsWith('_URL')
            ? 'https://x.example.test'
            : `token-${name}`,
      ]),
    ),
  });

  test('every function starts: its environment has what its deployment and capabilities need', () => {
    const functions = resourcesOfType('AWS::Lambda::Function');
    assert.ok(functions.length >= MODULES.length);
    for (const [id, fn] of functions) {
      const vars = (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)
        ?.Variables;
      // The custom resources CDK adds have no platform settings.
      if (vars?.PLATFORM_MODE !== 'aws') continue;
      assert.doesNotThrow(() => parseConfig(runtimeEnvironment(vars)), id);
    }
  });

  test('a function given part of a capability fails at start, naming every missing variable', () => {
    const calls = statelessJson.Resources[functionLogicalId('calls')] as CfnResourceJson;
    const vars = { ...(calls.Properties.Environment as { Variables: Record<string, unknown> }).Variables };
    delete vars.PLATFORM_SANDBOX_SUBNETS;
    delete vars.PLATFORM_SANDBOX_RUNNER_FILE;
    assert.throws(
      () => parseConfig(runtimeEnvironment(vars)),
      /PLATFORM_SANDBOX_SUBNETS: is required when PLATFORM_SANDBOX_CLUSTER is set\n {2}PLATFORM_SANDBOX_RUNNER_FILE: is required/,
    );
  });
});

describe('agent-call timeout (deploy-time setting)', () => {
  const callsMethods = (template: Template) =>
    Object.values(template.toJSON().Resources as Record<string, CfnResourceJson>).filter(
      (r) =>
        r.Type === 'AWS::ApiGateway::Method' &&
        (r.Properties.Integration as { TimeoutInMillis?: number } | undefined)?.TimeoutInMillis !== undefined,
    );
  const moduleFunction = (module: 'calls' | 'mcp') => (stack: typeof stateless, template: Template) =>
    (template.toJSON().Resources as Record<string, CfnResourceJson>)[
      stack.getLogicalId(stack.functions[module].function.node.defaultChild as CfnFunction)
    ] as CfnResourceJson;
  const callsFunction = moduleFunction('calls');

  test('defaults to API Gateway’s 29 s, with the platform deadline one second under it; the call and MCP routes stream', () => {
    const methods = callsMethods(statelessTemplate);
    // The functions of the agent call, the schedule trigger and webhook, and POST /mcp (tools/call),
    // which run agents synchronously too: the four resources of the agent call's path (calls), the
    // trigger and the three of the webhook's path (schedule-runs), and /mcp (api-resource-tree.ts).
    // The ANY methods of shared paths go to the edge function, without one.
    assert.equal(
      methods.length,
      9,
      'only the methods of the functions that run agents have their own timeout',
    );
    const integration = (m: CfnResourceJson) =>
      m.Properties.Integration as { TimeoutInMillis: number; ResponseTransferMode?: string; Uri: unknown };
    const streamed = methods.filter((m) => integration(m).ResponseTransferMode === 'STREAM');
    // The call route and POST /mcp (a tool call with a progress token is a streamed call): their
    // integrations stream (a streamed call runs up to 300 s), through Lambda's response-streaming
    // invocation.
    assert.deepEqual(
      streamed.map((m) => /(Calls|Mcp)Function/.exec(JSON.stringify(integration(m).Uri))?.[1]).sort(),
      ['Calls', 'Calls', 'Calls', 'Calls', 'Mcp'],
    );
    for (const m of streamed) {
      assert.equal(integration(m).TimeoutInMillis, 301_000);
      assert.match(
        JSON.stringify(integration(m).Uri),
        /2021-11-15\/functions\/.*\/response-streaming-invocations/,
      );
    }
    const buffered = methods.filter((m) => !streamed.includes(m));
    for (const m of buffered) {
      assert.equal(integration(m).TimeoutInMillis, 29_000);
      assert.equal(integration(m).ResponseTransferMode, undefined);
    }
    for (const module of ['calls', 'mcp'] as const) {
      const fn = moduleFunction(module)(stateless, statelessTemplate);
      assert.equal(fn.Properties.Timeout, 305, module);
      const env = (fn.Properties.Environment as { Variables: Record<string, string> }).Variables;
      // A buffered call still ends one second under API Gateway's 29 s; a streamed one may run 300 s.
      assert.equal(env.PLATFORM_MAX_CALL_SECONDS, '28', module);
      assert.equal(env.PLATFORM_MAX_STREAMED_CALL_SECONDS, '300', module);
    }
  });

  test('takes up to 300 s from the callTimeoutSeconds setting, and refuses values out of range', () => {
    // Bundling is skipped for this second synthesis: only the template matters here.
    const other = templatesApp(mkdtempSync(join(tmpdir(), 'agenthost-cdk-t-')));
    const stacks = addAgenthostStacks(other, { callTimeoutSeconds: 300 });
    const template = foldedTemplate(stacks.stateless);
    const methods = callsMethods(template);
    // The call and MCP routes stream (301 s); the other routes that run agents take the setting.
    assert.deepEqual(
      methods.map((m) => (m.Properties.Integration as { TimeoutInMillis: number }).TimeoutInMillis).sort(),
      [300_000, 300_000, 300_000, 300_000, 301_000, 301_000, 301_000, 301_000, 301_000],
    );
    const fn = callsFunction(stacks.stateless, template);
    assert.equal(fn.Properties.Timeout, 305);
    assert.equal(
      (fn.Properties.Environment as { Variables: Record<string, string> }).Variables
        .PLATFORM_MAX_CALL_SECONDS,
      '299',
    );
    // Through the dashboard's distribution, CloudFront waits at most the 60 s every account allows.
    const [distribution] = Object.values(template.findResources('AWS::CloudFront::Distribution')) as [
      {
        Properties: {
          DistributionConfig: { Origins: { CustomOriginConfig?: { OriginReadTimeout?: number } }[] };
        };
      },
    ];
    assert.deepEqual(
      distribution.Properties.DistributionConfig.Origins.map((o) => o.CustomOriginConfig?.OriginReadTimeout),
      [60, undefined],
    );
    assert.throws(() => addAgenthostStacks(new App(), { stage: 'x1', callTimeoutSeconds: 301 }), /1 to 300/);
  });
});

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { App, NestedStack, type Stack, Validations } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { CachePolicy, OriginRequestPolicy } from 'aws-cdk-lib/aws-cloudfront';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { build } from 'esbuild';
import { loadedAtStart } from '../../bench/bundle-sizes.ts';
import { TABLE_SCHEMA } from '../../functions/adapters/aws/table-schema.ts';
import { RUNNER_BOOTSTRAP } from '../../functions/containers/sandbox-protocol.ts';
import { slugSchema } from '../../functions/core/accounts/slug.ts';
import { matchRoute, restApiFromTemplate } from '../../functions/emulator/api-gateway-definition.ts';
import { type CfnTemplate, TemplateResolver } from '../../functions/emulator/cloudformation-template.ts';
import { parseConfig } from '../../functions/platform/config.ts';
import {
  DASHBOARD_CSP,
  DASHBOARD_HEADERS,
  dashboardFileKind,
} from '../../functions/platform/dashboard-headers.ts';
import { MODULES, type ResourceModule, routeList } from '../../functions/platform/routes.ts';
import { ERROR_CODES } from '../../functions/shared/errors.ts';
import { addAgenthostStacks } from '../../lib/agenthost-app.ts';
import { apiMethods, GREEDY_SEGMENT } from '../../lib/api-resource-tree.ts';
import { dashboardPaths, ROOT_TO_PAGE_CODE } from '../../lib/constructs/dashboard-site.ts';
import { PROJECT_ROOT } from '../../lib/constructs/platform-function.ts';
import { SANDBOX_OBJECT_ACTIONS } from '../../lib/constructs/sandbox-cluster.ts';
import type { ServiceHosting } from '../../lib/constructs/service-hosting.ts';
import type { WarmPoolRefill } from '../../lib/constructs/warm-pool-refill.ts';
import { esbuildBuildOptions } from '../../lib/lambda-bundling.ts';
import {
  BUNDLE_READ_ACTIONS,
  BUNDLE_WRITE_ACTIONS,
  MODULE_ACCESS,
  SECRETS_READ_ACTIONS,
  SECRETS_WRITE_ACTIONS,
  TABLE_ACTIONS,
  TABLE_READ_ACTIONS,
} from '../../lib/module-access.ts';
import { foldedTemplate } from '../helpers/folded-template.ts';

// One synthesis for the whole file, templates only: bundling is skipped. The assets themselves
// (every Lambda's bundle, the dashboard's build) are tested as `cdk synth` writes them, in
// test/cdk/lambda-assets.test.ts; this file builds the handlers it inspects with esbuild itself.
const outdir = mkdtempSync(join(tmpdir(), 'agenthost-cdk-'));
after(() => rmSync(outdir, { recursive: true, force: true }));
const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
const SERVICES = {
  domain: 'services.example.com',
  certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b',
};
const { stateful, stateless } = addAgenthostStacks(app, { services: SERVICES });
const statefulTemplate = Template.fromStack(stateful);
const statelessTemplate = foldedTemplate(stateless);
const statelessJson = statelessTemplate.toJSON() as { Resources: Record<string, CfnResourceJson> };

interface CfnResourceJson {
  Type: string;
  Properties: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}

const resourcesOfType = (type: string) =>
  Object.entries(statelessJson.Resources).filter(([, r]) => r.Type === type) as [string, CfnResourceJson][];

/**
 * The platform's Lambdas: every function but CDK's BucketDeployment handler, a Python function of
 * aws-cdk-lib's that copies the dashboard's build to S3 during a deploy (lib/constructs/dashboard-site.ts).
 */
const deploymentHandlerId = stateless.getLogicalId(
  stateless.dashboard.deploymentHandler.node.defaultChild as never,
);
const platformFunctions = () =>
  resourcesOfType('AWS::Lambda::Function').filter(([id]) => id !== deploymentHandlerId);

const logicalIdOf = (c: IConstruct) => stateless.getLogicalId(c.node.defaultChild as never);

const functionLogicalId = (module: ResourceModule) =>
  stateless.getLogicalId(stateless.functions[module].function.node.defaultChild as CfnFunction);

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

describe('stateless stack: API generated from the route table', () => {
  // Full path of every API Gateway resource, from its PathPart and parent chain.
  const resourcePaths = new Map<string, string>();
  const pathOf = (id: string): string => {
    const cached = resourcePaths.get(id);
    if (cached !== undefined) return cached;
    const r = statelessJson.Resources[id];
    assert.ok(r, `no resource ${id}`);
    const parent = r.Properties.ParentId as { Ref?: string; 'Fn::GetAtt'?: string[] };
    const parentPath = parent.Ref ? pathOf(parent.Ref) : '';
    const path = `${parentPath}/${r.Properties.PathPart as string}`;
    resourcePaths.set(id, path);
    return path;
  };
  for (const [id] of resourcesOfType('AWS::ApiGateway::Resource')) pathOf(id);
  const methods = resourcesOfType('AWS::ApiGateway::Method').map(([, m]) => {
    const resourceId = m.Properties.ResourceId as { Ref?: string };
    const integration = m.Properties.Integration as {
      Type: string;
      IntegrationHttpMethod: string;
      Uri: unknown;
    };
    return {
      method: m.Properties.HttpMethod as string,
      path: resourceId.Ref ? (resourcePaths.get(resourceId.Ref) ?? '?') : '/',
      authorization: m.Properties.AuthorizationType,
      integration,
    };
  });

  test('the methods of api-resource-tree.ts: ANY on every resource (405, preflight, 404), a greedy child only under one module', () => {
    const deployed = methods.map((m) => `${m.method} ${m.path}`).sort();
    assert.deepEqual(
      deployed,
      apiMethods(routeList)
        .map((m) => `${m.method} ${m.path}`)
        .sort(),
    );
    const resources = new Set(['/', ...resourcePaths.values()]);
    for (const path of resources) assert.ok(deployed.includes(`ANY ${path}`), `no ANY on ${path}`);
    // The ANY methods go to a platform function like the routes do.
    for (const m of methods.filter((x) => x.method === 'ANY')) {
      assert.equal(m.integration.Type, 'AWS_PROXY', m.path);
      assert.ok(
        MODULES.some((mod) => JSON.stringify(m.integration.Uri).includes(`"${functionLogicalId(mod)}"`)),
        m.path,
      );
    }
    // An existing deployment updates in place: CloudFormation creates an update's new resources
    // before it deletes the old ones, so a greedy child never goes where a variable child was,
    // with one method per route and an ANY on every prefix (the tree of earlier builds).
    const before = new Set(
      routeList.flatMap(([, r]) => {
        const segments = r.path.split('/').filter(Boolean);
        return segments.map((_, i) => `/${segments.slice(0, i + 1).join('/')}`);
      }),
    );
    for (const path of resources) {
      if (!path.endsWith(`/${GREEDY_SEGMENT}`)) continue;
      const parent = path.slice(0, -GREEDY_SEGMENT.length - 1);
      const variable = [...before].filter(
        (p) => p.startsWith(`${parent}/{`) && p.split('/').length === path.split('/').length,
      );
      assert.deepEqual(variable, [], `${path} beside a variable child of the old tree`);
    }
    // API Gateway allows one variable child a resource: a greedy one has no sibling.
    for (const path of resources) {
      if (!path.endsWith(`/${GREEDY_SEGMENT}`)) continue;
      const parent = path.slice(0, -GREEDY_SEGMENT.length - 1);
      const siblings = [...resources].filter(
        (p) => p !== path && p.startsWith(`${parent}/`) && p.split('/').length === path.split('/').length,
      );
      assert.deepEqual(siblings, [], path);
    }
  });

  test('no stack holds more than 300 of CloudFormation’s 500 resources, with every option on', () => {
    // Room to grow (docs/deploy.md, "Stacks"): a one-module subtree of the API is one resource
    // (api-resource-tree.ts), and the sandbox (its VPC, cluster, key and the pool's refill) and the
    // operations (alarms, dashboard, housekeeping) are nested stacks: the parent keeps what has a
    // name users or data depend on (the API, the functions the schedules target, the services' load
    // balancer, the secrets).
    const everything = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
    const stacks = addAgenthostStacks(everything, { services: SERVICES, waf: 'on', tracing: 'xray' });
    const count = (stack: Stack) => Object.keys(Template.fromStack(stack).toJSON().Resources).length;
    const nested = stacks.stateless.node.findAll().filter((c): c is NestedStack => c instanceof NestedStack);
    const counts = Object.fromEntries(
      [stacks.stateful, stacks.stateless, ...nested].map((s) => [s.node.path, count(s)]),
    );
    assert.deepEqual(
      nested.map((n) => n.node.id),
      ['SandboxStack', 'OperationsStack'],
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

  test("every route reaches its module's function, as API Gateway matches the template's resources", () => {
    // The API as the emulator reads it and API Gateway matches it (api-gateway-definition.ts).
    const resolver = new TemplateResolver(
      [
        { stackName: stateful.stackName, template: statefulTemplate.toJSON() as CfnTemplate },
        { stackName: stateless.stackName, template: statelessJson as unknown as CfnTemplate },
      ],
      { region: 'eu-west-1', accountId: '123456789012' },
    );
    const api = restApiFromTemplate(resolver);
    const statelessStack = resolver.stack(stateless.stackName);
    const arnOf = (module: ResourceModule) =>
      `arn:aws:lambda:eu-west-1:123456789012:function:${resolver.physicalName(statelessStack, functionLogicalId(module))}`;
    for (const [operationId, route] of routeList) {
      for (const m of methods.filter((x) => x.path === route.path || x.path.endsWith(GREEDY_SEGMENT))) {
        assert.equal(m.integration.Type, 'AWS_PROXY', operationId);
        assert.equal(m.integration.IntegrationHttpMethod, 'POST', operationId);
      }
      // Each parameter given a value, and a second value: a greedy resource takes both.
      for (const fill of ['x1', 'a%2Fb']) {
        const path = route.path.replace(/\{[^}]+\}/g, fill);
        const found = matchRoute(api.routes, route.method, path);
        assert.ok(found, `${operationId}: ${route.method} ${path} reaches no method`);
        assert.equal(found.route.functionArn, arnOf(route.module), `${operationId}: ${route.method} ${path}`);
      }
    }
    // A method no route has, on a route's path: a function that answers 405 with Allow.
    const other = matchRoute(api.routes, 'PUT', '/tasks');
    assert.ok(other && MODULES.some((m) => other.route.functionArn === arnOf(m)));
  });

  test('a REGIONAL REST API with tracing, throttling, access logs and no body logging', () => {
    statelessTemplate.resourceCountIs('AWS::ApiGateway::RestApi', 1);
    const binaryTypes = [...new Set(routeList.flatMap(([, r]) => r.binaryBody?.contentTypes ?? []))]
      .filter((t) => !t.includes('json'))
      .sort();
    statelessTemplate.hasResourceProperties('AWS::ApiGateway::RestApi', {
      EndpointConfiguration: { Types: ['REGIONAL'] },
      ...(binaryTypes.length > 0 ? { BinaryMediaTypes: binaryTypes } : {}),
    });
    statelessTemplate.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: 'prod',
      TracingEnabled: true,
      AccessLogSetting: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('requestId') },
      MethodSettings: Match.arrayWith([
        Match.objectLike({
          HttpMethod: '*',
          ResourcePath: '/*',
          LoggingLevel: 'ERROR',
          DataTraceEnabled: false,
          ThrottlingRateLimit: Match.anyValue(),
          ThrottlingBurstLimit: Match.anyValue(),
        }),
      ]),
    });
    statelessTemplate.hasOutput('ApiUrl', {});
    // Access logs name the route template, never the path (a webhook's path holds its secret) or headers.
    const [, stage] = resourcesOfType('AWS::ApiGateway::Stage')[0] as [string, CfnResourceJson];
    const format = (stage.Properties.AccessLogSetting as { Format: string }).Format;
    assert.match(format, /\$context\.resourcePath/);
    assert.doesNotMatch(format, /\$context\.path|\$input\.params|header/i);
  });

  test("API Gateway's own errors use the platform's error envelope", () => {
    const responses = new Map(
      resourcesOfType('AWS::ApiGateway::GatewayResponse').map(([, r]) => [
        r.Properties.ResponseType as string,
        r.Properties,
      ]),
    );
    const expected: [string, string, string | undefined][] = [
      ['MISSING_AUTHENTICATION_TOKEN', 'NOT_FOUND', '404'],
      ['DEFAULT_4XX', 'INVALID_INPUT', undefined],
      ['DEFAULT_5XX', 'INTERNAL_ERROR', undefined],
      ['REQUEST_TOO_LARGE', 'DOCUMENT_TOO_LARGE', '413'],
      ['THROTTLED', 'RATE_LIMITED', '429'],
      ['INTEGRATION_TIMEOUT', 'TIMEOUT', '504'],
    ];
    for (const [type, code, status] of expected) {
      const r = responses.get(type);
      assert.ok(r, `no gateway response for ${type}`);
      assert.equal(r.StatusCode, status, type);
      const template = (r.ResponseTemplates as Record<string, string>)['application/json'];
      assert.ok(template, type);
      // What API Gateway substitutes: $context.error.messageString is already a quoted JSON string.
      const body = JSON.parse(
        template
          .replaceAll('$context.error.messageString', '"Missing Authentication Token"')
          .replaceAll('$context.requestId', '0f3c1a2b-aaaa-bbbb-cccc-1234567890ab'),
      );
      const errorCode = code as keyof typeof ERROR_CODES;
      assert.equal(body.error.code, code, type);
      assert.equal(typeof body.error.message, 'string', type);
      assert.equal(body.error.is_retryable, ERROR_CODES[errorCode].retryable, type);
      // The shape the functions answer with (their own ids), API Gateway's id with the platform's prefix.
      assert.deepEqual(body.metadata, { request_id: 'req_0f3c1a2b-aaaa-bbbb-cccc-1234567890ab' }, type);
      if (status) assert.equal(String(ERROR_CODES[errorCode].status), status, type);
      assert.equal(
        (r.ResponseParameters as Record<string, string>)['gatewayresponse.header.Content-Type'],
        "'application/json; charset=utf-8'",
      );
    }
  });
});

describe('stateless stack: functions', () => {
  const functions = platformFunctions();

  test('exactly one function per module, from functions/http/<module>.ts, plus the five jobs', () => {
    assert.equal(functions.length, MODULES.length + 5);
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

describe('stateless stack: least privilege', () => {
  type Statement = { Action: string | string[]; Resource: unknown; Effect: string; Condition?: unknown };
  const statementsOf = (module: ResourceModule): Statement[] => {
    const roleId = stateless.getLogicalId(stateless.functions[module].role.node.defaultChild as never);
    return resourcesOfType('AWS::IAM::Policy')
      .filter(([, p]) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
      .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  };
  const actionsOf = (s: Statement) => (Array.isArray(s.Action) ? s.Action : [s.Action]);
  const resourcesOf = (s: Statement) => (Array.isArray(s.Resource) ? s.Resource : [s.Resource]);

  const tableArn = { 'Fn::ImportValue': stateful.exportNames.tableArn };
  const tableResources = [
    tableArn,
    ...TABLE_SCHEMA.indexes.map((i) => ({ 'Fn::Join': ['', [tableArn, `/index/${i.name}`]] })),
  ];

  test('modules that use the store may use exactly the table and its named indexes', () => {
    for (const module of MODULES) {
      const access = MODULE_ACCESS[module].table;
      const all = statementsOf(module).filter((s) => actionsOf(s).some((a) => a.startsWith('dynamodb:')));
      // Every API function may count keyless requests and its callers' request rate: an update of
      // the ADDRESS# and REQUESTS# partitions only.
      const counters = all.filter((s) => JSON.stringify(s.Condition ?? {}).includes('ADDRESS#*'));
      const dynamo = all.filter((s) => !counters.includes(s));
      if (access === 'read-write') assert.deepEqual(counters, [], `${module} needs no second grant`);
      else {
        assert.equal(counters.length, 1, module);
        assert.deepEqual(actionsOf(counters[0] as Statement), ['dynamodb:UpdateItem'], module);
        assert.deepEqual((counters[0] as Statement).Condition, {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['ADDRESS#*', 'REQUESTS#*'] },
        });
      }
      if (access === 'none') {
        assert.deepEqual(dynamo, [], module);
        continue;
      }
      assert.equal(dynamo.length, 1, module);
      const [statement] = dynamo as [Statement];
      const expected = access === 'read-write' ? TABLE_ACTIONS : TABLE_READ_ACTIONS;
      assert.deepEqual([...actionsOf(statement)].sort(), [...expected].sort(), module);
      assert.deepEqual(resourcesOf(statement), tableResources, module);
    }
    // What the route table needs: every module with an authenticated route reads the API keys.
    for (const [, route] of routeList) {
      if (route.auth === 'api-key') assert.notEqual(MODULE_ACCESS[route.module].table, 'none', route.module);
    }
  });

  test('no role reaches the bucket beyond its prefixes; only the run paths reach the run objects (secret values)', () => {
    const bucket = JSON.stringify({ 'Fn::ImportValue': stateful.exportNames.bundleBucketArn });
    const byRole = new Map<string, Set<string>>();
    for (const [, policy] of resourcesOfType('AWS::IAM::Policy')) {
      for (const st of (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement) {
        if (!actionsOf(st).some((a) => a.startsWith('s3:'))) continue;
        for (const resource of resourcesOf(st)) {
          const text = JSON.stringify(resource);
          if (!text.includes(bucket)) continue;
          const prefix = /"\/((?:[a-z-]+\/)*)\*"/.exec(text)?.[1] || '(whole bucket)';
          for (const role of policy.Properties.Roles as { Ref: string }[]) {
            byRole.set(role.Ref, (byRole.get(role.Ref) ?? new Set()).add(prefix));
          }
        }
      }
    }
    const roleOf = (fn: { role: { node: { defaultChild: unknown } } }) =>
      stateless.getLogicalId(fn.role.node.defaultChild as never);
    const runPaths = new Set([
      roleOf(stateless.functions.calls),
      roleOf(stateless.functions.mcp),
      roleOf(stateless.functions['schedule-runs']),
      roleOf(stateless.schedules.fireFunction),
    ]);
    // The functions that manage services put and read the service launcher (docs/services.md).
    const serviceManagers = new Set([
      roleOf(stateless.functions.services),
      roleOf((stateless.services as ServiceHosting).eventsFunction),
    ]);
    for (const role of serviceManagers) assert.ok(byRole.get(role)?.has('service-programs/'), role);
    // The warm pool's refill signs its runners' claim URLs: the pool's prefix, no other run object.
    const poolRefill = roleOf((stateless.warmPool as WarmPoolRefill).function);
    assert.deepEqual([...(byRole.get(poolRefill) ?? [])], ['sandbox-inputs/pool/']);
    // Housekeeping deletes what sessions that never closed left, and may read nothing of it.
    const housekeeping = roleOf(stateless.billing.housekeepingFunction);
    let listings = 0;
    for (const [, policy] of resourcesOfType('AWS::IAM::Policy')) {
      if (!(policy.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === housekeeping)) continue;
      for (const st of (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement) {
        const on = JSON.stringify(st.Resource);
        if (on.includes('/sandbox-'))
          assert.deepEqual(actionsOf(st).sort(), ['s3:DeleteObject', 's3:DeleteObjectVersion']);
        else if (on === bucket) {
          // The bucket itself: its versions under the run prefixes listed, nothing else.
          assert.deepEqual(actionsOf(st), ['s3:ListBucketVersions']);
          listings++;
          assert.deepEqual(st.Condition, {
            StringLike: { 's3:prefix': ['sandbox-inputs/*', 'sandbox-results/*'] },
          });
        }
      }
    }
    assert.equal(listings, 1, 'housekeeping lists the run objects’ versions');
    // The sandbox's execution role reads a task's env file, and finds the bucket for that; nothing
    // else (docs/sandbox-aws.md, "Who can read a run's secrets").
    const executionRole = stateless.getLogicalId(stateless.sandbox.executionRole.node.defaultChild as never);
    const executionS3 = resourcesOfType('AWS::IAM::Policy')
      .filter(([, p]) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === executionRole))
      .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement)
      .filter((st) => actionsOf(st).some((a) => a.startsWith('s3:')));
    assert.deepEqual(
      executionS3.map((st) => [actionsOf(st), JSON.stringify(st.Resource).replace(bucket, '<bucket>')]),
      [
        [['s3:GetObject'], '{"Fn::Join":["",[<bucket>,"/sandbox-inputs/*/task.env"]]}'],
        [['s3:GetBucketLocation'], '<bucket>'],
      ],
    );
    byRole.delete(executionRole);
    for (const [role, prefixes] of byRole) {
      const allowed = runPaths.has(role)
        ? ['bundles/', 'sandbox-inputs/', 'sandbox-results/']
        : serviceManagers.has(role)
          ? ['bundles/', 'service-programs/']
          : role === poolRefill
            ? ['sandbox-inputs/pool/']
            : role === housekeeping
              ? ['bundles/', 'sandbox-inputs/', 'sandbox-results/', '(whole bucket)']
              : ['bundles/'];
      assert.deepEqual(
        [...prefixes].filter((p) => !allowed.includes(p)),
        [],
        role,
      );
    }
    for (const role of runPaths) {
      assert.deepEqual(
        [...(byRole.get(role) ?? [])].sort(),
        ['bundles/', 'sandbox-inputs/', 'sandbox-results/'],
        role,
      );
    }
  });

  test('only the modules declared to use bundles reach the bundles, and only their prefix', () => {
    const objects = {
      'Fn::Join': ['', [{ 'Fn::ImportValue': stateful.exportNames.bundleBucketArn }, '/bundles/*']],
    };
    for (const module of MODULES) {
      const access = MODULE_ACCESS[module].bundles;
      // The calls function's grant on the sandbox run objects is asserted in 'sandbox cluster' below.
      const s3 = statementsOf(module).filter(
        (s) =>
          actionsOf(s).some((a) => a.startsWith('s3:')) &&
          !/\/sandbox-(inputs|results)\/\*/.test(JSON.stringify(s.Resource)) &&
          !/\/service-programs\/\*/.test(JSON.stringify(s.Resource)),
      );
      if (MODULE_ACCESS[module].services) {
        // The service launcher: put on every start, read through the URLs this role signs.
        const programs = statementsOf(module).filter((s) =>
          /\/service-programs\/\*/.test(JSON.stringify(s.Resource)),
        );
        assert.deepEqual(programs.map(actionsOf), [['s3:PutObject', 's3:GetObject']], module);
      }
      if (access === 'none') {
        assert.deepEqual(s3, [], module);
        continue;
      }
      assert.equal(s3.length, 1, module);
      const [statement] = s3 as [Statement];
      const expected =
        access === 'read-write' ? [...BUNDLE_READ_ACTIONS, ...BUNDLE_WRITE_ACTIONS] : BUNDLE_READ_ACTIONS;
      assert.deepEqual([...actionsOf(statement)].sort(), [...expected].sort(), module);
      assert.deepEqual(resourcesOf(statement), [objects], module);
    }
  });

  test('openapi and health have no table (but the address counters), bucket or Secrets Manager access', () => {
    for (const module of ['openapi', 'health'] as const) {
      assert.equal(MODULE_ACCESS[module].table, 'none');
      const actions = statementsOf(module).flatMap(actionsOf);
      assert.deepEqual(
        actions.filter((a) => /^(dynamodb|s3|secretsmanager|kms):/.test(a)),
        ['dynamodb:UpdateItem'],
        module,
      );
      // What is left: counting keyless requests, writing its own logs and X-Ray segments.
      assert.deepEqual(
        [...new Set(actions)].sort(),
        [
          'dynamodb:UpdateItem',
          'logs:CreateLogStream',
          'logs:PutLogEvents',
          'xray:PutTelemetryRecords',
          'xray:PutTraceSegments',
        ],
        module,
      );
    }
  });

  test('only modules declared to use the vault reach Secrets Manager, within the prefix: write-only or read-only', () => {
    for (const module of MODULES) {
      const sm = statementsOf(module).filter((s) =>
        actionsOf(s).some((a) => a.startsWith('secretsmanager:')),
      );
      if (MODULE_ACCESS[module].secrets === 'none') {
        if (MODULE_ACCESS[module].payments) {
          // Billing reads one secret only: Stripe's keys, by its exact ARN.
          assert.deepEqual(
            sm.map((st) => [[...actionsOf(st)].sort(), st.Resource]),
            [
              [
                ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'],
                { Ref: stateless.getLogicalId(stateless.billing.stripeSecret.node.defaultChild as never) },
              ],
            ],
            module,
          );
          continue;
        }
        assert.deepEqual(sm, [], module);
        continue;
      }
      const access = MODULE_ACCESS[module].secrets;
      assert.ok(access === 'write' || access === 'read', `${module}: update this test for ${access} access`);
      const onPrefix = sm.filter((s) => JSON.stringify(resourcesOf(s)).includes(':secret:agenthost/*'));
      assert.equal(onPrefix.length, 1, module);
      const expected = access === 'write' ? SECRETS_WRITE_ACTIONS : SECRETS_READ_ACTIONS;
      assert.deepEqual([...actionsOf(onPrefix[0] as Statement)].sort(), [...expected].sort(), module);
      // The functions that call models also read the provider-keys secret, by its exact ARN.
      const providerKeys = {
        Ref: stateless.getLogicalId(stateless.providerKeys.secret.node.defaultChild as never),
      };
      const keyReads = sm.filter((s) => JSON.stringify(s.Resource) === JSON.stringify(providerKeys));
      assert.equal(keyReads.length, MODULE_ACCESS[module].llm ? 1 : 0, module);
      const elsewhere = sm.filter((s) => !onPrefix.includes(s) && !keyReads.includes(s));
      if (access === 'write') assert.deepEqual(elsewhere, [], module);
      else {
        // BatchGetSecretValue has no resource-level permission; each value it returns is still
        // checked against GetSecretValue on the prefix.
        assert.deepEqual(
          elsewhere.flatMap((s) => [...actionsOf(s)]),
          ['secretsmanager:BatchGetSecretValue'],
          module,
        );
      }
    }
  });

  test('TABLE_ACTIONS covers every command the DynamoDB adapter sends, and no more', () => {
    const source = readFileSync(join(PROJECT_ROOT, 'functions/adapters/aws/dynamodb-store.ts'), 'utf8');
    const commands = new Set([...source.matchAll(/new (\w+)Command\(/g)].map((m) => m[1]));
    const needs: Record<string, string[]> = {
      Get: ['dynamodb:GetItem'],
      Put: ['dynamodb:PutItem'],
      Update: ['dynamodb:UpdateItem'],
      Delete: ['dynamodb:DeleteItem'],
      Query: ['dynamodb:Query'],
      TransactWrite: [
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'dynamodb:DeleteItem',
        'dynamodb:ConditionCheckItem',
      ],
    };
    const required = new Set<string>();
    for (const command of commands) {
      const actions = needs[command as string];
      assert.ok(
        actions,
        `dynamodb-store.ts sends ${command}Command: add its IAM actions to TABLE_ACTIONS and this map`,
      );
      for (const a of actions) required.add(a);
    }
    assert.deepEqual([...required].sort(), [...TABLE_ACTIONS].sort());
  });
});

describe('stateless stack: sandbox cluster (docs/sandbox-aws.md)', () => {
  type Statement = { Action: string | string[]; Resource: unknown; Condition?: unknown };
  const logicalId = (c: IConstruct) => stateless.getLogicalId(c.node.defaultChild as never);
  const sandbox = stateless.sandbox;
  const [, taskDefinition] = resourcesOfType('AWS::ECS::TaskDefinition')[0] ?? [];
  const statementsOfRole = (roleId: string): Statement[] =>
    resourcesOfType('AWS::IAM::Policy')
      .filter(([, p]) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
      .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  const actions = (s: Statement) => (Array.isArray(s.Action) ? s.Action : [s.Action]);

  test('one Fargate ARM64 task definition with no task role, the execution role only, and the runner', () => {
    assert.equal(resourcesOfType('AWS::ECS::TaskDefinition').length, 1);
    assert.ok(taskDefinition);
    const p = taskDefinition.Properties;
    assert.equal(p.TaskRoleArn, undefined);
    assert.deepEqual(p.ExecutionRoleArn, { 'Fn::GetAtt': [logicalId(sandbox.executionRole), 'Arn'] });
    assert.deepEqual(p.RequiresCompatibilities, ['FARGATE']);
    assert.equal(p.NetworkMode, 'awsvpc');
    assert.deepEqual(p.RuntimePlatform, { CpuArchitecture: 'ARM64', OperatingSystemFamily: 'LINUX' });
    const [container, ...others] = p.ContainerDefinitions as Record<string, unknown>[];
    assert.equal(others.length, 0);
    assert.equal(container?.Name, 'runner');
    assert.deepEqual(container?.EntryPoint, ['node', '-e', RUNNER_BOOTSTRAP]);
    assert.equal(container?.Environment, undefined);
    assert.equal((container?.LogConfiguration as { LogDriver?: string } | undefined)?.LogDriver, 'awslogs');
    // The only roles ECS tasks can assume here are the two execution roles (sandbox, services):
    // no task role anywhere, so user code never gets AWS credentials.
    const taskRoles = resourcesOfType('AWS::IAM::Role').filter(([, r]) =>
      JSON.stringify(r.Properties.AssumeRolePolicyDocument).includes('ecs-tasks.amazonaws.com'),
    );
    assert.deepEqual(
      taskRoles.map(([id]) => id).sort(),
      [
        logicalId(sandbox.executionRole),
        logicalId((stateless.services as ServiceHosting).executionRole),
      ].sort(),
    );
  });

  test('the tasks’ security group has no ingress and only HTTPS egress; no NAT, no internet gateway', () => {
    const sgId = logicalId(sandbox.securityGroup);
    const sg = statelessJson.Resources[sgId];
    assert.ok(sg);
    assert.equal(sg.Properties.SecurityGroupIngress, undefined);
    assert.deepEqual(
      resourcesOfType('AWS::EC2::SecurityGroupIngress').filter(([, r]) =>
        JSON.stringify(r.Properties.GroupId).includes(`"${sgId}"`),
      ),
      [],
    );
    const egress = sg.Properties.SecurityGroupEgress as Record<string, unknown>[];
    assert.deepEqual(
      egress.map((e) => ({
        CidrIp: e.CidrIp,
        IpProtocol: e.IpProtocol,
        FromPort: e.FromPort,
        ToPort: e.ToPort,
      })),
      [{ CidrIp: '0.0.0.0/0', IpProtocol: 'tcp', FromPort: 443, ToPort: 443 }],
    );
    // In the sandbox's VPC (the services' VPC has its own NAT and public subnets, by design).
    const inSandboxVpc = ([id]: [string, CfnResourceJson]) => id.startsWith('SandboxVpc');
    for (const type of ['AWS::EC2::NatGateway', 'AWS::EC2::InternetGateway', 'AWS::EC2::EIP']) {
      assert.equal(resourcesOfType(type).filter(inSandboxVpc).length, 0, type);
    }
    const subnets = resourcesOfType('AWS::EC2::Subnet').filter(inSandboxVpc);
    assert.ok(subnets.length >= 2);
    for (const [, subnet] of subnets) {
      assert.equal(subnet.Properties.MapPublicIpOnLaunch, false);
    }
  });

  test('the S3 gateway endpoint admits only the runner’s GET of inputs and agent bundles, PUT of results and image layers', () => {
    const endpoints = resourcesOfType('AWS::EC2::VPCEndpoint');
    const gateway = endpoints.filter(([, e]) => e.Properties.VpcEndpointType === 'Gateway');
    assert.equal(gateway.length, 1);
    const [[, endpoint]] = gateway as [[string, CfnResourceJson]];
    const policy = (endpoint.Properties.PolicyDocument as { Statement: Statement[] }).Statement;
    assert.deepEqual(
      policy.map((st) => [
        actions(st),
        JSON.stringify(st.Resource).match(/sandbox-\w+|\/bundles\/[^"]*|starport-layer-bucket/g),
      ]),
      [
        // An agent version's archive, read in place (never a payload: bundles/payloads/…/*.json).
        [
          ['s3:GetObject'],
          ['sandbox-inputs', '/bundles/*.tar.gz', '/bundles/*.zip', 'starport-layer-bucket'],
        ],
        // ECS's agent finds the bucket before it reads a task's env file (the execution role).
        [['s3:GetBucketLocation'], null],
        [['s3:PutObject'], ['sandbox-results']],
      ],
    );
    assert.deepEqual(
      endpoints
        .filter(([, e]) => e.Properties.VpcEndpointType === 'Interface')
        .map(([, e]) => JSON.stringify(e.Properties.ServiceName).match(/\.(ecr\.api|ecr\.dkr|logs)"/)?.[1])
        .sort(),
      ['ecr.api', 'ecr.dkr', 'logs'],
    );
  });

  test('the log group has retention; the cluster has Container Insights', () => {
    assert.ok(statelessJson.Resources[logicalId(sandbox.logGroup)]?.Properties.RetentionInDays);
    statelessTemplate.hasResourceProperties('AWS::ECS::Cluster', {
      ClusterSettings: [{ Name: 'containerInsights', Value: 'enabled' }],
    });
  });

  test('the run paths may RunTask only this task definition, and nothing else may touch ECS', () => {
    const runners = [
      ...MODULES.filter((m) => MODULE_ACCESS[m].sandbox).map((m) => stateless.functions[m]),
      stateless.schedules.fireFunction,
    ];
    assert.equal(runners.length, 4, 'calls, mcp, schedule-runs and the fire function');
    for (const fn of runners) {
      const statements = statementsOfRole(logicalId(fn.role));
      const run = statements.filter((s) => actions(s).includes('ecs:RunTask'));
      assert.equal(run.length, 1);
      assert.deepEqual(actions(run[0] as Statement), ['ecs:RunTask']);
      assert.deepEqual((run[0] as Statement).Resource, { Ref: logicalId(sandbox.taskDefinition) });
      assert.deepEqual((run[0] as Statement).Condition, {
        ArnEquals: { 'ecs:cluster': { 'Fn::GetAtt': [logicalId(sandbox.cluster), 'Arn'] } },
      });
      const pass = statements.filter((s) => actions(s).includes('iam:PassRole'));
      assert.deepEqual(
        pass.map((s) => s.Resource),
        [{ 'Fn::GetAtt': [logicalId(sandbox.executionRole), 'Arn'] }],
      );
      const objects = statements.filter((s) =>
        /\/sandbox-(inputs|results)\/\*/.test(JSON.stringify(s.Resource)),
      );
      assert.equal(objects.length, 1);
      assert.deepEqual([...actions(objects[0] as Statement)].sort(), [...SANDBOX_OBJECT_ACTIONS].sort());
    }
    for (const module of MODULES.filter((m) => !MODULE_ACCESS[m].sandbox)) {
      const roleId = logicalId(stateless.functions[module].role);
      const ecsStatements = statementsOfRole(roleId).filter((st) =>
        actions(st).some((a) => a.startsWith('ecs:')),
      );
      if (MODULE_ACCESS[module].services) {
        // Service management: never RunTask; only svc-* services and agenthost-svc-* task definitions.
        for (const st of ecsStatements) {
          assert.ok(!actions(st).includes('ecs:RunTask'), module);
          const where = JSON.stringify(st.Resource);
          assert.ok(
            where === '"*"' ? actions(st).join() === 'ecs:RegisterTaskDefinition' : /svc-\*/.test(where),
            `${module}: ${actions(st).join()} on ${where}`,
          );
        }
      } else {
        assert.deepEqual(ecsStatements.flatMap(actions), [], module);
      }
      const pass = statementsOfRole(roleId).filter((s) => actions(s).includes('iam:PassRole'));
      if (MODULE_ACCESS[module].services) {
        // Only the services' execution role, and only to ECS tasks.
        assert.deepEqual(
          pass.map((s) => [s.Resource, s.Condition]),
          [
            [
              { 'Fn::GetAtt': [logicalId((stateless.services as ServiceHosting).executionRole), 'Arn'] },
              { StringEquals: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } },
            ],
          ],
          module,
        );
      } else if (MODULE_ACCESS[module].scheduler === 'manage') {
        // Only the scheduler's invoke role, and only to EventBridge Scheduler.
        assert.deepEqual(
          pass.map((s) => [s.Resource, s.Condition]),
          [
            [
              { 'Fn::GetAtt': [logicalId(stateless.schedules.invokeRole), 'Arn'] },
              { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
            ],
          ],
          module,
        );
      } else assert.deepEqual(pass, [], module);
    }
    const callsFunction = statelessJson.Resources[functionLogicalId('calls')];
    assert.ok(callsFunction);
    const env = (callsFunction.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    assert.deepEqual(env.PLATFORM_SANDBOX_CLUSTER, { Ref: logicalId(sandbox.cluster) });
    assert.deepEqual(env.PLATFORM_SANDBOX_TASK_DEFINITION, { Ref: logicalId(sandbox.taskDefinition) });
    assert.deepEqual(env.PLATFORM_SANDBOX_SECURITY_GROUPS, {
      'Fn::GetAtt': [logicalId(sandbox.securityGroup), 'GroupId'],
    });
    assert.match(JSON.stringify(env.PLATFORM_SANDBOX_SUBNETS), /"Fn::Join":\[",",\[\{"Ref":"SandboxVpc/);
  });
});

describe('stateless stack: schedule firing (docs/schedules.md)', () => {
  type Statement = { Action: string | string[]; Resource: unknown; Condition?: unknown };
  const logicalId = (c: IConstruct) => stateless.getLogicalId(c.node.defaultChild as never);
  const firing = stateless.schedules;
  const statementsOfRole = (roleId: string): Statement[] =>
    resourcesOfType('AWS::IAM::Policy')
      .filter(([, p]) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
      .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  const actions = (s: Statement) => (Array.isArray(s.Action) ? s.Action : [s.Action]);
  const envOf = (fn: { function: IConstruct }) =>
    (
      (statelessJson.Resources[logicalId(fn.function)] as CfnResourceJson).Properties.Environment as {
        Variables: Record<string, unknown>;
      }
    ).Variables;

  test('one schedule group, an encrypted TLS-only dead-letter queue, and the fire and alert functions', () => {
    statelessTemplate.resourceCountIs('AWS::Scheduler::ScheduleGroup', 1);
    statelessTemplate.hasResourceProperties('AWS::Scheduler::ScheduleGroup', {
      Name: 'AgenthostStateless-schedules',
    });
    statelessTemplate.hasResourceProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true });
    statelessTemplate.hasResourceProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
    const fire = statelessJson.Resources[logicalId(firing.fireFunction.function)];
    assert.equal(fire?.Properties.Timeout, 330, 'above the 300 s run cap');
    assert.equal(envOf(firing.fireFunction).PLATFORM_MAX_CALL_SECONDS, '300');
    // No schedule is created by the stack: they are made per record at run time.
    statelessTemplate.resourceCountIs('AWS::Scheduler::Schedule', 0);
  });

  test('a failed fire is retried by Lambda, then recorded in the dead-letter queue; alert delivery retries itself', () => {
    const configs = resourcesOfType('AWS::Lambda::EventInvokeConfig');
    const configOf = (fn: { function: { node: { defaultChild: unknown } } }) => {
      const name = { Ref: logicalId(fn.function as never) };
      const found = configs.filter(
        ([, c]) => JSON.stringify(c.Properties.FunctionName) === JSON.stringify(name),
      );
      assert.equal(found.length, 1);
      return (found[0] as [string, CfnResourceJson])[1].Properties;
    };
    const fire = configOf(firing.fireFunction);
    assert.equal(fire.MaximumRetryAttempts, 2);
    assert.equal(fire.MaximumEventAgeInSeconds, 3600);
    assert.deepEqual(fire.DestinationConfig, {
      OnFailure: { Destination: { 'Fn::GetAtt': [logicalId(firing.deadLetters), 'Arn'] } },
    });
    // The fire function may send there (the destination acts with its role).
    const sends = statementsOfRole(logicalId(firing.fireFunction.role)).filter((st) =>
      actions(st).includes('sqs:SendMessage'),
    );
    assert.deepEqual(
      sends.map((st) => st.Resource),
      [{ 'Fn::GetAtt': [logicalId(firing.deadLetters), 'Arn'] }],
    );
    assert.equal(configOf(firing.alertsFunction).MaximumRetryAttempts, 0);
  });

  test('the invoke role is assumable by EventBridge Scheduler of this account only, and may invoke the fire function and dead-letter, nothing else', () => {
    const role = statelessJson.Resources[logicalId(firing.invokeRole)];
    const trust = (
      (role as CfnResourceJson).Properties.AssumeRolePolicyDocument as {
        Statement: Statement[] & { Principal: unknown }[];
      }
    ).Statement[0] as unknown as { Principal: unknown; Condition: Record<string, Record<string, unknown>> };
    assert.deepEqual(trust.Principal, { Service: 'scheduler.amazonaws.com' });
    assert.deepEqual(trust.Condition.StringEquals, { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } });
    // The group's ARN, which is what Scheduler presents (a schedule's ARN would never match).
    assert.equal(trust.Condition.ArnLike, undefined);
    assert.match(JSON.stringify(trust.Condition.ArnEquals), /:schedule-group\/AgenthostStateless-schedules"/);
    const statements = statementsOfRole(logicalId(firing.invokeRole));
    assert.deepEqual(
      statements.map((st) => [actions(st), st.Resource]),
      [
        [['lambda:InvokeFunction'], { 'Fn::GetAtt': [logicalId(firing.fireFunction.function), 'Arn'] }],
        [['sqs:SendMessage'], { 'Fn::GetAtt': [logicalId(firing.deadLetters), 'Arn'] }],
      ],
    );
  });

  test('only the schedules module manages schedules (with the target in its environment); the run paths may only delete them', () => {
    const onSchedules = (roleId: string) =>
      statementsOfRole(roleId)
        .filter((st) => actions(st).some((a) => a.startsWith('scheduler:')))
        .map((st) => {
          assert.match(JSON.stringify(st.Resource), /:schedule\/AgenthostStateless-schedules\/\*/);
          return [...actions(st)].sort();
        });
    for (const module of MODULES) {
      const got = onSchedules(logicalId(stateless.functions[module].role));
      const want = MODULE_ACCESS[module].scheduler;
      if (want === 'manage') {
        assert.deepEqual(
          got,
          [['scheduler:CreateSchedule', 'scheduler:DeleteSchedule', 'scheduler:UpdateSchedule']],
          module,
        );
        const env = envOf(stateless.functions[module]);
        assert.deepEqual(env.PLATFORM_SCHEDULE_TARGET_ARN, {
          'Fn::GetAtt': [logicalId(firing.fireFunction.function), 'Arn'],
        });
        assert.deepEqual(env.PLATFORM_SCHEDULE_ROLE_ARN, {
          'Fn::GetAtt': [logicalId(firing.invokeRole), 'Arn'],
        });
        assert.deepEqual(env.PLATFORM_SCHEDULE_DLQ_ARN, {
          'Fn::GetAtt': [logicalId(firing.deadLetters), 'Arn'],
        });
      } else if (want === 'remove') {
        assert.deepEqual(got, [['scheduler:DeleteSchedule']], module);
      } else {
        assert.deepEqual(got, [], module);
      }
    }
    assert.deepEqual(onSchedules(logicalId(firing.fireFunction.role)), [['scheduler:DeleteSchedule']]);
    assert.equal(envOf(firing.fireFunction).PLATFORM_SCHEDULE_TARGET_ARN, undefined);
  });

  test('the alert-delivery function has no data access, and only the run paths may invoke it', () => {
    const alertsRole = logicalId(firing.alertsFunction.role);
    const reach = statementsOfRole(alertsRole)
      .flatMap(actions)
      .filter((a) => /^(dynamodb|s3|secretsmanager|scheduler|ecs|lambda):/.test(a));
    assert.deepEqual(reach, []);
    const alertsArn = JSON.stringify({ 'Fn::GetAtt': [logicalId(firing.alertsFunction.function), 'Arn'] });
    const invokers = resourcesOfType('AWS::IAM::Policy')
      .filter(([, p]) => JSON.stringify(p.Properties.PolicyDocument).includes(alertsArn))
      .flatMap(([, p]) => (p.Properties.Roles as { Ref: string }[]).map((r) => r.Ref))
      .sort();
    assert.deepEqual(
      invokers,
      [
        logicalId(stateless.functions['schedule-runs'].role),
        logicalId(firing.fireFunction.role),
        logicalId((stateless.services as ServiceHosting).eventsFunction.role),
      ].sort(),
    );
  });
});

describe('stateless stack: service hosting (docs/services.md)', () => {
  const logicalId = (c: IConstruct) => stateless.getLogicalId(c.node.defaultChild as never);
  const hosting = stateless.services as ServiceHosting;

  test('an internet-facing load balancer with an HTTPS listener on the given certificate, 404 by default', () => {
    statelessTemplate.hasResourceProperties('AWS::ElasticLoadBalancingV2::LoadBalancer', {
      Scheme: 'internet-facing',
      LoadBalancerAttributes: Match.arrayWith([
        { Key: 'routing.http.drop_invalid_header_fields.enabled', Value: 'true' },
      ]),
    });
    const listeners = resourcesOfType('AWS::ElasticLoadBalancingV2::Listener');
    assert.equal(listeners.length, 1, 'HTTPS only');
    const [, listener] = listeners[0] as [string, CfnResourceJson];
    assert.equal(listener.Properties.Protocol, 'HTTPS');
    assert.equal(listener.Properties.Port, 443);
    assert.deepEqual(listener.Properties.Certificates, [{ CertificateArn: SERVICES.certificateArn }]);
    assert.match(JSON.stringify(listener.Properties.DefaultActions), /"StatusCode":"404"/);
  });

  test('tasks take the gateway port from the load balancer only; they have no task role; the execution role reads only this prefix’s secrets', () => {
    const sg = statelessJson.Resources[logicalId(hosting.taskSecurityGroup)] as CfnResourceJson;
    const ingress = resourcesOfType('AWS::EC2::SecurityGroupIngress').filter(([, r]) =>
      JSON.stringify(r.Properties.GroupId).includes(`"${logicalId(hosting.taskSecurityGroup)}"`),
    );
    assert.equal(sg.Properties.SecurityGroupIngress, undefined);
    assert.deepEqual(
      ingress.map(([, r]) => [
        r.Properties.FromPort,
        r.Properties.ToPort,
        JSON.stringify(r.Properties.SourceSecurityGroupId),
      ]),
      [
        [
          8080,
          8080,
          JSON.stringify({
            'Fn::GetAtt': [
              logicalId(hosting.loadBalancer.connections.securityGroups[0] as IConstruct),
              'GroupId',
            ],
          }),
        ],
      ],
    );
    const policies = resourcesOfType('AWS::IAM::Policy').filter(([, p]) =>
      (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === logicalId(hosting.executionRole)),
    );
    const statements = policies.flatMap(
      ([, p]) =>
        (p.Properties.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] })
          .Statement,
    );
    const secretReads = statements.filter((st) => JSON.stringify(st.Action).includes('secretsmanager'));
    assert.deepEqual(
      secretReads.map((st) => st.Action),
      ['secretsmanager:GetSecretValue'],
    );
    assert.match(JSON.stringify(secretReads[0]?.Resource), /:secret:agenthost\/\*/);
  });

  test('every task state change of the cluster reaches the service-events function', () => {
    statelessTemplate.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.ecs'],
        'detail-type': ['ECS Task State Change'],
        detail: { clusterArn: [{ 'Fn::GetAtt': [logicalId(hosting.cluster), 'Arn'] }] },
      },
      Targets: [
        Match.objectLike({ Arn: { 'Fn::GetAtt': [logicalId(hosting.eventsFunction.function), 'Arn'] } }),
      ],
    });
    const env = (statelessJson.Resources[functionLogicalId('services')] as CfnResourceJson).Properties
      .Environment as {
      Variables: Record<string, unknown>;
    };
    assert.equal(env.Variables.PLATFORM_SERVICES_DOMAIN, SERVICES.domain);
    assert.deepEqual(env.Variables.PLATFORM_SERVICES_EXECUTION_ROLE_ARN, {
      'Fn::GetAtt': [logicalId(hosting.executionRole), 'Arn'],
    });
  });

  test('without a domain and certificate no hosting is built, and the services function has no service settings', () => {
    const other = new App({
      outdir: mkdtempSync(join(tmpdir(), 'agenthost-cdk-s-')),
      context: { 'aws:cdk:bundling-stacks': [] },
    });
    const stacks = addAgenthostStacks(other);
    assert.equal(stacks.stateless.services, undefined);
    const template = foldedTemplate(stacks.stateless);
    template.resourceCountIs('AWS::ElasticLoadBalancingV2::LoadBalancer', 0);
    const fn = (template.toJSON().Resources as Record<string, CfnResourceJson>)[
      stacks.stateless.getLogicalId(
        stacks.stateless.functions.services.function.node.defaultChild as CfnFunction,
      )
    ] as CfnResourceJson;
    const vars = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    assert.equal(vars.PLATFORM_SERVICES_CLUSTER, undefined);
  });
});

describe('stateless stack: billing (docs/billing.md)', () => {
  const logicalId = (c: IConstruct) => stateless.getLogicalId(c.node.defaultChild as never);

  test('Stripe’s keys in one Secrets Manager secret that only the billing function reads; housekeeping every five minutes', () => {
    const secretId = logicalId(stateless.billing.stripeSecret);
    assert.equal(statelessJson.Resources[secretId]?.Type, 'AWS::SecretsManager::Secret');
    const env = (statelessJson.Resources[functionLogicalId('billing')] as CfnResourceJson).Properties
      .Environment as {
      Variables: Record<string, unknown>;
    };
    assert.deepEqual(env.Variables.PLATFORM_STRIPE_SECRET_ARN, { Ref: secretId });
    assert.equal(env.Variables.PLATFORM_PAYMENTS, 'stripe');
    const readers = resourcesOfType('AWS::IAM::Policy')
      .filter(([, p]) => JSON.stringify(p.Properties.PolicyDocument).includes(`"Ref":"${secretId}"`))
      .flatMap(([, p]) => (p.Properties.Roles as { Ref: string }[]).map((r) => r.Ref));
    assert.deepEqual(readers, [logicalId(stateless.functions.billing.role)]);
    statelessTemplate.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(5 minutes)',
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [logicalId(stateless.billing.housekeepingFunction.function), 'Arn'] },
        }),
      ],
    });
  });

  test('the payment webhook is a public route; the rest of /billing needs a key', () => {
    const byPath = new Map(routeList.map(([, r]) => [`${r.method} ${r.path}`, r.auth]));
    assert.equal(byPath.get('POST /billing/webhook'), 'none');
    assert.equal(byPath.get('GET /billing/balance'), 'api-key');
    assert.equal(byPath.get('POST /billing/checkout'), 'api-key');
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
});

describe('stateless stack: the web dashboard (docs/dashboard.md)', () => {
  const site = stateless.dashboard;
  const idOf = (c: IConstruct) => stateless.getLogicalId(c.node.defaultChild as never);
  const filesBucketId = idOf(site.bucket);
  const logBucketId = idOf(site.logBucket);
  const distribution = statelessJson.Resources[idOf(site.distribution)] as CfnResourceJson;
  interface Behaviour {
    PathPattern?: string;
    TargetOriginId: string;
    CachePolicyId: string;
    OriginRequestPolicyId?: string;
    ResponseHeadersPolicyId?: { Ref: string };
    AllowedMethods: string[];
    ViewerProtocolPolicy: string;
  }
  interface Origin {
    Id: string;
    DomainName: unknown;
    OriginPath?: unknown;
    OriginAccessControlId?: unknown;
    S3OriginConfig?: { OriginAccessIdentity: string };
    CustomOriginConfig?: Record<string, unknown>;
  }
  const config = distribution.Properties.DistributionConfig as {
    DefaultCacheBehavior: Behaviour;
    CacheBehaviors: Behaviour[];
    Origins: Origin[];
    DefaultRootObject: string;
    Logging: { Bucket: unknown; Prefix: string };
  };
  const originOf = (b: Behaviour) => config.Origins.find((o) => o.Id === b.TargetOriginId) as Origin;
  const s3Origin = (o: Origin) =>
    JSON.stringify(o.DomainName) === JSON.stringify({ 'Fn::GetAtt': [filesBucketId, 'RegionalDomainName'] });

  test('the files bucket is private, encrypted, TLS-only and access-logged; so is its log bucket', () => {
    for (const id of [filesBucketId, logBucketId]) {
      const bucket = statelessJson.Resources[id] as CfnResourceJson;
      assert.deepEqual(
        bucket.Properties.BucketEncryption,
        {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        id,
      );
      assert.deepEqual(
        bucket.Properties.PublicAccessBlockConfiguration,
        {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        id,
      );
      statelessTemplate.hasResourceProperties('AWS::S3::BucketPolicy', {
        Bucket: { Ref: id },
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        },
      });
    }
    const files = statelessJson.Resources[filesBucketId] as CfnResourceJson;
    assert.deepEqual(files.Properties.LoggingConfiguration, {
      DestinationBucketName: { Ref: logBucketId },
      LogFilePrefix: 'files/',
    });
    // The distribution's standard logs go to the same bucket, which outlives the stack.
    assert.deepEqual(config.Logging, {
      Bucket: { 'Fn::GetAtt': [logBucketId, 'RegionalDomainName'] },
      Prefix: 'cloudfront/',
    });
    assert.equal((statelessJson.Resources[logBucketId] as CfnResourceJson).DeletionPolicy, 'Retain');
  });

  test('CloudFront reads the files through Origin Access Control, and nothing else may', () => {
    const [oacId, oac] = resourcesOfType('AWS::CloudFront::OriginAccessControl')[0] as [
      string,
      CfnResourceJson,
    ];
    assert.equal(resourcesOfType('AWS::CloudFront::OriginAccessControl').length, 1);
    const signing = oac.Properties.OriginAccessControlConfig as Record<string, unknown>;
    assert.equal(signing.OriginAccessControlOriginType, 's3');
    assert.equal(signing.SigningBehavior, 'always', 'every request to S3 is signed');
    assert.equal(signing.SigningProtocol, 'sigv4');
    const origins = config.Origins.filter(s3Origin);
    assert.equal(origins.length, 1);
    assert.deepEqual(origins[0]?.OriginAccessControlId, { 'Fn::GetAtt': [oacId, 'Id'] });
    assert.deepEqual(origins[0]?.S3OriginConfig, { OriginAccessIdentity: '' }, 'no legacy OAI');
    // The bucket policy's only Allow: this distribution, reading objects.
    const [, policy] = resourcesOfType('AWS::S3::BucketPolicy').find(
      ([, p]) => JSON.stringify(p.Properties.Bucket) === JSON.stringify({ Ref: filesBucketId }),
    ) as [string, CfnResourceJson];
    const allows = (
      policy.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }
    ).Statement.filter((st) => st.Effect === 'Allow');
    assert.equal(allows.length, 1);
    assert.deepEqual(allows[0]?.Principal, { Service: 'cloudfront.amazonaws.com' });
    assert.equal(allows[0]?.Action, 's3:GetObject');
    assert.match(
      JSON.stringify(allows[0]?.Condition),
      new RegExp(`"AWS:SourceArn".*${idOf(site.distribution)}`),
    );
  });

  test('the dashboard’s files are served from S3; every other path goes to the API, uncached, with every method, header and query string', () => {
    const byPattern = new Map(config.CacheBehaviors.map((b) => [b.PathPattern, b]));
    assert.deepEqual([...byPattern.keys()].sort(), ['/assets/*', '/favicon.svg', '/index.html']);
    for (const b of config.CacheBehaviors) {
      assert.ok(s3Origin(originOf(b)), `${b.PathPattern} goes to the files bucket`);
      assert.deepEqual(b.AllowedMethods, ['GET', 'HEAD'], b.PathPattern);
    }
    // `/` is the page: CloudFront answers the root URL with the default root object (/index.html).
    assert.equal(config.DefaultRootObject, 'index.html');
    // The page and the favicon are read from S3 on every load (a deploy shows at once); the hashed assets are cached.
    assert.equal(byPattern.get('/index.html')?.CachePolicyId, CachePolicy.CACHING_DISABLED.cachePolicyId);
    assert.equal(byPattern.get('/favicon.svg')?.CachePolicyId, CachePolicy.CACHING_DISABLED.cachePolicyId);
    assert.equal(byPattern.get('/assets/*')?.CachePolicyId, CachePolicy.CACHING_OPTIMIZED.cachePolicyId);

    const api = config.DefaultCacheBehavior;
    const apiOrigin = originOf(api);
    assert.match(
      JSON.stringify(apiOrigin.DomainName),
      new RegExp(`"Ref":"${idOf(stateless.api)}".*execute-api`),
    );
    assert.match(
      JSON.stringify(apiOrigin.OriginPath),
      /"Ref":"ApiDeploymentStageprod/,
      'the stage is the origin path',
    );
    assert.equal(apiOrigin.CustomOriginConfig?.OriginProtocolPolicy, 'https-only');
    assert.equal(api.CachePolicyId, CachePolicy.CACHING_DISABLED.cachePolicyId);
    // All viewer headers (Authorization among them: CloudFront forwards it with caching disabled),
    // cookies and query strings, but not Host, which API Gateway needs to be its own.
    assert.equal(
      api.OriginRequestPolicyId,
      OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER.originRequestPolicyId,
    );
    assert.deepEqual([...api.AllowedMethods].sort(), [
      'DELETE',
      'GET',
      'HEAD',
      'OPTIONS',
      'PATCH',
      'POST',
      'PUT',
    ]);
    assert.equal(api.ResponseHeadersPolicyId, undefined, 'the API sets its own headers');
    assert.equal(api.ViewerProtocolPolicy, 'https-only', 'a key is never sent in clear to be redirected');
    assert.equal(
      apiOrigin.CustomOriginConfig?.OriginReadTimeout,
      30,
      'a second over the 29 s agent-call timeout',
    );
  });

  test('`/` reaches the page even if CloudFront picks the behaviour before the root object: the API behaviour’s function redirects it, and only it', () => {
    const assoc = (
      config.DefaultCacheBehavior as unknown as {
        FunctionAssociations?: { EventType: string; FunctionARN: unknown }[];
      }
    ).FunctionAssociations;
    assert.deepEqual(assoc, [
      { EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': [idOf(site.rootToPage), 'FunctionARN'] } },
    ]);
    const fn = statelessJson.Resources[idOf(site.rootToPage)] as CfnResourceJson;
    const code = fn.Properties.FunctionCode as string;
    assert.equal(code, ROOT_TO_PAGE_CODE);
    assert.equal((fn.Properties.FunctionConfig as { Runtime: string }).Runtime, 'cloudfront-js-2.0');
    // The function as CloudFront runs it: the handler of the code, given viewer-request events.
    const handler = new Function(`${code}; return handler;`)() as (e: unknown) => {
      statusCode?: number;
      headers?: Record<string, { value: string }>;
      uri?: string;
    };
    const event = (method: string, uri: string) => ({
      request: { method, uri, headers: {}, querystring: {} },
    });
    for (const method of ['GET', 'HEAD']) {
      const res = handler(event(method, '/'));
      assert.equal(res.statusCode, 302, method);
      assert.equal(res.headers?.location?.value, '/index.html');
    }
    for (const [method, uri] of [
      ['POST', '/'],
      ['GET', '/health'],
      ['GET', '/index.html'],
      ['POST', '/acme/summarise/v1/run'],
      ['GET', '/workspaces'],
    ] as const) {
      const request = event(method, uri).request;
      assert.equal(handler({ request }), request, `${method} ${uri} goes on to the API untouched`);
    }
  });

  test('no API route is shadowed by a dashboard path, whatever an org is named', () => {
    // CloudFront path patterns: * is any run of characters (slashes too), ? one character.
    const matches = (pattern: string, path: string) =>
      new RegExp(
        `^${pattern
          .replace(/[.+^${}()|[\]\\]/g, '\\$&')
          .replace(/\*/g, '.*')
          .replace(/\?/g, '.')}$`,
      ).test(path);
    const patterns = config.CacheBehaviors.map((b) => b.PathPattern as string);
    for (const [, route] of routeList) {
      const path = route.path.replace(/\{[^}]+\}/g, 'x1');
      for (const pattern of patterns) assert.ok(!matches(pattern, path), `${pattern} takes ${route.path}`);
    }
    // An agent call's first segment is any org's name: no dashboard path can start with a valid one.
    for (const pattern of patterns) {
      const first = pattern.split('/')[1] ?? '';
      assert.equal(slugSchema.safeParse(first).success, false, `an org could be named "${first}"`);
    }
    assert.deepEqual(
      dashboardPaths()
        .map((p) => p.pattern)
        .sort(),
      [...patterns].sort(),
    );
  });

  test('each file gets the headers the local server sends with it (functions/platform/dashboard-headers.ts)', () => {
    /** A response headers policy turned back into the header lines it adds. */
    const headersOf = (policyRef: { Ref: string } | undefined) => {
      const policy = statelessJson.Resources[policyRef?.Ref ?? ''] as CfnResourceJson;
      const c = policy.Properties.ResponseHeadersPolicyConfig as {
        SecurityHeadersConfig?: {
          ContentSecurityPolicy?: { ContentSecurityPolicy: string; Override: boolean };
          ContentTypeOptions?: { Override: boolean };
          FrameOptions?: { FrameOption: string; Override: boolean };
          ReferrerPolicy?: { ReferrerPolicy: string; Override: boolean };
          StrictTransportSecurity?: unknown;
          XSSProtection?: unknown;
        };
        CustomHeadersConfig?: { Items: { Header: string; Value: string; Override: boolean }[] };
      };
      const sec = c.SecurityHeadersConfig ?? {};
      assert.equal(sec.StrictTransportSecurity, undefined);
      assert.equal(sec.XSSProtection, undefined);
      const out: Record<string, string> = {};
      for (const item of c.CustomHeadersConfig?.Items ?? []) {
        assert.equal(item.Override, true);
        out[item.Header] = item.Value;
      }
      const set = (name: string, value: string | undefined, override: boolean | undefined) => {
        if (value === undefined) return;
        assert.equal(override, true, name);
        out[name] = value;
      };
      set(
        'Content-Security-Policy',
        sec.ContentSecurityPolicy?.ContentSecurityPolicy,
        sec.ContentSecurityPolicy?.Override,
      );
      set('X-Content-Type-Options', sec.ContentTypeOptions && 'nosniff', sec.ContentTypeOptions?.Override);
      set('X-Frame-Options', sec.FrameOptions?.FrameOption, sec.FrameOptions?.Override);
      set('Referrer-Policy', sec.ReferrerPolicy?.ReferrerPolicy, sec.ReferrerPolicy?.Override);
      return out;
    };
    const sorted = (h: Readonly<Record<string, string>>) => Object.fromEntries(Object.entries(h).sort());
    for (const b of config.CacheBehaviors) {
      const path = (b.PathPattern as string).replace('*', 'index-AbC123.js');
      assert.deepEqual(
        sorted(headersOf(b.ResponseHeadersPolicyId)),
        sorted(DASHBOARD_HEADERS[dashboardFileKind(path)]),
        b.PathPattern,
      );
    }
    const page = headersOf(
      config.CacheBehaviors.find((b) => b.PathPattern === '/index.html')?.ResponseHeadersPolicyId,
    );
    assert.equal(page['Content-Security-Policy'], DASHBOARD_CSP);
    assert.match(DASHBOARD_CSP, /connect-src 'self'/, 'the page calls the API under its own origin');
    assert.equal(page['Cache-Control'], 'no-cache');
    const hashed = headersOf(
      config.CacheBehaviors.find((b) => b.PathPattern === '/assets/*')?.ResponseHeadersPolicyId,
    );
    assert.equal(hashed['Cache-Control'], 'public, max-age=31536000, immutable');
  });

  test('deploys the build of web/ staged at synthesis, pruning older files (the build itself: lambda-assets.test.ts)', () => {
    const [, deployment] = resourcesOfType('Custom::CDKBucketDeployment')[0] as [string, CfnResourceJson];
    assert.deepEqual(deployment.Properties.DestinationBucketName, { Ref: filesBucketId });
    assert.equal(deployment.Properties.Prune, true, 'files of older builds are removed');
    assert.equal(deployment.Properties.RetainOnDelete, false, 'the files go with the stack');
    assert.equal((deployment.Properties.SourceObjectKeys as string[]).length, 1, 'one asset: the build');
  });

  test('the dashboard’s URL is an output', () => {
    statelessTemplate.hasOutput('DashboardUrl', {
      Value: {
        'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [idOf(site.distribution), 'DomainName'] }, '/']],
      },
    });
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

describe('stateless stack: model provider keys (docs/deploy.md)', () => {
  test('one secret, readable by exactly the functions that call models, which get its ARN and no key', () => {
    const secretId = stateless.getLogicalId(stateless.providerKeys.secret.node.defaultChild as never);
    const secret = statelessJson.Resources[secretId];
    assert.equal(secret?.Type, 'AWS::SecretsManager::Secret');
    assert.equal(secret?.Properties.SecretString, '{}', 'created empty: the operator puts the keys in');
    const fnId = (fn: { function: { node: { defaultChild: unknown } } }) =>
      stateless.getLogicalId(fn.function.node.defaultChild as never);
    const readers = new Set([
      fnId(stateless.functions.calls),
      fnId(stateless.functions.mcp),
      fnId(stateless.functions['schedule-runs']),
      fnId(stateless.schedules.fireFunction),
    ]);
    for (const [id, fn] of platformFunctions()) {
      const env = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      for (const name of Object.keys(env))
        assert.doesNotMatch(name, /_API_KEY$/, `${id}: no key in the environment`);
      if (readers.has(id)) assert.deepEqual(env.PLATFORM_LLM_SECRET_ARN, { Ref: secretId }, id);
      else assert.equal(env.PLATFORM_LLM_SECRET_ARN, undefined, id);
    }
    const granted = resourcesOfType('AWS::IAM::Policy').filter(([, pol]) =>
      JSON.stringify(pol.Properties.PolicyDocument).includes(`{"Ref":"${secretId}"}`),
    );
    const roles = granted.flatMap(([, pol]) => (pol.Properties.Roles as { Ref: string }[]).map((r) => r.Ref));
    const roleId = (fn: { role: { node: { defaultChild: unknown } } }) =>
      stateless.getLogicalId(fn.role.node.defaultChild as never);
    assert.deepEqual(
      roles.sort(),
      [
        roleId(stateless.functions.calls),
        roleId(stateless.functions.mcp),
        roleId(stateless.functions['schedule-runs']),
        roleId(stateless.schedules.fireFunction),
      ].sort(),
    );
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

describe('bundles', () => {
  /** A handler bundled as deployed, in memory, with its metafile. */
  // Each handler is built once for the whole file (several tests read the same build).
  const builds = new Map<ResourceModule, ReturnType<typeof buildOnce>>();
  const buildHandler = (module: ResourceModule) => {
    const built = builds.get(module) ?? buildOnce(module);
    builds.set(module, built);
    return built;
  };
  const buildOnce = (module: ResourceModule) =>
    build({
      ...esbuildBuildOptions(
        MODULE_ACCESS[module],
        join(PROJECT_ROOT, 'functions/http', `${module}.ts`),
        'out',
      ),
      write: false,
      metafile: true,
      logLevel: 'silent',
      absWorkingDir: PROJECT_ROOT,
    });

  test('externals are reached only through dynamic import() (a static one would fail at load)', async () => {
    for (const module of MODULES) {
      const result = await buildHandler(module);
      const loaded = loadedAtStart(result.metafile);
      assert.ok(loaded.length > 0, module);
      const staticExternals = loaded.flatMap((o) =>
        o.imports.filter((i) => i.external && !isBuiltin(i.path) && i.kind !== 'dynamic-import'),
      );
      assert.deepEqual(staticExternals, [], module);
    }
  });

  /** The handler's bundle (as deployed) and, per npm package (or "functions/"), the bytes its cold start reads. */
  const lambdaBundleOf = async (module: ResourceModule) => {
    const result = await buildHandler(module);
    const atStart = new Map<string, number>();
    for (const output of loadedAtStart(result.metafile)) {
      for (const [file, input] of Object.entries(output.inputs)) {
        const name = packageOf(file);
        atStart.set(name, (atStart.get(name) ?? 0) + input.bytesInOutput);
      }
    }
    return { metafile: result.metafile, atStart };
  };
  const packageOf = (file: string) => {
    const at = file.lastIndexOf('node_modules/');
    if (at < 0) return 'functions/';
    const [scope, name] = file.slice(at + 'node_modules/'.length).split('/');
    return scope?.startsWith('@') ? `${scope}/${name}` : (scope ?? file);
  };
  const PROVIDERS = ['@ai-sdk/openai', '@ai-sdk/anthropic', '@ai-sdk/google', 'ollama-ai-provider-v2'];

  test('a call route’s cold start reads no model SDK, no sandbox client, no schema engine and no more zod than tasks', async () => {
    const tasks = await lambdaBundleOf('tasks');
    for (const module of ['calls', 'schedule-runs', 'mcp'] as const) {
      const { atStart } = await lambdaBundleOf(module);
      const loaded = [...atStart.keys()];
      for (const lazy of [
        'ai',
        ...PROVIDERS,
        '@ai-sdk/provider-utils',
        '@aws-sdk/client-ecs',
        '@aws-sdk/client-s3',
        'ajv',
        're2js',
        '@modelcontextprotocol/sdk',
      ]) {
        assert.ok(!loaded.includes(lazy), `${module}: ${lazy} is read at cold start`);
      }
      // The AI SDK's zod is kept apart (lib/lambda-bundling.ts, AI_SDK_ZOD_ALIAS); shared, it put
      // 447 KB of zod in the calls cold start against 97 KB in tasks'.
      const zod = atStart.get('zod') ?? 0;
      const tasksZod = tasks.atStart.get('zod') ?? 0;
      assert.ok(zod <= tasksZod * 1.25, `${module}: ${zod} bytes of zod at start, tasks ${tasksZod}`);
    }
  });

  test('only the mcp Lambda carries the MCP SDK', async () => {
    for (const module of MODULES) {
      const { metafile } = await lambdaBundleOf(module);
      const carries = Object.values(metafile.outputs).some((o) =>
        Object.keys(o.inputs).some((f) => packageOf(f) === '@modelcontextprotocol/sdk'),
      );
      assert.equal(carries, module === 'mcp', module);
    }
  });

  test('the LLM gateway loads no provider package: a call imports its own provider’s alone', async () => {
    const { metafile } = await lambdaBundleOf('calls');
    const outputs = metafile.outputs;
    const gateway = Object.keys(outputs).find((path) =>
      outputs[path]?.entryPoint?.endsWith('functions/adapters/llm/ai-sdk-gateway.ts'),
    );
    assert.ok(gateway, 'the gateway is a chunk of its own (a dynamic import)');
    // What loading the gateway's chunk reads: it and the chunks it imports statically.
    const seen = new Set<string>();
    const visit = (path: string) => {
      if (seen.has(path)) return;
      seen.add(path);
      for (const i of outputs[path]?.imports ?? []) if (i.kind === 'import-statement') visit(i.path);
    };
    visit(gateway);
    const read = new Set(
      [...seen].flatMap((path) => Object.keys(outputs[path]?.inputs ?? {}).map(packageOf)),
    );
    assert.ok(read.has('ai'), 'the gateway chunk carries the AI SDK core');
    for (const provider of PROVIDERS) {
      assert.ok(!read.has(provider), `${provider} loads with the gateway`);
      const bundled = Object.values(outputs).some((o) =>
        Object.keys(o.inputs).some((f) => packageOf(f) === provider),
      );
      assert.ok(bundled, `${provider} is in the asset`);
    }
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
    const other = new App({
      outdir: mkdtempSync(join(tmpdir(), 'agenthost-cdk-t-')),
      context: { 'aws:cdk:bundling-stacks': [] },
    });
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

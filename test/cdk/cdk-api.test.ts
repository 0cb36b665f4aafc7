/**
 * The REST API the stateless stack generates from the route table (lib/api-resource-tree.ts): its
 * resources and methods, every route reaching its module's function, the stage's settings and API
 * Gateway's own errors in the platform's envelope.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import { Match } from 'aws-cdk-lib/assertions';
import { matchRoute, restApiFromTemplate } from '../../functions/emulator/api-gateway-definition.ts';
import { type CfnTemplate, TemplateResolver } from '../../functions/emulator/cloudformation-template.ts';
import { MODULES, type ResourceModule, routeList } from '../../functions/platform/routes.ts';
import { ERROR_CODES } from '../../functions/shared/errors.ts';
import { apiMethods, GREEDY_SEGMENT } from '../../lib/api-resource-tree.ts';
import { type CfnResourceJson, synthesizeStacks } from '../helpers/synthesized-stacks.ts';

const {
  outdir,
  stateful,
  stateless,
  statefulTemplate,
  statelessTemplate,
  statelessJson,
  resourcesOfType,
  functionLogicalId,
} = synthesizeStacks();
after(() => rmSync(outdir, { recursive: true, force: true }));

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

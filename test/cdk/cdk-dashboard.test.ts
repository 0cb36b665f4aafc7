/**
 * The web dashboard on the synthesized stateless stack (docs/dashboard.md): its buckets, CloudFront
 * in front of the files and the API, the headers each file gets, and its deployment.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import { Match } from 'aws-cdk-lib/assertions';
import { CachePolicy, OriginRequestPolicy } from 'aws-cdk-lib/aws-cloudfront';
import type { IConstruct } from 'constructs';
import { slugSchema } from '../../functions/core/accounts/slug.ts';
import {
  DASHBOARD_CSP,
  DASHBOARD_HEADERS,
  dashboardFileKind,
} from '../../functions/platform/dashboard-headers.ts';
import { routeList } from '../../functions/platform/routes.ts';
import { dashboardPaths, ROOT_TO_PAGE_CODE } from '../../lib/constructs/dashboard-site.ts';
import { type CfnResourceJson, synthesizeStacks } from '../helpers/synthesized-stacks.ts';

const { outdir, stateless, statelessTemplate, statelessJson, resourcesOfType } = synthesizeStacks();
after(() => rmSync(outdir, { recursive: true, force: true }));

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

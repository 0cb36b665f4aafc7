import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { AssetHashType, DockerImage, Duration, type ILocalBundling, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import * as s3deploy from 'aws-cdk-lib/aws-s3-deployment';
import { Construct } from 'constructs';
import { slugSchema } from '../../functions/core/accounts/slug.ts';
import {
  DASHBOARD_HEADERS,
  type DashboardFileKind,
  HASHED_ASSETS_PREFIX,
} from '../../functions/platform/dashboard-headers.ts';
import { acknowledge, cdkNagName } from '../acknowledge.ts';
import { PROJECT_ROOT } from './platform-function.ts';

/** The dashboard's source (Vite root) and the script that builds it (scripts/build-web.ts). */
export const WEB_ROOT = join(PROJECT_ROOT, 'web');
const BUILD_SCRIPT = join(PROJECT_ROOT, 'scripts', 'build-web.ts');

/**
 * Builds web/ with Vite into the asset directory CDK stages, at every synthesis: what is deployed
 * is the source as it is, never a web/dist left over from an older checkout. Vite's API is async
 * and CDK's bundling hook is not, so the build runs as a child process on this same Node.
 */
class ViteBundling implements ILocalBundling {
  tryBundle(outputDir: string): boolean {
    execFileSync(process.execPath, [BUILD_SCRIPT, outputDir], { stdio: ['ignore', 'ignore', 'inherit'] });
    return true;
  }
}

/**
 * The files the distribution serves from S3, as CloudFront path patterns with the kind of headers
 * they get: the page, Vite's hashed assets, and each file or folder of web/public, which Vite
 * copies to the root of the build under its own name. Everything else is the API's. Read from the
 * source, not the build, so the routing is the same whether or not the build ran (bundling is
 * skipped when a test synthesizes for the template only).
 */
export function dashboardPaths(webRoot: string = WEB_ROOT): { pattern: string; kind: DashboardFileKind }[] {
  const publicFiles = readdirSync(join(webRoot, 'public'), { withFileTypes: true }).map((entry) => ({
    pattern: entry.isDirectory() ? `/${entry.name}/*` : `/${entry.name}`,
    kind: 'other' as const,
  }));
  const paths: { pattern: string; kind: DashboardFileKind }[] = [
    { pattern: '/index.html', kind: 'page' },
    { pattern: `${HASHED_ASSETS_PREFIX}*`, kind: 'hashed' },
    ...publicFiles.sort((a, b) => a.pattern.localeCompare(b.pattern)),
  ];
  // An agent call is /{org}/{agent}/{version}/{endpoint}: a first segment that could be an org's
  // name would send that org's calls to S3. Names with a dot never can; others must be reserved.
  for (const { pattern } of paths) {
    const first = pattern.split('/')[1] ?? '';
    if (slugSchema.safeParse(first).success) {
      throw new Error(
        `The dashboard's path ${pattern} could be an org's (/{org}/…): add "${first}" to RESERVED_SLUGS (functions/core/accounts/slug.ts)`,
      );
    }
  }
  return paths;
}

/**
 * A response headers policy that sets exactly the headers the local server sets on the same
 * files (functions/platform/dashboard-headers.ts). CloudFront takes the security headers as typed
 * settings and refuses them as custom headers, so each is translated; a header this does not know
 * fails the synthesis rather than being dropped.
 */
/**
 * The CloudFront Function (JavaScript 2.0 runtime) on the API's behaviour: a GET or HEAD of `/`
 * is redirected to the page; any other request goes on to the API unchanged.
 */
export const ROOT_TO_PAGE_CODE = `function handler(event) {
  var request = event.request;
  if (request.uri === '/' && (request.method === 'GET' || request.method === 'HEAD')) {
    return {
      statusCode: 302,
      statusDescription: 'Found',
      headers: { location: { value: '/index.html' }, 'cache-control': { value: 'no-cache' } },
    };
  }
  return request;
}`;

function headersPolicy(scope: Construct, kind: DashboardFileKind): cloudfront.ResponseHeadersPolicy {
  const security: {
    -readonly [K in keyof cloudfront.ResponseSecurityHeadersBehavior]: cloudfront.ResponseSecurityHeadersBehavior[K];
  } = {};
  const custom: cloudfront.ResponseCustomHeader[] = [];
  for (const [name, value] of Object.entries(DASHBOARD_HEADERS[kind])) {
    switch (name.toLowerCase()) {
      case 'content-security-policy':
        security.contentSecurityPolicy = { contentSecurityPolicy: value, override: true };
        break;
      case 'x-content-type-options':
        if (value !== 'nosniff')
          throw new Error(`X-Content-Type-Options "${value}": CloudFront sets nosniff only`);
        security.contentTypeOptions = { override: true };
        break;
      case 'x-frame-options':
        security.frameOptions = { frameOption: frameOption(value), override: true };
        break;
      case 'referrer-policy':
        security.referrerPolicy = { referrerPolicy: referrerPolicy(value), override: true };
        break;
      case 'strict-transport-security':
      case 'x-xss-protection':
        throw new Error(`${name}: add its translation to CloudFront's typed security headers here`);
      default:
        custom.push({ header: name, value, override: true });
    }
  }
  const names = { page: 'Page', hashed: 'HashedAssets', other: 'OtherFiles' } as const;
  return new cloudfront.ResponseHeadersPolicy(scope, `${names[kind]}Headers`, {
    comment: `agenthost dashboard, ${kind} files: the local server's headers (dashboard-headers.ts)`,
    securityHeadersBehavior: security,
    ...(custom.length > 0 ? { customHeadersBehavior: { customHeaders: custom } } : {}),
  });
}

function frameOption(value: string): cloudfront.HeadersFrameOption {
  const known = Object.values(cloudfront.HeadersFrameOption) as string[];
  if (!known.includes(value)) throw new Error(`X-Frame-Options "${value}" is not one CloudFront sets`);
  return value as cloudfront.HeadersFrameOption;
}

function referrerPolicy(value: string): cloudfront.HeadersReferrerPolicy {
  const known = Object.values(cloudfront.HeadersReferrerPolicy) as string[];
  if (!known.includes(value)) throw new Error(`Referrer-Policy "${value}" is not one CloudFront sets`);
  return value as cloudfront.HeadersReferrerPolicy;
}

export interface DashboardSiteProps {
  /** The platform's API: the distribution's second origin, so the page calls it same-origin. */
  api: apigateway.RestApi;
  /**
   * How long CloudFront waits for the API's answer, in seconds (1-60 in every account; more needs
   * CloudFront's origin-response-timeout quota raised). Set just above the agent-call timeout.
   * @default 30, CloudFront's default
   */
  apiReadTimeoutSeconds?: number;
}

/**
 * The web dashboard in AWS (docs/dashboard.md): the build of web/ in a private S3 bucket, served by
 * a CloudFront distribution that also fronts the API, so the page and the API share one origin
 * (the page's `connect-src 'self'` holds, and no CORS is involved).
 *
 * Routing: CloudFront picks a behaviour by path pattern alone, and the API's paths start with a
 * variable (`/{org}/{agent}/…`), so the API is the default behaviour (`*`) and the dashboard's files
 * are the named exceptions (dashboardPaths: `/index.html`, `/assets/*`, web/public's files). The
 * root `/` is the page through the distribution's default root object: CloudFront answers a
 * request for the root URL as a request for `/index.html`, which the `/index.html` behaviour
 * sends to S3. The API has no route at `/` (GET / is its 404), and none of these names can be an
 * API path: an org's name never has a dot, and "assets" is a reserved org name.
 */
export class DashboardSite extends Construct {
  readonly bucket: s3.Bucket;
  readonly logBucket: s3.Bucket;
  readonly distribution: cloudfront.Distribution;
  /** The build of web/ made at synthesis, zipped into the CDK assets bucket on deploy. */
  readonly files: s3assets.Asset;
  readonly deployment: s3deploy.BucketDeployment;
  /** The viewer-request function on the API's behaviour that sends `/` to the page. */
  readonly rootToPage: cloudfront.Function;
  /**
   * CDK's handler behind the deployment: a Python function of aws-cdk-lib's (one per stack, beside
   * this construct at the stack's root) that runs only during a deploy, whose failure fails the
   * deploy. Not a platform function: it has no platform settings and no alarm.
   */
  readonly deploymentHandler: Construct;
  /** `https://<distribution domain>/`: the dashboard, and the API under the same origin. */
  readonly url: string;

  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: the construct's resources and the grants between them, made in one place (helpers would take most of its fields)
  constructor(scope: Construct, id: string, props: DashboardSiteProps) {
    super(scope, id);
    // Server access logs delivered under a bucket policy, not the legacy log-delivery ACL.
    this.node.setContext('@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy', true);

    // The bucket's server access logs and the distribution's standard logs. CloudFront's standard
    // logging writes with an ACL, so this bucket keeps ACLs on (object writer); it is still
    // private. Kept for 90 days and retained on teardown, like the load balancer's logs.
    this.logBucket = new s3.Bucket(this, 'Logs', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      objectOwnership: s3.ObjectOwnership.OBJECT_WRITER,
      lifecycleRules: [{ expiration: Duration.days(90) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // The build's files: private, reached only by this distribution (Origin Access Control). They
    // are code, rebuilt on every deploy, so they go with the stack: the deployment below deletes
    // them when it is deleted, and the empty bucket goes after it.
    this.bucket = new s3.Bucket(this, 'Files', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: this.logBucket,
      serverAccessLogsPrefix: 'files/',
      removalPolicy: RemovalPolicy.DESTROY,
    });

    const files = origins.S3BucketOrigin.withOriginAccessControl(this.bucket);
    const api = new origins.RestApiOrigin(props.api, {
      ...(props.apiReadTimeoutSeconds !== undefined
        ? { readTimeout: Duration.seconds(props.apiReadTimeoutSeconds) }
        : {}),
    });
    const policies: Record<DashboardFileKind, cloudfront.ResponseHeadersPolicy> = {
      page: headersPolicy(this, 'page'),
      hashed: headersPolicy(this, 'hashed'),
      other: headersPolicy(this, 'other'),
    };
    const fileBehaviours: Record<string, cloudfront.BehaviorOptions> = {};
    for (const { pattern, kind } of dashboardPaths()) {
      fileBehaviours[pattern] = {
        origin: files,
        allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        // Hashed assets are cached at the edge (a new build is a new name). The page and the
        // other files are not: each load reads S3, so a deploy shows at once without an
        // invalidation, and the Cache-Control the browser sees is the policy's no-cache.
        cachePolicy:
          kind === 'hashed'
            ? cloudfront.CachePolicy.CACHING_OPTIMIZED
            : cloudfront.CachePolicy.CACHING_DISABLED,
        responseHeadersPolicy: policies[kind],
        compress: true,
      };
    }

    // `/` is the page through defaultRootObject, if CloudFront applies it before it picks the
    // behaviour, which its documentation does not say in so many words. If it picks first, `/`
    // reaches the API's behaviour: this function, run there before the origin, then sends the
    // browser to `/index.html` (a behaviour of the files bucket) instead of the API's 404. No API
    // route is at `/`, and every other path passes through untouched.
    this.rootToPage = new cloudfront.Function(this, 'RootToPage', {
      comment: 'agenthost: / is the dashboard page',
      runtime: cloudfront.FunctionRuntime.JS_2_0,
      code: cloudfront.FunctionCode.fromInline(ROOT_TO_PAGE_CODE),
    });

    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: 'agenthost: the web dashboard, and the API under the same origin',
      defaultRootObject: 'index.html',
      // The API: never cached, every method, and every viewer header (Authorization included,
      // which CloudFront forwards under this pair of managed policies), cookie and query string
      // passed on. Not the Host header: API Gateway answers only under its own host name.
      defaultBehavior: {
        origin: api,
        allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
        cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
        originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
        functionAssociations: [
          { function: this.rootToPage, eventType: cloudfront.FunctionEventType.VIEWER_REQUEST },
        ],
      },
      additionalBehaviors: fileBehaviours,
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      enableLogging: true,
      logBucket: this.logBucket,
      logFilePrefix: 'cloudfront/',
    });
    this.url = `https://${this.distribution.distributionDomainName}/`;

    this.files = new s3assets.Asset(this, 'Build', {
      path: WEB_ROOT,
      assetHashType: AssetHashType.OUTPUT,
      bundling: {
        // Never pulled: the local build always succeeds or throws.
        image: DockerImage.fromRegistry('agenthost-builds-the-dashboard-locally'),
        local: new ViteBundling(),
      },
    });
    this.deployment = new s3deploy.BucketDeployment(this, 'Deployment', {
      sources: [s3deploy.Source.bucket(this.files.bucket, this.files.s3ObjectKey)],
      destinationBucket: this.bucket,
      // Files of older builds are removed (prune, the default). No invalidation is needed: the
      // page is never cached at the edge, and a new build's assets have new names.
      retainOnDelete: false,
      logGroup: new logs.LogGroup(this, 'DeploymentLogs', {
        retention: logs.RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      }),
    });
    // The role's scope is the singleton's function (aws-cdk-lib exposes the role, not the function).
    this.deploymentHandler = this.deployment.handlerRole.node.scope as Construct;

    this.acknowledgeFindings();
  }

  /** The cdk-nag findings this design accepts, each with its reason. */
  private acknowledgeFindings(): void {
    const stack = Stack.of(this);
    // CDK's deployment handler and its role: aws-cdk-lib's, not configurable beyond its log group.
    const handlerRole = this.deployment.handlerRole;
    const objects = (bucket: s3.IBucket) =>
      `AwsSolutions-IAM5[Resource::${cdkNagName(stack.resolve(bucket.arnForObjects('*')))}]`;
    acknowledge(handlerRole, [
      {
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        reason:
          "CDK's BucketDeployment handler writes its logs under AWSLambdaBasicExecutionRole, the AWS managed policy for that; the role is CDK's and runs only during a deploy.",
      },
      ...['s3:GetObject*', 's3:GetBucket*', 's3:List*', 's3:DeleteObject*', 's3:Abort*'].map((action) => ({
        id: `AwsSolutions-IAM5[Action::${action}]`,
        reason:
          "CDK's BucketDeployment grants (grantRead of the build's zip in the CDK assets bucket, grantReadWrite of the dashboard bucket) use these action groups; they cover those two buckets only.",
      })),
      {
        id: objects(this.files.bucket),
        reason:
          "The CDK assets bucket's objects: the build is a zip named by its content hash, read by the handler during the deploy.",
      },
      {
        id: objects(this.bucket),
        reason:
          "The dashboard bucket's objects: the handler copies the build's files in and prunes those of older builds, whose names are content hashes.",
      },
    ]);
    acknowledge(this.deploymentHandler, [
      ...['Serverless-LambdaDLQ', 'Serverless-LambdaLatestVersion', 'Serverless-LambdaTracing'].map((id) => ({
        id,
        reason:
          "CDK's BucketDeployment handler: CloudFormation invokes it synchronously during a deploy (a failure fails the deploy, nothing to keep in a queue), and its runtime and settings are aws-cdk-lib's, not ours to configure.",
      })),
      {
        id: 'AwsSolutions-L1',
        reason:
          "CDK's BucketDeployment handler runs the Python runtime aws-cdk-lib pins for it (its AWS CLI layer needs it); upgrading aws-cdk-lib moves it, the function is not ours to configure.",
      },
    ]);
    acknowledge(this.distribution, [
      {
        id: 'AwsSolutions-CFR1',
        reason:
          'The dashboard and API serve their users wherever they are; access is controlled by API keys, not by country.',
      },
      {
        id: 'AwsSolutions-CFR2',
        reason:
          'No WAF web ACL by default, as for the API stage (AwsSolutions-APIG3): abuse is bounded by stage throttling and the per-account quotas the functions enforce, and a web ACL is charged per month and per rule. Operators can attach one to the distribution (docs/deploy.md).',
      },
      {
        id: 'AwsSolutions-CFR4',
        reason:
          "The distribution uses CloudFront's default *.cloudfront.net certificate (no domain of its own is configured), whose viewer security policy CloudFront fixes; only a custom certificate can raise the minimum TLS version.",
      },
    ]);
  }
}

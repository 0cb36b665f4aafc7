import { CfnOutput, Fn, NestedStack, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { WARM_POOL_SIZE } from '../functions/adapters/aws/ecs-sandbox-options.ts';
import { binaryMediaTypes } from '../functions/edge/binary-media-types.ts';
import { MODULES, type ResourceModule, routeList } from '../functions/platform/routes.ts';
import { acknowledge } from './acknowledge.ts';
import { apiMethods } from './api-resource-tree.ts';
import { ApiWaf } from './constructs/api-waf.ts';
import { BillingJobs } from './constructs/billing-jobs.ts';
import { DashboardSite } from './constructs/dashboard-site.ts';
import { LlmProviderKeys } from './constructs/llm-provider-keys.ts';
import { Operations } from './constructs/operations.ts';
import { PlatformFunction } from './constructs/platform-function.ts';
import { RunWorker } from './constructs/run-worker.ts';
import { SandboxCluster } from './constructs/sandbox-cluster.ts';
import { ScheduleFiring } from './constructs/schedule-firing.ts';
import { ServiceHosting } from './constructs/service-hosting.ts';
import { WarmPoolRefill } from './constructs/warm-pool-refill.ts';
import { addGatewayResponses } from './gateway-responses.ts';
import { moduleAccess } from './module-access.ts';
import { moduleFunctions } from './module-functions.ts';
import type { StatelessStackProps } from './stateless-stack-props.ts';

/**
 * The code: one Lambda per resource module and a regional REST API whose resources and methods
 * are generated from the route table (functions/platform/routes.ts), each method a Lambda proxy
 * to its module's function. Authentication (bearer API keys), validation and rate limits happen in
 * the functions, exactly as on the local server.
 */
export class StatelessStack extends Stack {
  readonly api: apigateway.RestApi;
  readonly functions: Record<ResourceModule, PlatformFunction>;
  readonly sandbox: SandboxCluster;
  /**
   * The warm runner pool's refill every minute, unless the pool has no floor to keep (sandboxPoolMin=0,
   * or sandboxPoolMax=0): a claim starts its own runner and no minute's refill would start one.
   */
  readonly warmPool: WarmPoolRefill | undefined;
  readonly schedules: ScheduleFiring;
  readonly runs: RunWorker;
  readonly services: ServiceHosting | undefined;
  readonly billing: BillingJobs;
  readonly providerKeys: LlmProviderKeys;
  readonly operations: Operations;
  readonly dashboard: DashboardSite;

  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: the stack's composition: its constructs and what each is given of the others, in one place
  constructor(scope: Construct, id: string, props: StatelessStackProps) {
    super(scope, id, props);
    const stageName = props.stageName ?? 'prod';
    const throttle = props.throttle ?? { rateLimit: 100, burstLimit: 200 };

    const accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: logs.RetentionDays.THREE_MONTHS,
      // Who called what survives a teardown of the code.
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.api = new apigateway.RestApi(this, 'Api', {
      restApiName: `${id}-api`,
      description: 'agenthost HTTP API',
      endpointConfiguration: { types: [apigateway.EndpointType.REGIONAL] },
      // Routes with a binary body (bundle uploads) get it base64-encoded, as the handlers expect.
      binaryMediaTypes: binaryMediaTypes(),
      // Execution logs at ERROR need API Gateway's account-level CloudWatch role. It is retained
      // on teardown (the account setting may be shared with other APIs in the region).
      cloudWatchRole: true,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
      deployOptions: {
        stageName,
        tracingEnabled: true,
        throttlingRateLimit: throttle.rateLimit,
        throttlingBurstLimit: throttle.burstLimit,
        metricsEnabled: true,
        loggingLevel: apigateway.MethodLoggingLevel.ERROR,
        // Never log bodies: a create-key response carries the only copy of the new key.
        dataTraceEnabled: false,
        accessLogDestination: new apigateway.LogGroupLogDestination(accessLogs),
        accessLogFormat: accessLogFormat(),
      },
    });

    const publicUrl =
      props.publicUrl ??
      `https://${this.api.restApiId}.execute-api.${this.region}.${this.urlSuffix}/${stageName}`;

    const table = {
      name: Fn.importValue(props.shared.tableName),
      arn: Fn.importValue(props.shared.tableArn),
    };
    const bundleBucket = {
      name: Fn.importValue(props.shared.bundleBucketName),
      arn: Fn.importValue(props.shared.bundleBucketArn),
    };

    const callTimeout = props.callTimeoutSeconds ?? 29;
    if (!Number.isInteger(callTimeout) || callTimeout < 1 || callTimeout > 300) {
      throw new Error(
        `callTimeoutSeconds must be a whole number from 1 to 300, got ${props.callTimeoutSeconds}`,
      );
    }
    if (
      props.allowedHosts !== undefined &&
      !/^\s*(\*|[A-Za-z0-9.-]+)(\s*,\s*(\*|[A-Za-z0-9.-]+))*\s*$/.test(props.allowedHosts)
    ) {
      throw new Error(
        `allowedHosts must be comma-separated host names such as mcp.example.com (no scheme or port), or *; got ${props.allowedHosts}`,
      );
    }
    const { functions, integrations } = moduleFunctions(this, {
      table,
      bundleBucket,
      secretsPrefix: props.secretsPrefix,
      publicUrl,
      corsOrigins: props.corsOrigins,
      allowedHosts: props.allowedHosts,
      callTimeout,
    });
    this.functions = functions;

    // Room to grow (docs/deploy.md, "Stacks"): what has no name a deployment's
    // data or users depend on lives in nested stacks of this one, each far from CloudFormation's
    // 500 resources a stack: the sandbox (its VPC, cluster, key and the pool's refill), the
    // operator's alarms, dashboard and housekeeping job, and the run worker. Construct ids inside them are kept, so
    // logical ids are too.
    const sandboxStack = new NestedStack(this, 'SandboxStack', {
      description: 'agenthost sandbox: the VPC, cluster and key of tool runs, and the warm pool refill',
    });
    const operationsStack = new NestedStack(this, 'OperationsStack', {
      description: "agenthost operations: the operator's alarms and dashboard, and the housekeeping job",
    });

    // Tool runs: Fargate tasks that the run paths start (docs/sandbox-aws.md).
    this.sandbox = new SandboxCluster(sandboxStack, 'Sandbox', {
      bundleBucket,
      pool: props.sandboxPool ?? WARM_POOL_SIZE,
      ...(props.sandboxAzs !== undefined ? { maxAzs: props.sandboxAzs } : {}),
      spot: props.sandboxSpot ?? false,
      dnsFirewall: props.sandboxDnsFirewall ?? true,
      ...(props.sandboxIdleMinSeconds !== undefined ? { idleMinSeconds: props.sandboxIdleMinSeconds } : {}),
    });
    const pool = props.sandboxPool ?? WARM_POOL_SIZE;
    this.warmPool =
      pool.max > 0 && pool.min > 0
        ? new WarmPoolRefill(sandboxStack, 'WarmPool', {
            sandbox: this.sandbox,
            table,
            bundleBucket,
            secretsPrefix: props.secretsPrefix,
          })
        : undefined;
    // Cron firing and alert delivery (docs/schedules.md).
    this.schedules = new ScheduleFiring(this, 'Schedules', {
      table,
      bundleBucket,
      secretsPrefix: props.secretsPrefix,
      publicUrl,
    });
    this.sandbox.grantRun(this.schedules.fireFunction);
    // Always-on services (docs/services.md), when a domain and certificate are given.
    this.services = props.services
      ? new ServiceHosting(this, 'Services', {
          ...props.services,
          table,
          bundleBucket,
          secretsPrefix: props.secretsPrefix,
          deadLetters: this.schedules.deadLetters,
        })
      : undefined;
    if (this.services) this.schedules.grantQueueAlerts(this.services.eventsFunction);
    // Runs handed over once admitted, run to their end by a durable function (docs/runs.md).
    const runsStack = new NestedStack(this, 'RunsStack', {
      description: 'agenthost runs: the run worker, a durable function that runs long runs to their end',
    });
    this.runs = new RunWorker(runsStack, 'Runs', {
      table,
      bundleBucket,
      secretsPrefix: props.secretsPrefix,
      publicUrl,
    });
    this.sandbox.grantRun(this.runs.worker);
    this.schedules.grantQueueAlerts(this.runs.worker);
    // Stripe's keys and the reconciliation of unfinished paid calls (docs/billing.md).
    this.billing = new BillingJobs(this, 'Billing', {
      table,
      bundleBucket,
      secretsPrefix: props.secretsPrefix,
      // Its secret (the operator's Stripe keys) stays here; the housekeeping job is the operator's.
      jobScope: new Construct(operationsStack, 'Billing'),
    });
    // Housekeeping deletes the run objects of sessions that never closed (docs/sandbox-aws.md;
    // JOB_ACCESS.housekeeping.runObjects).
    this.sandbox.grantSweep(this.billing.housekeepingFunction);
    // The model providers' keys, for every function that calls models (docs/deploy.md).
    this.providerKeys = new LlmProviderKeys(this, 'ProviderKeys');
    this.providerKeys.grantRead(this.schedules.fireFunction);
    this.providerKeys.grantRead(this.runs.worker);
    for (const module of MODULES) {
      const access = moduleAccess(module);
      if (access.llm) this.providerKeys.grantRead(functions[module]);
      if (access.services && this.services) this.services.grantManage(functions[module]);
      if (access.payments) this.billing.grantPayments(functions[module]);
      if (access.sandbox) this.sandbox.grantRun(functions[module]);
      if (access.scheduler === 'manage') this.schedules.grantManage(functions[module]);
      if (access.scheduler === 'remove') this.schedules.grantRemove(functions[module]);
      if (access.alerts === 'queue') this.schedules.grantQueueAlerts(functions[module]);
      if (access.runs === 'hand-over') this.runs.grantStart(functions[module]);
    }

    // The resource tree and its methods (api-resource-tree.ts): a one-module subtree is one
    // resource and its greedy child, each with ANY to the module's function; a shared path has a
    // method per route, and ANY to the edge function, which answers 405 with Allow, a CORS
    // preflight, or 404, with the rate-limit headers API Gateway's own answers cannot carry
    // (docs/http.md). A request to a path outside the resource tree still gets the static 404.
    for (const m of apiMethods(routeList)) {
      this.api.root
        .resourceForPath(m.path)
        .addMethod(m.method, integrations[m.target], m.operationId ? { operationName: m.operationId } : {});
    }

    addGatewayResponses(this.api);

    // Alarms and a dashboard for the operator (docs/deploy.md, "What to watch").
    this.operations = new Operations(operationsStack, 'Operations', {
      api: this.api,
      functions: {
        ...Object.fromEntries(MODULES.map((m) => [m, functions[m].function])),
        'schedule-fire': this.schedules.fireFunction.function,
        'alert-delivery': this.schedules.alertsFunction.function,
        housekeeping: this.billing.housekeepingFunction.function,
        'run-worker': this.runs.worker.function,
        ...(this.warmPool ? { 'sandbox-pool': this.warmPool.function.function } : {}),
        ...(this.services ? { 'service-events': this.services.eventsFunction.function } : {}),
      },
      deadLetters: this.schedules.deadLetters,
      functionAlarms: props.functionAlarms ?? true,
    });

    // The web dashboard (docs/dashboard.md): web/'s build on S3 behind CloudFront, which also
    // fronts this API so the page calls it same-origin. CloudFront waits for the API a second
    // longer than an agent call may last, up to the 60 s every account allows.
    this.dashboard = new DashboardSite(this, 'Dashboard', {
      api: this.api,
      apiReadTimeoutSeconds: Math.min(60, callTimeout + 1),
    });

    new CfnOutput(this, 'ApiUrl', { value: this.api.url, description: 'Base URL of the agenthost API' });
    new CfnOutput(this, 'DashboardUrl', {
      value: this.dashboard.url,
      description: 'The web dashboard; the API is also served under this origin',
    });
    new CfnOutput(this, 'ProviderKeysSecretArn', {
      value: this.providerKeys.secret.secretArn,
      description: 'Secrets Manager secret for the model provider keys (JSON; docs/deploy.md)',
    });

    // Every platform function, the nested constructs' too (no resource is added: an environment
    // variable and a statement in each role's existing policy).
    if (props.tracing === 'xray') {
      for (const c of this.node.findAll()) if (c instanceof PlatformFunction) c.exportTracesToXray();
    }

    // Instances held for (and the most of) the functions that run agents, when the operator sets them.
    const reserved = props.reservedConcurrency ?? {};
    for (const [fn, n] of [
      [functions.calls, reserved.calls],
      [functions.mcp, reserved.mcp],
      [this.schedules.fireFunction, reserved.scheduleFire],
    ] as const) {
      if (n !== undefined)
        (fn.function.node.defaultChild as lambda.CfnFunction).reservedConcurrentExecutions = n;
    }
    // What the web ACL refuses never reaches a function or the table.
    if (props.waf) new ApiWaf(this, 'Waf', { api: this.api });
    this.acknowledgeApiFindings(props.waf ?? false);
  }

  /** The cdk-nag findings this design accepts, each with its reason. */
  private acknowledgeApiFindings(waf: boolean): void {
    acknowledge(this.api, [
      {
        id: 'AwsSolutions-APIG4',
        reason:
          'Callers authenticate with agenthost bearer API keys, which the functions verify against the hashed keys in the table (functions/edge/authentication.ts) before any operation; the routes the route table marks auth "none" (health, the OpenAPI document, the public agent directory) are public by design. API Gateway authorizers (IAM, Cognito) cannot verify these keys.',
      },
      {
        id: 'AwsSolutions-COG4',
        reason:
          'The platform has its own accounts and bearer API keys (spec "Authentication"); there is no Cognito user pool, and keys are verified in the functions.',
      },
      {
        id: 'AwsSolutions-APIG2',
        reason:
          "Requests are validated in the functions with the route table's zod schemas, which report every failing field in the platform's error envelope (INVALID_INPUT with details.fields), identically on the local server; an API Gateway request validator would answer in a different shape.",
      },
      ...(waf
        ? []
        : [
            {
              id: 'AwsSolutions-APIG3',
              reason:
                'No WAF web ACL unless -c waf=on: abuse is bounded by the stage throttle and the per-account request rates and daily quotas the functions enforce, and a web ACL is charged per month, per rule and per request (docs/deploy.md, "Context values").',
            },
          ]),
      {
        id: `AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]`,
        reason:
          "API Gateway's account-level CloudWatch role, required for execution logging, uses AmazonAPIGatewayPushToCloudWatchLogs, the AWS managed policy documented for it.",
      },
    ]);
  }
}

function accessLogFormat(): apigateway.AccessLogFormat {
  const f = apigateway.AccessLogField;
  // No headers: the Authorization header carries the caller's API key. No request path either: a
  // webhook trigger's path carries its secret (/webhooks/{schedule_id}/{webhook_secret}); the
  // route template (`resource`) says which route was called.
  return apigateway.AccessLogFormat.custom(
    JSON.stringify({
      requestId: f.contextRequestId(),
      requestTime: f.contextRequestTimeEpoch(),
      ip: f.contextIdentitySourceIp(),
      method: f.contextHttpMethod(),
      resource: f.contextResourcePath(),
      status: f.contextStatus(),
      protocol: f.contextProtocol(),
      responseLength: f.contextResponseLength(),
      responseLatency: f.contextResponseLatency(),
      integrationLatency: f.contextIntegrationLatency(),
      integrationStatus: f.contextIntegrationStatus(),
      errorType: f.contextErrorResponseType(),
      errorMessage: f.contextErrorMessage(),
      xrayTraceId: f.contextXrayTraceId(),
    }),
  );
}

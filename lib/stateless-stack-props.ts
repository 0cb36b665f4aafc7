import type { StackProps } from 'aws-cdk-lib';
import type { StatefulExports } from './stateful-stack.ts';
import type { TracingMode } from './tracing.ts';

/**
 * What an operator chooses for the stateless stack (lib/stateless-stack.ts): the `-c` context
 * values of lib/agenthost-app.ts, each with its default (docs/deploy.md, "Context values").
 */
export interface StatelessStackProps extends StackProps {
  /** The sandbox's warm runner pool: floor and ceiling (0 turns it off). @default 2 and 10 */
  sandboxPool?: { min: number; max: number };
  /** Availability zones of the sandbox VPC (each adds three interface endpoints). @default 2 */
  sandboxAzs?: number;
  /** The unbound warm runners on Fargate Spot, on-demand as a fallback. @default false */
  sandboxSpot?: boolean;
  /** The sandbox VPC's DNS Firewall: its tasks resolve only the AWS names they need. @default true */
  sandboxDnsFirewall?: boolean;
  /** An AWS WAF web ACL in front of the API stage (constructs/api-waf.ts). @default false */
  waf?: boolean;
  /** Reserved concurrency of the functions that run agents. @default none reserved */
  reservedConcurrency?: { calls?: number; mcp?: number; scheduleFire?: number };
  /** An alarm per function besides the API's and the lost cron fires'. @default true */
  functionAlarms?: boolean;
  /** A bound warm runner's shortest wait, seconds. @default 60 (the adapter's own) */
  sandboxIdleMinSeconds?: number;
  /** What the stateful stack exports (table, bundle bucket), by export name. */
  shared: StatefulExports;
  /** The API Gateway stage name: the first segment of every URL path. @default 'prod' */
  stageName?: string;
  /** PLATFORM_SECRETS_PREFIX: where this deployment's workspace secrets live in Secrets Manager. */
  secretsPrefix: string;
  /**
   * API Gateway's integration timeout for the agent-call route, in seconds (1-300; default 29, the
   * limit every account has; more needs the regional-API quota increase). The calls function gets
   * a Lambda timeout above it, and PLATFORM_MAX_CALL_SECONDS one second below it, so a call that
   * runs out of time ends as the platform's own 504 TIMEOUT (its upstream aborted, the call
   * recorded) rather than API Gateway's cut-off.
   */
  callTimeoutSeconds?: number;
  /**
   * Steady-state requests per second and burst for the whole stage (`-c apiThrottleRps`,
   * `-c apiThrottleBurst`): a ceiling that protects the account's Lambda concurrency and the table.
   * Per-account rates and daily quotas are the functions' job.
   * @default 100 per second, burst 200
   */
  throttle?: { rateLimit: number; burstLimit: number };
  /** PLATFORM_PUBLIC_URL, when the API is served under a custom domain. @default the execute-api URL */
  publicUrl?: string;
  /**
   * PLATFORM_CORS_ORIGINS: the browser origins allowed to call the API (comma-separated, e.g.
   * https://app.example.com). @default none (docs/http.md)
   */
  corsOrigins?: string;
  /**
   * PLATFORM_ALLOWED_HOSTS of the mcp function: host names besides the public URL's under which
   * POST /mcp answers (a custom domain in front of the API; comma-separated). @default none (docs/mcp.md)
   */
  allowedHosts?: string;
  /**
   * Always-on services: the domain of their URLs (a wildcard DNS record to the services load
   * balancer) and an ACM certificate for *.<domain>. Without them no service hosting is built and
   * deploys are refused with a clear message.
   */
  services?: { domain: string; certificateArn: string };
  /**
   * `-c tracing=…` (lib/tracing.ts): with `xray`, every platform function sends its spans to X-Ray's
   * OTLP endpoint. Lambda's active tracing and the stage's tracing are on either way.
   * @default 'off'
   */
  tracing?: TracingMode;
}

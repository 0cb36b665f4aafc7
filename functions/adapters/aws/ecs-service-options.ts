/**
 * The ECS service runner's settings (functions/platform/deps.ts builds them from the services
 * configuration): its AWS clients, the cluster's network, the load balancer's listener, the log
 * group, the image and the task programs. A file of their own, as every part of the runner (task
 * definition, load balancing, logs) reads them.
 */
import type { ApplicationAutoScalingClient } from '@aws-sdk/client-application-auto-scaling';
import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import type { ECSClient } from '@aws-sdk/client-ecs';
import type { ElasticLoadBalancingV2Client } from '@aws-sdk/client-elastic-load-balancing-v2';

/** A presigned URL of an object in the bundle bucket (the launcher's upload and download). */
export type ServicePresign = (method: 'GET' | 'PUT', key: string, ttlSeconds: number) => Promise<string>;

export interface EcsServiceRunnerOptions {
  /** AWS_ENDPOINT_URL_S3, when S3 is elsewhere than AWS (the emulated deployment's). */
  s3Endpoint?: string | undefined;
  ecs: ECSClient;
  elb: ElasticLoadBalancingV2Client;
  autoscaling: ApplicationAutoScalingClient;
  logs: CloudWatchLogsClient;
  cluster: string;
  subnets: string[];
  securityGroups: string[];
  /** Pulls the image, writes the log group, reads the deployment's secrets (and nothing else). */
  executionRoleArn: string;
  /** The HTTPS listener of the services' load balancer. */
  listenerArn: string;
  vpcId: string;
  /** Service URLs are https://<name>-<workspace prefix>.<domain>. */
  domain: string;
  /**
   * How clients reach the listener, when not https on 443 (the emulated deployment's loopback
   * front is plain HTTP on a port of its own). @default 'https'
   */
  urlScheme?: 'https' | 'http';
  urlPort?: number;
  logGroup: string;
  region: string;
  image: string;
  /** Secrets Manager name prefix (PLATFORM_SECRETS_PREFIX) and the account, for valueFrom ARNs. */
  secretsPrefix: string;
  account: string;
  partition?: string;
  /**
   * The gateway, bundled (lib/container-programs.ts; PLATFORM_SERVICES_GATEWAY_FILE): small enough
   * to be the gateway container's command, `node -e <gateway>`.
   */
  gatewaySource: string;
  /**
   * The launcher, bundled (PLATFORM_SERVICES_LAUNCHER_FILE): uploaded to the bundle bucket on every
   * start; the app container's SERVICE_APP_BOOTSTRAP downloads it through a presigned URL.
   */
  launcherSource: string;
  /** The bundle bucket (PLATFORM_BUNDLE_BUCKET), which holds the launcher under SERVICE_PROGRAMS_PREFIX. */
  bucket: string;
  /** @default presignS3Get / presignS3Put on the bucket, with this role's credentials */
  presign?: ServicePresign;
}

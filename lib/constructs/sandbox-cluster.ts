import { ArnFormat, Duration, Fn, Names, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecr from 'aws-cdk-lib/aws-ecr';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { TASK_ENV_FILE } from '../../functions/adapters/aws/ecs-sandbox-env-file.ts';
import { WARM_POOL_SIZE } from '../../functions/adapters/aws/ecs-sandbox-options.ts';
import {
  SANDBOX_INPUTS_PREFIX,
  SANDBOX_RESULTS_PREFIX,
  WARM_POOL_PREFIX,
} from '../../functions/adapters/aws/ecs-sandbox-staging.ts';
import { SANDBOX_CONTAINER_NAME } from '../../functions/adapters/aws/ecs-sandbox-task.ts';
import { DEFAULT_RUNNER_SIZE } from '../../functions/adapters/aws/fargate-size.ts';
import { RUNNER_BOOTSTRAP } from '../../functions/containers/sandbox-protocol.ts';
import { ENV } from '../../functions/shared/env-names.ts';
import { acknowledge, cdkNagName } from '../acknowledge.ts';
import { containerProgramFile } from '../container-programs.ts';
import type { PlatformFunction, SharedResource } from './platform-function.ts';
import { SandboxDnsFirewall } from './sandbox-dns-firewall.ts';
import { admitRunObjectsOnly, bindToAccount, SANDBOX_ENDPOINT_ACTIONS } from './sandbox-endpoint-policy.ts';
import {
  grantBucketObjects,
  grantEnvFileRead,
  grantRunObjectSweep,
  SANDBOX_OBJECT_ACTIONS,
} from './sandbox-object-grants.ts';

/** The default sandbox image on ECR Public, pulled through this account's ECR cache. */
export const SANDBOX_IMAGE = { repository: 'docker/library/node', tag: '24-bookworm-slim' } as const;

export interface SandboxClusterProps {
  /** The bundle bucket: the sandbox-inputs/ and sandbox-results/ objects live there. */
  bundleBucket: SharedResource;
  /** Availability zones of the sandbox subnets (each adds three interface endpoints). @default 2 */
  maxAzs?: number;
  /**
   * The container image; it must have `node` (22 or newer), `/bin/sh` and `chown` (docs/sandbox-aws.md).
   * @default node:24-bookworm-slim from ECR Public through a pull-through cache rule
   */
  image?: ecs.ContainerImage;
  /** @default one month */
  logRetention?: logs.RetentionDays;
  /** Warm runners: idle unbound runners kept ready, and the most in all (0: none). @default 2 and 10 */
  pool?: { min: number; max: number };
  /**
   * The unbound warm runners on Fargate Spot (`-c sandboxSpot=on`): the cluster gets the FARGATE and
   * FARGATE_SPOT capacity providers, and the functions that start runners PLATFORM_SANDBOX_SPOT=on.
   * @default false
   */
  spot?: boolean;
  /** A bound warm runner's shortest wait, seconds (PLATFORM_SANDBOX_IDLE_MIN_MS). @default the adapter's, 60 */
  idleMinSeconds?: number;
  /** The VPC's DNS Firewall: its tasks resolve only the AWS names they need (sandbox-dns-firewall.ts). @default true */
  dnsFirewall?: boolean;
}

/**
 * Where tool runs execute in AWS (docs/sandbox-aws.md): Fargate tasks of one task definition with
 * no task role (user code gets no AWS credentials), in private isolated subnets of their own VPC
 * (no NAT, no internet gateway, no public IP). The only ways out are the S3 gateway endpoint, whose
 * policy admits the run objects of the bundle bucket and ECR's layer bucket only, and the interface
 * endpoints the Fargate agent needs to pull the image and ship logs (ECR, CloudWatch Logs), whose
 * policies admit this account's principals on this account's resources only
 * (sandbox-endpoint-policy.ts); names resolve only for those (sandbox-dns-firewall.ts). The
 * execution role pulls the image and writes the log group.
 */
export class SandboxCluster extends Construct {
  readonly vpc: ec2.Vpc;
  readonly cluster: ecs.Cluster;
  readonly taskDefinition: ecs.FargateTaskDefinition;
  readonly executionRole: iam.Role;
  /**
   * The key a run's inputs are written under (manifests, claims, commands, env files: they carry
   * its secret values). Only the roles that run sandboxes, and the execution role (the env file
   * alone), are granted its use: a principal that may read the bucket cannot decrypt them.
   */
  readonly inputsKey: kms.Key;
  readonly securityGroup: ec2.SecurityGroup;
  readonly logGroup: logs.LogGroup;
  private readonly bundleBucket: SharedResource;
  private readonly pool: { min: number; max: number };
  private readonly spot: boolean;
  private readonly idleMinSeconds: number | undefined;

  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: the construct's resources and the grants between them, made in one place (helpers would take most of its fields)
  constructor(scope: Construct, id: string, props: SandboxClusterProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.bundleBucket = props.bundleBucket;
    this.pool = props.pool ?? WARM_POOL_SIZE;
    this.spot = props.spot ?? false;
    this.idleMinSeconds = props.idleMinSeconds;

    const flowLogs = new logs.LogGroup(this, 'FlowLogs', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.vpc = new ec2.Vpc(this, 'Vpc', {
      ipAddresses: ec2.IpAddresses.cidr('10.80.0.0/20'),
      maxAzs: props.maxAzs ?? 2,
      natGateways: 0,
      subnetConfiguration: [{ name: 'sandbox', subnetType: ec2.SubnetType.PRIVATE_ISOLATED, cidrMask: 24 }],
      // The default security group is attached to nothing here; closing it would need a custom
      // resource (a Lambda) for no effect.
      restrictDefaultSecurityGroup: false,
      flowLogs: {
        all: {
          destination: ec2.FlowLogDestination.toCloudWatchLogs(flowLogs),
          trafficType: ec2.FlowLogTrafficType.ALL,
        },
      },
    });
    const subnets = { subnets: this.vpc.isolatedSubnets };
    if (props.dnsFirewall ?? true) new SandboxDnsFirewall(this, 'DnsFirewall', { vpc: this.vpc });

    // The runner's objects and the image layers, nothing else (sandbox-endpoint-policy.ts).
    const s3 = this.vpc.addGatewayEndpoint('S3', {
      service: ec2.GatewayVpcEndpointAwsService.S3,
      subnets: [subnets],
    });
    admitRunObjectsOnly(s3, props.bundleBucket.arn);
    this.securityGroup = new ec2.SecurityGroup(this, 'TaskSecurityGroup', {
      vpc: this.vpc,
      description: 'agenthost sandbox tasks: no ingress; HTTPS out, which only reaches the VPC endpoints',
      allowAllOutbound: false,
    });
    // The subnets route nowhere but the VPC and the S3 gateway endpoint, so this reaches only those.
    this.securityGroup.addEgressRule(
      ec2.Peer.anyIpv4(),
      ec2.Port.tcp(443),
      'HTTPS to the S3 gateway endpoint and the interface endpoints (no NAT, no internet gateway)',
    );

    // What Fargate's agent uses on the task's network interface: image pulls and log shipping.
    // Reachable from the sandbox tasks only, and for this account's principals and resources only.
    for (const [name, service, actions] of [
      ['EcrApi', ec2.InterfaceVpcEndpointAwsService.ECR, SANDBOX_ENDPOINT_ACTIONS.ecr],
      ['EcrDocker', ec2.InterfaceVpcEndpointAwsService.ECR_DOCKER, SANDBOX_ENDPOINT_ACTIONS.ecr],
      ['Logs', ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_LOGS, SANDBOX_ENDPOINT_ACTIONS.logs],
    ] as const) {
      const endpoint = this.vpc.addInterfaceEndpoint(name, {
        service,
        subnets,
        privateDnsEnabled: true,
        open: false,
      });
      endpoint.connections.allowFrom(this.securityGroup, ec2.Port.tcp(443), 'HTTPS from the sandbox tasks');
      bindToAccount(endpoint, actions);
    }

    this.cluster = new ecs.Cluster(this, 'Cluster', {
      vpc: this.vpc,
      containerInsightsV2: ecs.ContainerInsights.ENABLED,
      // RunTask names FARGATE_SPOT in its capacity provider strategy only with `sandboxSpot`;
      // every other task keeps `launchType: FARGATE`, which needs no capacity provider.
      ...(this.spot ? { enableFargateCapacityProviders: true } : {}),
    });

    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });

    this.executionRole = new iam.Role(this, 'ExecutionRole', {
      assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com').withConditions({
        StringEquals: { 'aws:SourceAccount': stack.account },
        ArnLike: { 'aws:SourceArn': `arn:${stack.partition}:ecs:${stack.region}:${stack.account}:*` },
      }),
      description: 'agenthost sandbox: pulls the image and writes the log group; never reaches user code',
    });

    this.inputsKey = new kms.Key(this, 'RunInputsKey', {
      description: "agenthost sandbox: run manifests, claims and commands (a run's secret values)",
      enableKeyRotation: true,
      // What it encrypts lives minutes (the session's close, or housekeeping's sweep, deletes it).
      pendingWindow: Duration.days(7),
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // The task's env file, and nothing else of the bucket (sandbox-object-grants.ts).
    grantEnvFileRead(this.executionRole, props.bundleBucket.arn);
    this.inputsKey.grantDecrypt(this.executionRole);

    // The default runner's size (a quarter vCPU, 1 GiB): RunTask overrides it for agents that declare
    // another (functions/adapters/aws/fargate-size.ts), so the two must agree.
    this.taskDefinition = new ecs.FargateTaskDefinition(this, 'TaskDefinition', {
      cpu: DEFAULT_RUNNER_SIZE.cpu,
      memoryLimitMiB: DEFAULT_RUNNER_SIZE.memory,
      runtimePlatform: {
        cpuArchitecture: ecs.CpuArchitecture.ARM64,
        operatingSystemFamily: ecs.OperatingSystemFamily.LINUX,
      },
      executionRole: this.executionRole,
    });
    // No task role: CDK always makes one, so it is removed with its reference. A grant to it now
    // fails synthesis instead of handing user code credentials.
    (this.taskDefinition.node.defaultChild as ecs.CfnTaskDefinition).addPropertyDeletionOverride(
      'TaskRoleArn',
    );
    this.taskDefinition.node.tryRemoveChild('TaskRole');

    const linuxParameters = new ecs.LinuxParameters(this, 'Linux', { initProcessEnabled: true });
    // Docker's default capabilities the runner (root) does not need; kept: CHOWN, SETUID, SETGID, KILL.
    linuxParameters.dropCapabilities(
      ecs.Capability.AUDIT_WRITE,
      ecs.Capability.DAC_OVERRIDE,
      ecs.Capability.FOWNER,
      ecs.Capability.FSETID,
      ecs.Capability.MKNOD,
      ecs.Capability.NET_BIND_SERVICE,
      ecs.Capability.NET_RAW,
      ecs.Capability.SETFCAP,
      ecs.Capability.SETPCAP,
      ecs.Capability.SYS_CHROOT,
    );
    this.taskDefinition.addContainer('Runner', {
      containerName: SANDBOX_CONTAINER_NAME,
      image: props.image ?? this.pullThroughImage(),
      // The runner starts as root to hand the working directory to the unprivileged user it runs the command as.
      user: '0',
      entryPoint: ['node', '-e', RUNNER_BOOTSTRAP],
      essential: true,
      linuxParameters,
      stopTimeout: Duration.seconds(2),
      logging: ecs.LogDrivers.awsLogs({ logGroup: this.logGroup, streamPrefix: 'run' }),
    });

    acknowledge(this.executionRole, [
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'ecr:GetAuthorizationToken, which the execution role needs to pull the sandbox image, has no resource-level permissions; IAM accepts only Resource "*" for it.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::${cdkNagName(stack.resolve(`${props.bundleBucket.arn}/${SANDBOX_INPUTS_PREFIX}*/${TASK_ENV_FILE}`))}]`,
        reason:
          "A task's env file is named from its run or runner id at run time; the grant covers only files named task.env under sandbox-inputs/.",
      },
    ]);
  }

  /**
   * node:24-bookworm-slim from ECR Public, through an ECR pull-through cache rule: the tasks have no
   * route to the internet, and ECR (not the task) fetches the image from upstream on the first pull.
   */
  private pullThroughImage(): ecs.ContainerImage {
    // One rule per prefix in an account and region: the construct's hash keeps stages apart.
    const prefix = `agenthost-sandbox-${Names.uniqueId(this).slice(-8).toLowerCase()}`;
    new ecr.CfnPullThroughCacheRule(this, 'ImageCache', {
      ecrRepositoryPrefix: prefix,
      upstreamRegistry: 'ecr-public',
      upstreamRegistryUrl: 'public.ecr.aws',
    });
    const repositoryName = `${prefix}/${SANDBOX_IMAGE.repository}`;
    const repository = ecr.Repository.fromRepositoryName(this, 'ImageRepository', repositoryName);
    // The first pull creates the cached repository and imports the image from upstream.
    this.executionRole.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['ecr:CreateRepository', 'ecr:BatchImportUpstreamImage'],
        resources: [repository.repositoryArn],
      }),
    );
    return ecs.ContainerImage.fromEcrRepository(repository, SANDBOX_IMAGE.tag);
  }

  /**
   * What the calls function needs to run sandboxes: the PLATFORM_SANDBOX_* variables, RunTask on
   * this task definition in this cluster only (passing only the execution role), DescribeTasks and
   * StopTask on this cluster's tasks, and the run objects of the bundle bucket.
   */
  grantRun(fn: PlatformFunction): void {
    const tasks = this.grantTaskStart(fn);
    fn.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['ecs:DescribeTasks', 'ecs:StopTask'],
        resources: [tasks],
        conditions: { ArnEquals: { 'ecs:cluster': this.cluster.clusterArn } },
      }),
    );
    this.grantObjects(
      fn,
      [SANDBOX_INPUTS_PREFIX, SANDBOX_RESULTS_PREFIX],
      SANDBOX_OBJECT_ACTIONS,
      'Run object keys are made from the run id at run time; the grant covers only the sandbox-inputs/ and sandbox-results/ prefixes of the bundle bucket (the runner reaches them through URLs this role presigns).',
    );
    this.grantInputsKey(fn);
  }

  /**
   * What housekeeping's sweep of the run objects sessions never closed left needs
   * (functions/adapters/aws/run-object-sweep.ts): listing the versions under the run prefixes, and
   * deleting them. No read of a run's inputs, no write, no task.
   */
  grantSweep(fn: PlatformFunction): void {
    grantRunObjectSweep(fn, this.bundleBucket.arn);
  }

  /**
   * What the warm runner pool's refill needs (functions/jobs/sandbox-pool.ts): the same variables
   * and task start as grantRun, and the pool's own objects (a runner's program, its pool manifest
   * and the GET URLs of its claims, which it signs), nothing else of the bucket: no run's inputs,
   * no results, no deletes, and no DescribeTasks or StopTask.
   */
  grantPoolRefill(fn: PlatformFunction): void {
    this.grantTaskStart(fn);
    this.grantObjects(
      fn,
      [WARM_POOL_PREFIX],
      ['s3:GetObject', 's3:PutObject'],
      "Runner ids are made when a runner starts; the grant covers only the warm runners' prefix (sandbox-inputs/pool/) of the bundle bucket (a runner reads its program, manifest and claims through URLs this role presigns).",
    );
    this.grantInputsKey(fn);
  }

  /**
   * Writing a run's inputs under the key, and reading them: a presigned GET of an SSE-KMS object is
   * decrypted with the signer's permissions, so the role that signs a runner's URLs needs Decrypt.
   */
  private grantInputsKey(fn: PlatformFunction): void {
    fn.function.addEnvironment(ENV.sandboxInputsKey, this.inputsKey.keyArn);
    this.inputsKey.grant(fn.role, 'kms:GenerateDataKey', 'kms:Decrypt');
  }

  /**
   * The sandbox's variables on `fn`, and RunTask of this task definition on this cluster with its
   * tagging and the execution role's pass; returns the ARN pattern of the cluster's tasks.
   */
  private grantTaskStart(fn: PlatformFunction): string {
    fn.function.addEnvironment(ENV.sandboxCluster, this.cluster.clusterName);
    fn.function.addEnvironment(ENV.sandboxTaskDefinition, this.taskDefinition.taskDefinitionArn);
    fn.function.addEnvironment(
      ENV.sandboxSubnets,
      Fn.join(
        ',',
        this.vpc.isolatedSubnets.map((s) => s.subnetId),
      ),
    );
    fn.function.addEnvironment(ENV.sandboxSecurityGroups, this.securityGroup.securityGroupId);
    // The bundled runner, which the platform-function construct writes into the asset of every
    // function with sandbox access; each run uploads it for the task's bootstrap.
    fn.function.addEnvironment(ENV.sandboxRunnerFile, `/var/task/${containerProgramFile('sandbox-runner')}`);
    // Warm runners (docs/sandbox-aws.md): their records live in the platform's table, which every
    // function that runs sandboxes already reads and writes.
    if (this.pool.max > 0) {
      fn.function.addEnvironment(ENV.sandboxPoolMin, String(this.pool.min));
      fn.function.addEnvironment(ENV.sandboxPoolMax, String(this.pool.max));
      if (this.spot) fn.function.addEnvironment(ENV.sandboxSpot, 'on');
      if (this.idleMinSeconds !== undefined) {
        fn.function.addEnvironment(ENV.sandboxIdleMinMs, String(this.idleMinSeconds * 1000));
      }
    }

    // Every task of the account and region, narrowed by the ecs:cluster conditions (tagging, by
    // RunTask's own: this task definition in this cluster): an ARN naming the cluster would carry a
    // reference to the sandbox's nested stack, which cdk-nag's finding ids cannot be written for.
    const tasks = Stack.of(fn).formatArn({
      service: 'ecs',
      resource: 'task',
      resourceName: '*',
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
    const allow = (statement: iam.PolicyStatementProps) =>
      fn.role.addToPrincipalPolicy(new iam.PolicyStatement(statement));
    allow({
      actions: ['ecs:RunTask'],
      resources: [this.taskDefinition.taskDefinitionArn],
      conditions: { ArnEquals: { 'ecs:cluster': this.cluster.clusterArn } },
    });
    // RunTask with tags (the run id) is authorised as TagResource on the new task too.
    allow({
      actions: ['ecs:TagResource'],
      resources: [tasks],
      conditions: { StringEquals: { 'ecs:CreateAction': 'RunTask' } },
    });
    allow({
      actions: ['iam:PassRole'],
      resources: [this.executionRole.roleArn],
      conditions: { StringEquals: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } },
    });
    acknowledge(fn.role, [
      {
        id: `AwsSolutions-IAM5[Resource::${cdkNagName(Stack.of(fn).resolve(tasks))}]`,
        reason:
          'Task ids are made by ECS at RunTask; DescribeTasks and StopTask are limited to the tasks of the sandbox cluster by ecs:cluster conditions, and tagging to a RunTask, itself limited to the sandbox task definition in that cluster.',
      },
    ]);
    return tasks;
  }

  /** `actions` on the bucket's objects under `prefixes` (sandbox-object-grants.ts). */
  private grantObjects(fn: PlatformFunction, prefixes: string[], actions: string[], reason: string): void {
    grantBucketObjects(fn, this.bundleBucket.arn, prefixes, actions, reason);
  }
}

export { SANDBOX_OBJECT_ACTIONS } from './sandbox-object-grants.ts';

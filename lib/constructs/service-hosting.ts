import { ArnFormat, CfnOutput, Duration, RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as destinations from 'aws-cdk-lib/aws-lambda-destinations';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { SERVICE_PROGRAMS_PREFIX } from '../../functions/adapters/aws/ecs-service-names.ts';
import { ENV } from '../../functions/shared/env-names.ts';
import { acknowledge, cdkNagName } from '../acknowledge.ts';
import { containerProgramFile } from '../container-programs.ts';
import { JOB_ACCESS } from '../module-access.ts';
import { PlatformFunction, PROJECT_ROOT, type SharedResource } from './platform-function.ts';

/** The image of both task containers (node, sh and tar), pulled from ECR Public through the NAT. */
export const SERVICE_IMAGE = 'public.ecr.aws/docker/library/node:24-bookworm-slim';

export interface ServiceHostingProps {
  /** Service URLs are https://<name>-<workspace>.<domain>: a wildcard DNS record to the load balancer. */
  domain: string;
  /** An ACM certificate for *.<domain>, in the stack's region. */
  certificateArn: string;
  table: SharedResource;
  bundleBucket: SharedResource;
  secretsPrefix: string;
  /** Availability zones (each adds a NAT gateway's worth of subnets). @default 2 */
  maxAzs?: number;
  /**
   * Where a task state change goes when it could not be handled: the rule's undeliverable events
   * and the events function's failed invocations (the deployment's dead-letter queue, alarmed).
   */
  deadLetters: sqs.IQueue;
}

/**
 * Where always-on services run in AWS (docs/services.md): a VPC whose public subnets hold an
 * internet-facing load balancer (HTTPS only, with the domain's certificate; a host-header rule per
 * service is added at run time) and whose private subnets, with a NAT gateway for outbound
 * connections, hold the Fargate tasks; a cluster; the tasks' execution role (write the log group,
 * read this deployment's secrets; the tasks themselves get no role); the service-events function,
 * fed every task state change of the cluster by an EventBridge rule.
 */
export class ServiceHosting extends Construct {
  readonly vpc: ec2.Vpc;
  readonly cluster: ecs.Cluster;
  readonly loadBalancer: elbv2.ApplicationLoadBalancer;
  readonly listener: elbv2.ApplicationListener;
  readonly taskSecurityGroup: ec2.SecurityGroup;
  readonly executionRole: iam.Role;
  readonly logGroup: logs.LogGroup;
  readonly eventsFunction: PlatformFunction;
  private readonly props: ServiceHostingProps;

  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: the construct's resources and the grants between them, made in one place (helpers would take most of its fields)
  constructor(scope: Construct, id: string, props: ServiceHostingProps) {
    super(scope, id);
    this.props = props;
    const stack = Stack.of(this);

    const flowLogs = new logs.LogGroup(this, 'FlowLogs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.vpc = new ec2.Vpc(this, 'Vpc', {
      maxAzs: props.maxAzs ?? 2,
      natGateways: 1,
      subnetConfiguration: [
        { name: 'public', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24 },
        { name: 'tasks', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 22 },
      ],
      flowLogs: { all: { destination: ec2.FlowLogDestination.toCloudWatchLogs(flowLogs) } },
    });
    this.cluster = new ecs.Cluster(this, 'Cluster', {
      vpc: this.vpc,
      containerInsightsV2: ecs.ContainerInsights.ENABLED,
    });
    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });

    const albSecurityGroup = new ec2.SecurityGroup(this, 'LoadBalancerSecurityGroup', {
      vpc: this.vpc,
      description: 'agenthost services load balancer: HTTPS from anywhere',
      allowAllOutbound: false,
    });
    albSecurityGroup.addIngressRule(ec2.Peer.anyIpv4(), ec2.Port.tcp(443), 'HTTPS');
    this.taskSecurityGroup = new ec2.SecurityGroup(this, 'TaskSecurityGroup', {
      vpc: this.vpc,
      description: 'agenthost service tasks: the gateway port from the load balancer only; outbound open',
      allowAllOutbound: true,
    });
    this.taskSecurityGroup.addIngressRule(albSecurityGroup, ec2.Port.tcp(8080), 'service gateway');
    albSecurityGroup.addEgressRule(this.taskSecurityGroup, ec2.Port.tcp(8080), 'to the service gateways');

    this.loadBalancer = new elbv2.ApplicationLoadBalancer(this, 'LoadBalancer', {
      vpc: this.vpc,
      internetFacing: true,
      securityGroup: albSecurityGroup,
      vpcSubnets: { subnetType: ec2.SubnetType.PUBLIC },
      dropInvalidHeaderFields: true,
    });
    // Access logs need the region at synthesis (the log-delivery account differs by region).
    if (!Token.isUnresolved(stack.region)) {
      const accessLogs = new s3.Bucket(this, 'AccessLogs', {
        encryption: s3.BucketEncryption.S3_MANAGED,
        blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
        enforceSSL: true,
        removalPolicy: RemovalPolicy.RETAIN,
        lifecycleRules: [{ expiration: Duration.days(90) }],
      });
      this.loadBalancer.logAccessLogs(accessLogs, 'services');
      acknowledge(accessLogs, [
        {
          id: 'AwsSolutions-S1',
          reason:
            'This bucket is the load balancer’s access-log destination; logging it again would log the logs.',
        },
      ]);
    } else {
      acknowledge(this.loadBalancer, [
        {
          id: 'AwsSolutions-ELB2',
          reason:
            'The stack is synthesized without a region (env-agnostic), and ELB access logging needs it to name the log-delivery account; deploy with an explicit region (docs/deploy.md) to turn access logs on.',
        },
      ]);
    }
    this.listener = this.loadBalancer.addListener('Https', {
      port: 443,
      protocol: elbv2.ApplicationProtocol.HTTPS,
      certificates: [elbv2.ListenerCertificate.fromArn(props.certificateArn)],
      sslPolicy: elbv2.SslPolicy.RECOMMENDED_TLS,
      open: false,
      defaultAction: elbv2.ListenerAction.fixedResponse(404, {
        contentType: 'application/json',
        messageBody: '{"error":{"code":"NOT_FOUND","message":"No service answers at this host name"}}',
      }),
    });

    new CfnOutput(this, 'LoadBalancerDns', {
      value: this.loadBalancer.loadBalancerDnsName,
      description: `Point *.${props.domain} (CNAME or alias) at this name`,
    });

    this.executionRole = new iam.Role(this, 'ExecutionRole', {
      assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com'),
      description: 'agenthost service tasks: write their log group, read the secrets of this deployment',
    });
    this.logGroup.grantWrite(this.executionRole);
    const secrets = this.secretsArn();
    this.executionRole.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [secrets] }),
    );
    acknowledge(this.executionRole, [
      {
        id: `AwsSolutions-IAM5[Resource::${cdkNagName(stack.resolve(secrets))}]`,
        reason:
          'A service task reads the secrets its service declares, which live under this deployment’s Secrets Manager prefix ("<prefix>/<workspace>/<name>", created at run time); ECS resolves them at task start, and the task itself has no role.',
      },
    ]);

    this.eventsFunction = new PlatformFunction(this, 'Events', {
      entry: `${PROJECT_ROOT}/functions/jobs/service-events.ts`,
      access: JOB_ACCESS['service-events'],
      table: props.table,
      bundleBucket: props.bundleBucket,
      secretsPrefix: props.secretsPrefix,
      // A change that still fails after two retries goes to the dead-letter queue with its error
      // (cdk-nag Serverless-LambdaAsyncFailureDestination): the operator's alarm on its depth says
      // a service's supervision missed a change, which would otherwise vanish.
      functionProps: {
        timeout: Duration.seconds(60),
        retryAttempts: 2,
        onFailure: new destinations.SqsDestination(props.deadLetters),
      },
    });
    this.grantManage(this.eventsFunction);
    new events.Rule(this, 'TaskStateChanges', {
      description: 'agenthost: ECS task state changes of the services cluster, for supervision',
      eventPattern: {
        source: ['aws.ecs'],
        detailType: ['ECS Task State Change'],
        detail: { clusterArn: [this.cluster.clusterArn] },
      },
      // An event EventBridge could not deliver to the function goes to the same queue.
      targets: [
        new targets.LambdaFunction(this.eventsFunction.function, {
          retryAttempts: 2,
          deadLetterQueue: props.deadLetters,
        }),
      ],
    });
    acknowledge(this.eventsFunction.function, [
      {
        id: 'Serverless-LambdaDLQ',
        reason:
          "Its failed invocations go to an on-failure destination, the deployment's dead-letter queue (Lambda's successor of a function DLQ, which keeps the error with the event).",
      },
    ]);

    acknowledge(albSecurityGroup, [
      {
        id: 'AwsSolutions-EC23',
        reason:
          'The services load balancer is the public entry of always-on services by design (spec: a public HTTPS URL per service); it admits HTTPS (443) only.',
      },
    ]);
  }

  private secretsArn(): string {
    return Stack.of(this).formatArn({
      service: 'secretsmanager',
      resource: 'secret',
      resourceName: `${this.props.secretsPrefix.replace(/\/+$/, '')}/*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
  }

  /**
   * What deploying, pausing and deleting services takes (ecs-service-runner.ts), and the settings
   * that say where: the cluster's services and task definitions named svc-*, the listener's rules
   * and svc-* target groups, the scaling targets, PassRole of the execution role to ECS tasks
   * only, and reading the services' log group.
   */
  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: the managing function's grants, one statement each, whose resources are built from the same names
  grantManage(fn: PlatformFunction): void {
    const stack = Stack.of(this);
    const allow = (actions: string[], resources: string[], conditions?: Record<string, unknown>) =>
      fn.role.addToPrincipalPolicy(
        new iam.PolicyStatement({ actions, resources, ...(conditions ? { conditions } : {}) }),
      );
    const services = stack.formatArn({
      service: 'ecs',
      resource: 'service',
      resourceName: `${this.cluster.clusterName}/svc-*`,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
    const taskDefinitions = stack.formatArn({
      service: 'ecs',
      resource: 'task-definition',
      resourceName: 'agenthost-svc-*',
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    const targetGroups = stack.formatArn({
      service: 'elasticloadbalancing',
      resource: 'targetgroup',
      resourceName: 'svc-*',
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
    const rules = stack.formatArn({
      service: 'elasticloadbalancing',
      resource: 'listener-rule',
      resourceName: `app/${this.loadBalancer.loadBalancerFullName}/*`,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
    allow(
      [
        'ecs:CreateService',
        'ecs:UpdateService',
        'ecs:DeleteService',
        'ecs:DescribeServices',
        'ecs:TagResource',
      ],
      [services],
    );
    // RegisterTaskDefinition has no resource-level permission; tagging the new revision does.
    allow(['ecs:RegisterTaskDefinition'], ['*']);
    allow(['ecs:TagResource'], [taskDefinitions]);
    allow(['iam:PassRole'], [this.executionRole.roleArn], {
      StringEquals: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' },
    });
    allow(
      [
        'elasticloadbalancing:CreateTargetGroup',
        'elasticloadbalancing:DeleteTargetGroup',
        'elasticloadbalancing:AddTags',
      ],
      [targetGroups],
    );
    allow(
      ['elasticloadbalancing:CreateRule', 'elasticloadbalancing:DeleteRule', 'elasticloadbalancing:AddTags'],
      [this.listener.listenerArn, rules],
    );
    // Describe* of Elastic Load Balancing and the scaling targets have no resource-level permissions.
    allow(['elasticloadbalancing:DescribeRules', 'elasticloadbalancing:DescribeTargetGroups'], ['*']);
    allow(
      ['application-autoscaling:RegisterScalableTarget', 'application-autoscaling:DeregisterScalableTarget'],
      ['*'],
    );
    allow(['iam:CreateServiceLinkedRole'], ['*'], {
      StringEquals: { 'iam:AWSServiceName': 'ecs.application-autoscaling.amazonaws.com' },
    });
    allow(['logs:FilterLogEvents'], [this.logGroup.logGroupArn]);
    // The launcher: put on every start, and read by the tasks through URLs this role signs.
    const programs = `${this.props.bundleBucket.arn}/${SERVICE_PROGRAMS_PREFIX}*`;
    allow(['s3:PutObject', 's3:GetObject'], [programs]);

    const env: Record<string, string> = {
      [ENV.servicesCluster]: this.cluster.clusterName,
      [ENV.servicesSubnets]: this.vpc.privateSubnets.map((s) => s.subnetId).join(','),
      [ENV.servicesSecurityGroups]: this.taskSecurityGroup.securityGroupId,
      [ENV.servicesExecutionRoleArn]: this.executionRole.roleArn,
      [ENV.servicesListenerArn]: this.listener.listenerArn,
      [ENV.servicesVpcId]: this.vpc.vpcId,
      [ENV.servicesDomain]: this.props.domain,
      [ENV.servicesLogGroup]: this.logGroup.logGroupName,
      [ENV.servicesImage]: SERVICE_IMAGE,
      // Written into the asset of every function with services access (platform-function.ts).
      [ENV.servicesGatewayFile]: `/var/task/${containerProgramFile('service-gateway')}`,
      [ENV.servicesLauncherFile]: `/var/task/${containerProgramFile('service-app-launcher')}`,
    };
    for (const [k, v] of Object.entries(env)) fn.function.addEnvironment(k, v);

    acknowledge(fn.role, [
      ...[services, taskDefinitions, targetGroups, rules].map((arn) => ({
        id: `AwsSolutions-IAM5[Resource::${cdkNagName(stack.resolve(arn))}]`,
        reason:
          'Each always-on service gets its own ECS service, task definition family, target group and listener rule at run time, named after its id (svc-*, agenthost-svc-*); the grant covers those names in this cluster and on this listener only.',
      })),
      {
        id: `AwsSolutions-IAM5[Resource::${cdkNagName(stack.resolve(programs))}]`,
        reason: `The service launcher is uploaded under the ${SERVICE_PROGRAMS_PREFIX} prefix of the bundle bucket, named by its content hash at run time; the grant covers that prefix only, not the bundles or the sandbox's run objects.`,
      },
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'ecs:RegisterTaskDefinition, elasticloadbalancing:Describe*, application-autoscaling:Register/DeregisterScalableTarget and iam:CreateServiceLinkedRole (conditioned to the ECS scaling service) have no resource-level permissions; IAM accepts only Resource "*" for them.',
      },
    ]);
  }
}

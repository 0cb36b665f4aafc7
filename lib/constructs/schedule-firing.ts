import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as destinations from 'aws-cdk-lib/aws-lambda-destinations';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ENV } from '../../functions/shared/env-names.ts';
import { acknowledge, cdkNagName } from '../acknowledge.ts';
import { JOB_ACCESS } from '../module-access.ts';
import {
  AGENT_RUNNER_MEMORY_MB,
  PlatformFunction,
  PROJECT_ROOT,
  type SharedResource,
} from './platform-function.ts';

export interface ScheduleFiringProps {
  table: SharedResource;
  bundleBucket: SharedResource;
  secretsPrefix: string;
  publicUrl: string;
}

/** A scheduled run's platform deadline (the spec's 300 s cap) and the fire function's timeout above it. */
const FIRE_RUN_SECONDS = 300;

/**
 * How cron schedules fire in AWS (docs/schedules.md): one EventBridge Scheduler group holding one
 * or two schedules per record (functions/adapters/aws/eventbridge-scheduler.ts), all targeting the
 * schedule-fire function through an invoke role that can do nothing else; retries, then an
 * encrypted SQS dead-letter queue. Alerts leave through the alert-delivery function, invoked
 * asynchronously so no caller waits on a user's webhook.
 */
export class ScheduleFiring extends Construct {
  readonly group: scheduler.CfnScheduleGroup;
  readonly deadLetters: sqs.Queue;
  readonly fireFunction: PlatformFunction;
  readonly alertsFunction: PlatformFunction;
  readonly invokeRole: iam.Role;

  constructor(scope: Construct, id: string, props: ScheduleFiringProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.group = new scheduler.CfnScheduleGroup(this, 'Group', { name: `${stack.stackName}-schedules` });

    this.deadLetters = new sqs.Queue(this, 'DeadLetters', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });

    const common = {
      table: props.table,
      bundleBucket: props.bundleBucket,
      secretsPrefix: props.secretsPrefix,
    };
    this.alertsFunction = new PlatformFunction(this, 'AlertDelivery', {
      ...common,
      entry: `${PROJECT_ROOT}/functions/jobs/alert-delivery.ts`,
      access: JOB_ACCESS['alert-delivery'],
      // An alert's 3 attempts or a run webhook's 5 (docs/runs.md), 5 s each at most, 1, 4, 16, 30 s
      // (±20%) apart, in one invocation: about 86 s at most. One that failed (a crash) goes to the
      // dead-letter queue with its error (cdk-nag Serverless-LambdaAsyncFailureDestination).
      functionProps: {
        timeout: Duration.seconds(120),
        memorySize: 256,
        retryAttempts: 0,
        onFailure: new destinations.SqsDestination(this.deadLetters),
      },
    });

    this.fireFunction = new PlatformFunction(this, 'Fire', {
      ...common,
      entry: `${PROJECT_ROOT}/functions/jobs/schedule-fire.ts`,
      access: JOB_ACCESS['schedule-fire'],
      environment: {
        [ENV.publicUrl]: props.publicUrl,
        [ENV.maxCallSeconds]: String(FIRE_RUN_SECONDS),
      },
      // EventBridge Scheduler invokes asynchronously: its retry policy covers only the delivery
      // (throttling, a missing function). What happens after, a failed invocation (the store
      // unreachable before the slot is claimed, a crash at load), is Lambda's async handling: two
      // more attempts (the slot claim makes a repeat a no-op once the slot ran), then the event and
      // its error go to the dead-letter queue, next to Scheduler's own undeliverable events.
      functionProps: {
        timeout: Duration.seconds(FIRE_RUN_SECONDS + 30),
        memorySize: AGENT_RUNNER_MEMORY_MB,
        retryAttempts: 2,
        maxEventAge: Duration.hours(1),
        onFailure: new destinations.SqsDestination(this.deadLetters),
      },
    });

    this.invokeRole = new iam.Role(this, 'InvokeRole', {
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        conditions: {
          // Scheduler presents the schedule group's ARN, not the schedule's (AWS's troubleshooting
          // guide; aws-cdk-lib's scheduler targets trust the same), so that is what is matched.
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnEquals: { 'aws:SourceArn': this.groupArn() },
        },
      }),
      description:
        'EventBridge Scheduler: invoke the agenthost schedule-fire function, dead-letter to its queue',
    });
    this.invokeRole.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['lambda:InvokeFunction'],
        resources: [this.fireFunction.function.functionArn],
      }),
    );
    this.invokeRole.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.deadLetters.queueArn] }),
    );

    this.grantRemove(this.fireFunction);
    this.grantQueueAlerts(this.fireFunction);

    acknowledge(this.deadLetters, [
      {
        id: 'AwsSolutions-SQS3',
        reason:
          'This queue is the dead-letter queue of the EventBridge Scheduler schedules; a dead-letter queue of its own would only move the same messages again.',
      },
      {
        id: 'Serverless-SQSRedrivePolicy',
        reason:
          "This queue is the deployment's dead-letter queue (schedules, alert delivery, service events); a redrive policy would only move the same messages again.",
      },
    ]);
    for (const fn of [this.fireFunction, this.alertsFunction]) {
      acknowledge(fn.function, [
        {
          id: 'Serverless-LambdaDLQ',
          reason:
            "Its failed invocations go to an on-failure destination, the deployment's dead-letter queue (Lambda's successor of a function DLQ, which keeps the error with the event).",
        },
      ]);
    }
  }

  /** The group itself: `schedule-group/<group>`. */
  private groupArn(): string {
    return Stack.of(this).formatArn({
      service: 'scheduler',
      resource: 'schedule-group',
      resourceName: this.group.name,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
  }

  /** Every schedule of the group: `schedule/<group>/<name>`. */
  private schedulesArn(): string {
    return Stack.of(this).formatArn({
      service: 'scheduler',
      resource: 'schedule',
      resourceName: `${this.group.name}/*`,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
  }

  private allowOnSchedules(fn: PlatformFunction, actions: string[]): void {
    fn.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions, resources: [this.schedulesArn()] }));
    fn.function.addEnvironment(ENV.scheduleGroup, this.group.name as string);
    acknowledge(fn.role, [
      {
        id: `AwsSolutions-IAM5[Resource::${cdkNagName(Stack.of(this).resolve(this.schedulesArn()))}]`,
        reason:
          'Schedules are created at run time, one or two per agenthost schedule, named by its id; the grant covers the schedules of this deployment’s group only.',
      },
    ]);
  }

  /** Deletes the group's schedules only (an auto-disable in a run path). */
  grantRemove(fn: PlatformFunction): void {
    this.allowOnSchedules(fn, ['scheduler:DeleteSchedule']);
  }

  /** Creates, updates and deletes the group's schedules, passing the invoke role to Scheduler only. */
  grantManage(fn: PlatformFunction): void {
    this.allowOnSchedules(fn, [
      'scheduler:CreateSchedule',
      'scheduler:UpdateSchedule',
      'scheduler:DeleteSchedule',
    ]);
    fn.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [this.invokeRole.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      }),
    );
    fn.function.addEnvironment(ENV.scheduleTargetArn, this.fireFunction.function.functionArn);
    fn.function.addEnvironment(ENV.scheduleRoleArn, this.invokeRole.roleArn);
    fn.function.addEnvironment(ENV.scheduleDlqArn, this.deadLetters.queueArn);
  }

  /** May queue alert deliveries: an asynchronous invoke of the alert-delivery function. */
  grantQueueAlerts(fn: PlatformFunction): void {
    // The unqualified function only (grantInvoke would add its versions, `<arn>:*`).
    fn.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['lambda:InvokeFunction'],
        resources: [this.alertsFunction.function.functionArn],
      }),
    );
    fn.function.addEnvironment(ENV.alertsFunction, this.alertsFunction.function.functionName);
  }
}

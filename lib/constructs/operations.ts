import { Duration } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

export interface OperationsProps {
  api: apigateway.RestApi;
  /** Every function of the stack, by a short name (the module or job). */
  functions: Record<string, lambda.IFunction>;
  /** Cron fires that could not be delivered or failed after Lambda's retries (docs/schedules.md). */
  deadLetters: sqs.IQueue;
  /** An alarm on each function's errors (off in a stage's copy: `-c functionAlarms`). */
  functionAlarms: boolean;
}

/**
 * What an operator watches (docs/deploy.md, "What to watch"): alarms on what needs a person (the
 * API answering 5xx, a function failing, a cron slot lost to the dead-letter queue) and one
 * dashboard with the API's traffic, latency and errors and each function's errors and throttles.
 * The alarms have no action: subscribe an SNS topic to them (`alarm.addAlarmAction`, or in the
 * console) to be paged.
 */
export class Operations extends Construct {
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: OperationsProps) {
    super(scope, id);
    const fiveMinutes = Duration.minutes(5);

    // Server errors are ours, not the callers': more than 5 in five minutes, twice running.
    this.alarms.push(
      props.api.metricServerError({ period: fiveMinutes, statistic: 'Sum' }).createAlarm(this, 'Api5xx', {
        alarmDescription:
          'agenthost: the API answered more than 5 server errors (5xx) in 5 minutes, twice in a row',
        threshold: 5,
        evaluationPeriods: 2,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );
    // A function error is an unhandled exception or a timeout (client mistakes are answered, not thrown).
    // Each is $0.10 a month: a stage's copy keeps the API's and the cron's, and its dashboard's
    // error widgets still show every function (docs/deploy.md, "What to watch").
    for (const [name, fn] of props.functionAlarms ? Object.entries(props.functions) : []) {
      this.alarms.push(
        fn.metricErrors({ period: fiveMinutes, statistic: 'Sum' }).createAlarm(this, `Errors-${name}`, {
          alarmDescription: `agenthost: the ${name} function failed (an unhandled error or a timeout) more than 3 times in 5 minutes`,
          threshold: 3,
          evaluationPeriods: 1,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
      );
    }
    // Any message there is a cron slot that did not run: look at it (its error is in the message).
    this.alarms.push(
      props.deadLetters
        .metricApproximateNumberOfMessagesVisible({ period: fiveMinutes, statistic: 'Maximum' })
        .createAlarm(this, 'LostScheduleFires', {
          alarmDescription: 'agenthost: a cron slot could not be fired (see the schedules dead-letter queue)',
          threshold: 0,
          evaluationPeriods: 1,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
    );

    const fns = Object.entries(props.functions);
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      widgets: [
        [
          new cloudwatch.GraphWidget({
            title: 'API requests and errors',
            left: [props.api.metricCount({ period: Duration.minutes(1), statistic: 'Sum' })],
            right: [
              props.api.metricClientError({ period: Duration.minutes(1), statistic: 'Sum' }),
              props.api.metricServerError({ period: Duration.minutes(1), statistic: 'Sum' }),
            ],
            width: 12,
          }),
          new cloudwatch.GraphWidget({
            title: 'API latency (p50, p99)',
            left: [
              props.api.metricLatency({ period: Duration.minutes(1), statistic: 'p50' }),
              props.api.metricLatency({ period: Duration.minutes(1), statistic: 'p99' }),
            ],
            width: 12,
          }),
        ],
        [
          new cloudwatch.GraphWidget({
            title: 'Function errors',
            left: fns.map(([name, fn]) => fn.metricErrors({ label: name, period: Duration.minutes(1) })),
            width: 12,
          }),
          new cloudwatch.GraphWidget({
            title: 'Function throttles',
            left: fns.map(([name, fn]) => fn.metricThrottles({ label: name, period: Duration.minutes(1) })),
            width: 12,
          }),
        ],
        [new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24 })],
      ],
    });
  }
}

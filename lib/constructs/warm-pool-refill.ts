import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import { Construct } from 'constructs';
import { acknowledge } from '../acknowledge.ts';
import { JOB_ACCESS } from '../module-access.ts';
import { PlatformFunction, PROJECT_ROOT, type SharedResource } from './platform-function.ts';
import type { SandboxCluster } from './sandbox-cluster.ts';

export interface WarmPoolRefillProps {
  sandbox: SandboxCluster;
  table: SharedResource;
  bundleBucket: SharedResource;
  secretsPrefix: string;
}

/**
 * The warm runner pool's refill (docs/sandbox-aws.md, "Warm runners"): a function that tops the
 * pool up to its floor every minute (functions/jobs/sandbox-pool.ts), so runners are ready after a
 * quiet time too. Its role may start sandbox tasks and touch the pool's objects only
 * (SandboxCluster.grantPoolRefill). EventBridge's retries are off: the next minute is the retry.
 */
export class WarmPoolRefill extends Construct {
  readonly function: PlatformFunction;

  constructor(scope: Construct, id: string, props: WarmPoolRefillProps) {
    super(scope, id);
    this.function = new PlatformFunction(this, 'Refill', {
      entry: `${PROJECT_ROOT}/functions/jobs/sandbox-pool.ts`,
      access: JOB_ACCESS['sandbox-pool'],
      table: props.table,
      bundleBucket: props.bundleBucket,
      secretsPrefix: props.secretsPrefix,
      // Starting the floor's runners: an upload and a RunTask each, a few seconds in all.
      functionProps: { timeout: Duration.seconds(60) },
    });
    props.sandbox.grantPoolRefill(this.function);
    const rule = new events.Rule(this, 'EveryMinute', {
      description: 'agenthost sandbox: keep the warm runner pool at its floor',
      schedule: events.Schedule.rate(Duration.minutes(1)),
      targets: [new targets.LambdaFunction(this.function.function, { retryAttempts: 0 })],
    });
    const reason =
      'The pool refill: a tick every minute, whose work the next tick does; a lost tick has nothing to replay, so no dead-letter queue.';
    acknowledge(this.function.function, [{ id: 'Serverless-LambdaDLQ', reason }]);
    acknowledge(rule, [{ id: 'Serverless-EventBusDLQ', reason }]);
  }
}

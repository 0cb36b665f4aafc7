import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { ENV } from '../../functions/shared/env-names.ts';
import { acknowledge } from '../acknowledge.ts';
import { JOB_ACCESS } from '../module-access.ts';
import { PlatformFunction, PROJECT_ROOT, type SharedResource } from './platform-function.ts';

export interface BillingJobsProps {
  table: SharedResource;
  bundleBucket: SharedResource;
  secretsPrefix: string;
  /**
   * Where the housekeeping job and its schedule are made (a construct of the operations' nested
   * stack, named like this one so the logical ids stay: lib/stateless-stack.ts). @default this
   */
  jobScope?: Construct;
}

/**
 * Billing's AWS pieces (docs/billing.md): the Secrets Manager secret holding Stripe's keys
 * (`{"secret_key": …, "webhook_secret": …}`, filled in by the operator after deploy), and the
 * housekeeping function on a five-minute schedule (reconciliation of paid calls, and the bundles
 * of purged agent versions).
 */
export class BillingJobs extends Construct {
  readonly stripeSecret: secretsmanager.Secret;
  readonly housekeepingFunction: PlatformFunction;

  constructor(scope: Construct, id: string, props: BillingJobsProps) {
    super(scope, id);
    this.stripeSecret = new secretsmanager.Secret(this, 'StripeKeys', {
      description:
        'agenthost: Stripe secret key and webhook signing secret (JSON: secret_key, webhook_secret)',
      generateSecretString: {
        secretStringTemplate: JSON.stringify({ secret_key: 'REPLACE_ME', webhook_secret: 'REPLACE_ME' }),
        generateStringKey: 'placeholder',
      },
    });
    acknowledge(this.stripeSecret, [
      {
        id: 'AwsSolutions-SMG4',
        reason:
          'Stripe issues and rolls these keys in its dashboard; the operator pastes the new ones here (docs/billing.md). A Secrets Manager rotation function cannot create Stripe keys.',
      },
    ]);
    const jobs = props.jobScope ?? this;
    this.housekeepingFunction = new PlatformFunction(jobs, 'Housekeeping', {
      entry: `${PROJECT_ROOT}/functions/jobs/housekeeping.ts`,
      access: JOB_ACCESS.housekeeping,
      table: props.table,
      bundleBucket: props.bundleBucket,
      secretsPrefix: props.secretsPrefix,
      functionProps: { timeout: Duration.seconds(120) },
    });
    const rule = new events.Rule(jobs, 'Every5Minutes', {
      description: 'agenthost housekeeping: refund paid calls never completed, delete purged bundles',
      schedule: events.Schedule.rate(Duration.minutes(5)),
      targets: [new targets.LambdaFunction(this.housekeepingFunction.function, { retryAttempts: 2 })],
    });
    const reason =
      'Housekeeping: a tick every five minutes that finds its work in the table each time (unfinished paid calls, purged bundles), so the next tick does what a lost one left; nothing to replay, so no dead-letter queue.';
    acknowledge(this.housekeepingFunction.function, [{ id: 'Serverless-LambdaDLQ', reason }]);
    acknowledge(rule, [{ id: 'Serverless-EventBusDLQ', reason }]);
  }

  /** The billing function takes Stripe payments with the keys in this secret. */
  grantPayments(fn: PlatformFunction): void {
    this.stripeSecret.grantRead(fn.role);
    fn.function.addEnvironment(ENV.payments, 'stripe');
    fn.function.addEnvironment(ENV.stripeSecretArn, this.stripeSecret.secretArn);
  }
}

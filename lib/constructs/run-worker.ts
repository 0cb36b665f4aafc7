import { Duration, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { MAX_RUN_TIMEOUT_SECONDS } from '../../functions/core/agents/manifest-limits.ts';
import { ENV } from '../../functions/shared/env-names.ts';
import { acknowledge, cdkNagName } from '../acknowledge.ts';
import { JOB_ACCESS } from '../module-access.ts';
import {
  AGENT_RUNNER_MEMORY_MB,
  PlatformFunction,
  PROJECT_ROOT,
  type SharedResource,
} from './platform-function.ts';

export interface RunWorkerProps {
  table: SharedResource;
  bundleBucket: SharedResource;
  secretsPrefix: string;
  publicUrl: string;
}

/** The alias the run worker is invoked by: a durable function is invoked by a version or an alias. */
export const RUN_WORKER_ALIAS = 'live';

/** An invocation's longest life: Lambda's 15 minutes; a longer run goes on in the next invocation. */
const INVOCATION_SECONDS = 900;

/**
 * The run worker (docs/runs.md, "Long runs"): a Lambda durable function
 * (functions/jobs/run-worker.ts) that runs a run to its end once the request that started it
 * handed it over, one durable execution per run. Its execution lasts up to the longest run
 * (MAX_RUN_TIMEOUT_SECONDS) and an invocation's length more (a replay after the last invocation timed
 * out); its steps are checkpointed by Lambda, kept a day after the run ends (a run's record, not
 * its checkpoints, is what its caller reads). It is invoked by its alias, which follows the
 * current version; the functions that start runs may invoke that alias and nothing else of it.
 */
export class RunWorker extends Construct {
  readonly worker: PlatformFunction;
  readonly alias: lambda.Alias;

  constructor(scope: Construct, id: string, props: RunWorkerProps) {
    super(scope, id);
    this.worker = new PlatformFunction(this, 'Worker', {
      entry: `${PROJECT_ROOT}/functions/jobs/run-worker.ts`,
      access: JOB_ACCESS['run-worker'],
      table: props.table,
      bundleBucket: props.bundleBucket,
      secretsPrefix: props.secretsPrefix,
      environment: { [ENV.publicUrl]: props.publicUrl },
      functionProps: {
        timeout: Duration.seconds(INVOCATION_SECONDS),
        memorySize: AGENT_RUNNER_MEMORY_MB,
        durableConfig: {
          executionTimeout: Duration.seconds(MAX_RUN_TIMEOUT_SECONDS + INVOCATION_SECONDS),
          retentionPeriod: Duration.days(1),
        },
      },
    });
    this.alias = new lambda.Alias(this, 'Alias', {
      aliasName: RUN_WORKER_ALIAS,
      version: this.worker.function.currentVersion,
    });
    // The durable SDK checkpoints and reads its own execution: an execution's ARN extends its
    // function version's (`<function>:<version>/durable-execution/…`), so the grant is on `:*`. A
    // policy of its own, not the role's default one the function depends on: the function's ARN
    // in it would make a cycle.
    const executions = `${this.worker.function.functionArn}:*`;
    new iam.Policy(this, 'Checkpoints', {
      roles: [this.worker.role],
      statements: [
        new iam.PolicyStatement({
          actions: ['lambda:CheckpointDurableExecution', 'lambda:GetDurableExecutionState'],
          resources: [executions],
        }),
      ],
    });
    const stack = Stack.of(this);
    acknowledge(this, [
      {
        id: `AwsSolutions-IAM5[Resource::${cdkNagName(stack.resolve(executions))}]`,
        reason:
          "A durable execution's ARN is made at run time from the worker's version and the run's id; the grant covers this function's own executions, as AWS's documentation for durable functions gives it.",
      },
    ]);
    acknowledge(this.worker.function, [
      {
        id: 'Serverless-LambdaDLQ',
        reason:
          'A durable function: Lambda invokes it again after a failed invocation, from its checkpoints, until its execution ends; a run it could not end is read as interrupted past its deadline and its charge refunded by the housekeeping job (docs/runs.md).',
      },
    ]);
  }

  /** May hand runs over: an asynchronous invoke of the alias (and nothing else of the worker). */
  grantStart(fn: PlatformFunction): void {
    fn.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [this.alias.functionArn] }),
    );
    fn.function.addEnvironment(ENV.runWorkerFunction, this.alias.functionArn);
  }
}

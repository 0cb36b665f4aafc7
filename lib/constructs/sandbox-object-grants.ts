import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { TASK_ENV_FILE } from '../../functions/adapters/aws/ecs-sandbox-env-file.ts';
import {
  SANDBOX_INPUTS_PREFIX,
  SANDBOX_RESULTS_PREFIX,
} from '../../functions/adapters/aws/ecs-sandbox-staging.ts';
import { acknowledge, cdkNagName } from '../acknowledge.ts';
import type { PlatformFunction } from './platform-function.ts';

/*
 * The sandbox's grants on the bundle bucket's objects (sandbox-cluster.ts): which role may do what
 * under which prefix, each wildcard acknowledged for cdk-nag with its reason.
 */

/**
 * The calls function on the run objects: staging inputs and signing the runner's GETs, signing its
 * result PUT and reading it, and deleting the exact versions at the end of the session.
 */
export const SANDBOX_OBJECT_ACTIONS = [
  's3:GetObject',
  's3:PutObject',
  's3:DeleteObject',
  's3:DeleteObjectVersion',
];

/** `actions` on the bucket's objects under `prefixes`, with cdk-nag's wildcard acknowledged. */
export function grantBucketObjects(
  fn: PlatformFunction,
  bucketArn: string,
  prefixes: string[],
  actions: string[],
  reason: string,
): void {
  const objects = prefixes.map((prefix) => `${bucketArn}/${prefix}*`);
  fn.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions, resources: objects }));
  acknowledge(
    fn.role,
    objects.map((o) => ({
      id: `AwsSolutions-IAM5[Resource::${cdkNagName(Stack.of(fn).resolve(o))}]`,
      reason,
    })),
  );
}

/**
 * What housekeeping's sweep of the run objects sessions never closed left needs
 * (functions/adapters/aws/run-object-sweep.ts): listing the versions under the run prefixes, and
 * deleting them. No read of a run's inputs, no write, no task.
 */
export function grantRunObjectSweep(fn: PlatformFunction, bucketArn: string): void {
  const prefixes = [SANDBOX_INPUTS_PREFIX, SANDBOX_RESULTS_PREFIX];
  fn.role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['s3:ListBucketVersions'],
      resources: [bucketArn],
      conditions: { StringLike: { 's3:prefix': prefixes.map((p) => `${p}*`) } },
    }),
  );
  grantBucketObjects(
    fn,
    bucketArn,
    prefixes,
    ['s3:DeleteObject', 's3:DeleteObjectVersion'],
    'Run object keys are made from the run id at run time; housekeeping deletes, under the sandbox-inputs/ and sandbox-results/ prefixes only, what sessions that never closed left.',
  );
}

/**
 * The task execution role on the bucket: a task's env file (which holds its manifest's URL:
 * functions/adapters/aws/ecs-sandbox-env-file.ts) and the bucket's location, which ECS's agent asks
 * first; nothing else of the bucket.
 */
export function grantEnvFileRead(role: iam.IRole, bucketArn: string): void {
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['s3:GetObject'],
      resources: [`${bucketArn}/${SANDBOX_INPUTS_PREFIX}*/${TASK_ENV_FILE}`],
    }),
  );
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({ actions: ['s3:GetBucketLocation'], resources: [bucketArn] }),
  );
}

import { Stack } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import {
  SANDBOX_INPUTS_PREFIX,
  SANDBOX_RESULTS_PREFIX,
} from '../../functions/adapters/aws/ecs-sandbox-staging.ts';
import { BUNDLE_KEY_PREFIX } from '../../functions/ports/bundle-store.ts';

/**
 * What Fargate's agent does through each interface endpoint of the sandbox VPC, with the task's
 * execution role: pull the runner's image from this account's registry (its pull-through cache
 * creates the repository and imports the image on the first pull) and ship the runner's log lines.
 */
export const SANDBOX_ENDPOINT_ACTIONS = {
  ecr: [
    'ecr:GetAuthorizationToken',
    'ecr:BatchCheckLayerAvailability',
    'ecr:GetDownloadUrlForLayer',
    'ecr:BatchGetImage',
    'ecr:CreateRepository',
    'ecr:BatchImportUpstreamImage',
  ],
  logs: ['logs:CreateLogStream', 'logs:PutLogEvents'],
} as const;

/**
 * Binds an interface endpoint of the sandbox VPC to this deployment's account: only `actions`, only
 * by a principal of this account (`aws:PrincipalAccount`), only on this account's resources
 * (`aws:ResourceAccount`). Without a policy an endpoint admits any request its service would, so
 * code in a sandbox that brought keys of another account (in its bundle or its input) could send a
 * caller's secrets and input there through CloudWatch Logs or ECR (docs/sandbox-aws.md, "What a
 * sandboxed command can reach"). The sandbox's tasks have no task role, so the only principal of
 * this account in the VPC is Fargate's agent with the execution role.
 */
export function bindToAccount(endpoint: ec2.InterfaceVpcEndpoint, actions: readonly string[]): void {
  const account = Stack.of(endpoint).account;
  const onResources = actions.filter((a) => !NO_RESOURCE_ACTIONS.has(a));
  const onNone = actions.filter((a) => NO_RESOURCE_ACTIONS.has(a));
  // "*" itself, as endpoint policies are written (AnyPrincipal would be {"AWS": "*"}).
  const anyone = new iam.StarPrincipal();
  if (onResources.length > 0)
    endpoint.addToPolicy(
      new iam.PolicyStatement({
        sid: 'ThisAccountOnThisAccount',
        principals: [anyone],
        actions: onResources,
        resources: ['*'],
        conditions: { StringEquals: { 'aws:PrincipalAccount': account, 'aws:ResourceAccount': account } },
      }),
    );
  // An action on no resource has no resource account to compare; what it gives (a registry token)
  // is for the caller's own account, so the caller's account is what binds it.
  if (onNone.length > 0)
    endpoint.addToPolicy(
      new iam.PolicyStatement({
        sid: 'ThisAccountOnly',
        principals: [anyone],
        actions: onNone,
        resources: ['*'],
        conditions: { StringEquals: { 'aws:PrincipalAccount': account } },
      }),
    );
}

/** Actions IAM takes only with Resource "*": they name no resource, so none has an account. */
const NO_RESOURCE_ACTIONS = new Set(['ecr:GetAuthorizationToken']);

/**
 * The S3 gateway endpoint's policy: the runner's GET and PUT (presigned by the calls function) and
 * the image layers, nothing else. The GETs: a run's inputs, and the agent's bundle where the bundle
 * store keeps it (an agent version's archive, `bundles/…/<version>.tar.gz|.zip`; never a payload,
 * which is `.json`), read in place rather than copied for every run (docs/sandbox-aws.md).
 */
export function admitRunObjectsOnly(s3: ec2.GatewayVpcEndpoint, bucketArn: string): void {
  const stack = Stack.of(s3);
  s3.addToPolicy(
    new iam.PolicyStatement({
      principals: [new iam.AnyPrincipal()],
      actions: ['s3:GetObject'],
      resources: [
        `${bucketArn}/${SANDBOX_INPUTS_PREFIX}*`,
        `${bucketArn}/${BUNDLE_KEY_PREFIX}*.tar.gz`,
        `${bucketArn}/${BUNDLE_KEY_PREFIX}*.zip`,
        `arn:${stack.partition}:s3:::prod-${stack.region}-starport-layer-bucket/*`,
      ],
    }),
  );
  // ECS's agent asks where the bucket is before it reads a task's env file (the execution role).
  s3.addToPolicy(
    new iam.PolicyStatement({
      principals: [new iam.AnyPrincipal()],
      actions: ['s3:GetBucketLocation'],
      resources: [bucketArn],
    }),
  );
  s3.addToPolicy(
    new iam.PolicyStatement({
      principals: [new iam.AnyPrincipal()],
      actions: ['s3:PutObject'],
      resources: [`${bucketArn}/${SANDBOX_RESULTS_PREFIX}*`],
    }),
  );
}

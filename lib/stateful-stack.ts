import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import {
  SANDBOX_INPUTS_PREFIX,
  SANDBOX_RESULTS_PREFIX,
} from '../functions/adapters/aws/ecs-sandbox-staging.ts';
import { TABLE_SCHEMA } from '../functions/adapters/aws/table-schema.ts';
import { ENV } from '../functions/shared/env-names.ts';

/**
 * The names under which the stateful stack exports what the stateless stack uses. Named exports
 * (rather than CDK's generated ones) keep the contract between the stacks explicit and stable,
 * and let cdk-nag findings on the importing side be acknowledged by their exact id.
 */
export interface StatefulExports {
  tableName: string;
  tableArn: string;
  bundleBucketName: string;
  bundleBucketArn: string;
}

/**
 * Everything that holds data and must outlive a redeploy of the code: the single table and the
 * bucket of agents' code bundles. Both are retained when the stack is deleted.
 */
export class StatefulStack extends Stack {
  readonly table: dynamodb.Table;
  readonly bundleBucket: s3.Bucket;
  readonly exportNames: StatefulExports;

  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: the stack's resources and the grants between them, made in one place (helpers would take most of its fields)
  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    // Server access logs delivered under a bucket policy, not the legacy log-delivery ACL.
    this.node.setContext('@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy', true);

    const attr = (name: string): dynamodb.Attribute => ({ name, type: dynamodb.AttributeType.STRING });

    this.table = new dynamodb.Table(this, 'Table', {
      // No fixed name: CloudFormation derives one from the stack, so stages do not collide; the
      // functions get it from their environment, operators from the TableName output.
      partitionKey: attr(TABLE_SCHEMA.partitionKey),
      sortKey: attr(TABLE_SCHEMA.sortKey),
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: TABLE_SCHEMA.ttlAttribute,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      /**
       * AWS managed key (aws/dynamodb) rather than a customer managed key: data is KMS-encrypted at
       * rest and every use of the key is in CloudTrail, with no key policy to get wrong, no KMS
       * grant for each function, no monthly key charge, and no way to lose the table by disabling
       * or deleting a key. The table holds no secret values (API keys are stored as hashes, secret
       * values live in Secrets Manager). A deployment that needs control of the key policy or
       * cross-account access can switch to CUSTOMER_MANAGED here.
       */
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const index of TABLE_SCHEMA.indexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: attr(index.partitionKey),
        sortKey: attr(index.sortKey),
        projectionType: dynamodb.ProjectionType.ALL,
      });
    }

    // Server access logs of the bundle bucket (cdk-nag S1 exempts a bucket that is a log target).
    const accessLogs = new s3.Bucket(this, 'BundleAccessLogs', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [{ expiration: Duration.days(365) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.bundleBucket = new s3.Bucket(this, 'BundleBucket', {
      // SSE-S3, what the bundle store asks for without PLATFORM_BUNDLE_KMS_KEY_ID: bundles are
      // users' code, not secrets, and SSE-KMS would add a KMS call and grant on every read.
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      // A deleted or overwritten bundle stays recoverable for 30 days.
      versioned: true,
      lifecycleRules: [
        {
          noncurrentVersionExpiration: Duration.days(30),
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
        // The sandbox's run objects (a run's inputs hold its secret values; a warm runner's claims
        // too) are deleted, every version, by the session that wrote them, and what a crashed
        // function left by housekeeping within minutes (run-object-sweep.ts). Should that fail, it
        // goes after a day, with its old versions and the delete marker left behind
        // (docs/sandbox-aws.md).
        ...[SANDBOX_INPUTS_PREFIX, SANDBOX_RESULTS_PREFIX].flatMap((prefix) => [
          { prefix, expiration: Duration.days(1), noncurrentVersionExpiration: Duration.days(1) },
          { prefix, expiredObjectDeleteMarker: true },
        ]),
      ],
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: 'bundles/',
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // A run's inputs (its manifest with the secret values it declares, a warm runner's claims) are
    // read by its sandbox task alone, through the sandbox VPC's S3 endpoint, with URLs the platform
    // presigns; the platform itself never reads them back. So a read that came through no VPC
    // endpoint is refused whoever signed it: a principal with broad S3 read (AWS's ReadOnlyAccess),
    // or a presigned URL leaked from a RunTask override (DescribeTasks, CloudTrail) and used from
    // the internet (docs/sandbox-aws.md).
    this.bundleBucket.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'RunInputsOnlyThroughAnEndpoint',
        effect: iam.Effect.DENY,
        principals: [new iam.AnyPrincipal()],
        actions: ['s3:GetObject', 's3:GetObjectVersion'],
        resources: [this.bundleBucket.arnForObjects(`${SANDBOX_INPUTS_PREFIX}*`)],
        conditions: { Null: { 'aws:SourceVpce': 'true' } },
      }),
    );

    const exported = (name: string, value: string, description: string) => {
      const exportName = `${this.stackName}-${name}`;
      new CfnOutput(this, name, { value, description, exportName });
      return exportName;
    };
    this.exportNames = {
      tableName: exported(
        'TableName',
        this.table.tableName,
        `${ENV.tableName}, for the agenthost CLI in AWS mode`,
      ),
      tableArn: exported('TableArn', this.table.tableArn, 'The single table'),
      bundleBucketName: exported('BundleBucketName', this.bundleBucket.bucketName, ENV.bundleBucket),
      bundleBucketArn: exported('BundleBucketArn', this.bundleBucket.bucketArn, 'The code-bundle bucket'),
    };
  }
}

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ArnFormat,
  AssetHashType,
  DockerImage,
  Duration,
  type ILocalBundling,
  RemovalPolicy,
  Stack,
} from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { TABLE_SCHEMA } from '../../functions/adapters/aws/table-schema.ts';
import { BUNDLE_KEY_PREFIX } from '../../functions/ports/bundle-store.ts';
import { ENV } from '../../functions/shared/env-names.ts';
import { acknowledge, cdkNagName } from '../acknowledge.ts';
import { buildContainerProgram, containerProgramFile, containerProgramsOf } from '../container-programs.ts';
import { cachedBuildSync, writeBuild } from '../esbuild-cache.ts';
import { esbuildBuildOptions, LAMBDA_ESBUILD_TARGET } from '../lambda-bundling.ts';
import {
  BUNDLE_READ_ACTIONS,
  BUNDLE_WRITE_ACTIONS,
  type ModuleAccess,
  SECRETS_READ_ACTIONS,
  SECRETS_WRITE_ACTIONS,
  TABLE_ACTIONS,
  TABLE_READ_ACTIONS,
} from '../module-access.ts';
import { XRAY_SPAN_ACTIONS } from '../tracing.ts';

/** The repository root: esbuild runs there, with its package-lock.json and tsconfig.json. */
export const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The newest Node.js runtime aws-cdk-lib offers, which the bundle targets. A named version rather
 * than NODEJS_LATEST, so an aws-cdk-lib upgrade never changes the runtime of a deployed function
 * without a commit that says so.
 */
export const PLATFORM_RUNTIME = lambda.Runtime.NODEJS_24_X;

/**
 * The memory of the functions that run agents (calls, mcp, schedule-runs, schedule-fire): most of
 * their billed time is spent waiting on a model or a sandbox, and Lambda bills that wait at the
 * configured memory. Decided on measured cost (npm run bench:aws-cost; the figures:
 * docs/performance.md, "AWS cost"), with each emulated instance held to the CPU Lambda gives its
 * memory (a vCPU at 1,769 MB: 22% at 384 MB, 29% at 512; functions/emulator/lambda-cpu-share.ts):
 * a prompt call's CPU work is a few tens of milliseconds, so at 384 MB it takes about as long as
 * at 512 and bills a quarter less for the same wait. The calls function's peak resident set over
 * every shape of the bench (prompt calls, a long streamed call, an agent calling another, tool
 * calls) is about half of 384 MB, and the large-values e2e passes at 384 MB. Lower is not measured: at 256 MB (14% of a vCPU) a call's
 * CPU work would take half as long again, and a large value has less room above that peak.
 */
export const AGENT_RUNNER_MEMORY_MB = 384;

/** A resource from the stateful stack: its name and ARN (tokens, usually imports). */
export interface SharedResource {
  name: string;
  arn: string;
}

export interface PlatformFunctionProps {
  /** The handler module: functions/http/<module>.ts, absolute or relative to the repository root. */
  entry: string;
  /** What the function may touch (lib/module-access.ts): drives its grants and its bundle's externals. */
  access: ModuleAccess;
  /** The single table. Its name is always in the environment: config requires it in AWS mode. */
  table: SharedResource;
  /** The code-bundle bucket. Its name is always in the environment: every Lambda builds the bundle store. */
  bundleBucket: SharedResource;
  /** PLATFORM_SECRETS_PREFIX: this deployment's Secrets Manager name prefix. */
  secretsPrefix: string;
  /** Extra environment, merged over the defaults. */
  environment?: Record<string, string>;
  /**
   * An API function: it counts requests without a valid key per client address (the address
   * counters, keys ADDRESS#…; core/usage/address-rate-limit.ts) and authenticated requests per
   * account (the request-rate counters, keys REQUESTS#…; core/usage/account-request-rate.ts),
   * whatever its table access.
   */
  countsAddresses?: boolean;
  /**
   * Anything else, merged over the defaults (Solutions Constructs style): `environment` key by
   * key, the rest replaces. Not overridable: the code (the bundled entry), the role and log group
   * (grants and retention attach to them), PLATFORM_MODE, PLATFORM_TABLE_NAME and
   * PLATFORM_BUNDLE_BUCKET.
   */
  functionProps?: Partial<Omit<lambda.FunctionProps, 'code'>>;
  /** @default one month */
  logRetention?: logs.RetentionDays;
}

/**
 * Bundles one handler with esbuild (the local devDependency, never Docker) into the asset
 * directory, reusing an earlier identical build while its inputs are unchanged (lib/esbuild-cache.ts). Its fields are data on purpose: CDK caches staged assets by the JSON of the bundling
 * options, so the entry and the access must be in it (with only a function, every handler got
 * the first one's bundle).
 */
class EsbuildBundling implements ILocalBundling {
  readonly entry: string;
  readonly access: ModuleAccess;

  constructor(entry: string, access: ModuleAccess) {
    this.entry = entry;
    this.access = access;
  }

  tryBundle(outputDir: string): boolean {
    writeBuild(
      cachedBuildSync({
        ...esbuildBuildOptions(this.access, join(PROJECT_ROOT, this.entry), outputDir),
        absWorkingDir: PROJECT_ROOT,
        logLevel: 'warning',
      }),
    );
    // The programs the function hands to ECS tasks (the sandbox runner, the service programs).
    for (const program of containerProgramsOf(this.access)) {
      const file = join(outputDir, containerProgramFile(program));
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, buildContainerProgram(program));
    }
    return true;
  }
}

/**
 * The handler's asset: `index.mjs` and its chunks (options in lib/lambda-bundling.ts), hashed by
 * its output. The image is never pulled: local bundling always succeeds or throws.
 */
function bundledCode(entry: string, access: ModuleAccess): lambda.Code {
  return lambda.Code.fromAsset(PROJECT_ROOT, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      image: DockerImage.fromRegistry('agenthost-bundles-locally-with-esbuild'),
      local: new EsbuildBundling(relative(PROJECT_ROOT, entry), access),
    },
  });
}

/**
 * One Lambda of the platform, with the defaults every function shares: esbuild bundling with the
 * local devDependency (options in lambda-bundling.ts) to minified ESM, ARM64, the newest Node
 * runtime, a log group with retention, active X-Ray tracing, and its own role holding exactly the
 * grants its ModuleAccess declares (no AWS managed policies).
 */
export class PlatformFunction extends Construct {
  readonly function: lambda.Function;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: PlatformFunctionProps) {
    super(scope, id);
    if (PLATFORM_RUNTIME.name !== `nodejs${LAMBDA_ESBUILD_TARGET.replace('node', '')}.x`) {
      throw new Error(
        `esbuild target ${LAMBDA_ESBUILD_TARGET} does not match runtime ${PLATFORM_RUNTIME.name}`,
      );
    }

    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      // Function logs live and die with the code; the data is in the stateful stack.
      removalPolicy: RemovalPolicy.DESTROY,
    });

    // Our own role instead of the default one, which carries the AWS managed
    // AWSLambdaBasicExecutionRole (create any log group, write to any).
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `agenthost ${id}`,
    });
    this.logGroup.grantWrite(this.role);

    const { environment: envOverrides, ...rest } = props.functionProps ?? {};
    const defaults = {
      runtime: PLATFORM_RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      handler: 'index.handler',
      // More memory is more CPU: a faster cold start and JSON work, at a cost per ms.
      memorySize: 512,
      // Below API Gateway's 29 s integration limit, so a slow call ends as our timeout, logged here.
      timeout: Duration.seconds(10),
      tracing: lambda.Tracing.ACTIVE,
      description: `agenthost ${id}`,
    };

    const entry = isAbsolute(props.entry) ? props.entry : join(PROJECT_ROOT, props.entry);
    this.function = new lambda.Function(this, 'Function', {
      ...defaults,
      ...rest,
      code: bundledCode(entry, props.access),
      role: this.role,
      logGroup: this.logGroup,
      environment: {
        [ENV.logLevel]: 'info',
        [ENV.secretsPrefix]: props.secretsPrefix,
        ...props.environment,
        ...envOverrides,
        [ENV.mode]: 'aws',
        [ENV.tableName]: props.table.name,
        [ENV.bundleBucket]: props.bundleBucket.name,
      },
    });

    this.grantAccess(props);
  }

  /**
   * `-c tracing=xray` (docs/deploy.md, "Traces to X-Ray"): the function sends the platform's spans to
   * X-Ray's OTLP endpoint in its region, signed with this role (PLATFORM_TRACES_EXPORT=xray; the
   * composition root picks functions/adapters/telemetry/xray-transport.ts). The grant joins the
   * role's existing policy, so the stack gains no resource; its Resource "*" is already acknowledged
   * below with the other X-Ray actions.
   */
  exportTracesToXray(): void {
    this.function.addEnvironment(ENV.tracesExport, 'xray');
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: [...XRAY_SPAN_ACTIONS], resources: ['*'] }),
    );
  }

  private grantAccess(props: PlatformFunctionProps): void {
    const { access } = props;
    const stack = Stack.of(this);
    const allow = (actions: readonly string[], resources: string[]) =>
      this.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: [...actions], resources }));
    const acknowledgements: { id: string; reason: string }[] = [];
    // Actions IAM only grants on Resource "*".
    const anyResource = [
      'xray:PutTraceSegments and xray:PutTelemetryRecords (Tracing.ACTIVE)',
      "with -c tracing=xray, xray:PutSpans and xray:PutSpansForIndexing (spans to X-Ray's OTLP endpoint)",
    ];

    if (access.table !== 'none') {
      // The table and its indexes by name (TABLE_SCHEMA), rather than grant()'s "<table>/index/*".
      const arn = props.table.arn;
      allow(access.table === 'read-write' ? TABLE_ACTIONS : TABLE_READ_ACTIONS, [
        arn,
        ...TABLE_SCHEMA.indexes.map((index) => `${arn}/index/${index.name}`),
      ]);
    }

    if (props.countsAddresses && access.table !== 'read-write') {
      // The rate counters only: an update of an item whose partition key starts with ADDRESS# (an
      // address's minute) or REQUESTS# (an account's minute).
      this.role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: ['dynamodb:UpdateItem'],
          resources: [props.table.arn],
          conditions: {
            'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['ADDRESS#*', 'REQUESTS#*'] },
          },
        }),
      );
    }

    if (access.bundles !== 'none') {
      // The bundles only: the bucket also holds the sandbox's run objects (secret values).
      const objects = `${props.bundleBucket.arn}/${BUNDLE_KEY_PREFIX}*`;
      allow(
        access.bundles === 'read-write'
          ? [...BUNDLE_READ_ACTIONS, ...BUNDLE_WRITE_ACTIONS]
          : BUNDLE_READ_ACTIONS,
        [objects],
      );
      acknowledgements.push({
        id: `AwsSolutions-IAM5[Resource::${cdkNagName(stack.resolve(objects))}]`,
        reason:
          'Bundle object keys are made at run time from the agent and version; the grant covers the bundles/ prefix of the one bundle bucket, not its other objects, the bucket itself or any other.',
      });
    }

    if (access.secrets !== 'none') {
      const prefix = props.secretsPrefix.replace(/\/+$/, '');
      const secrets = stack.formatArn({
        service: 'secretsmanager',
        resource: 'secret',
        resourceName: `${prefix}/*`,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      });
      const actions: string[] = access.secrets === 'read' ? [] : [...SECRETS_WRITE_ACTIONS];
      if (access.secrets === 'read-write' || access.secrets === 'read') {
        actions.push(...SECRETS_READ_ACTIONS);
        allow(['secretsmanager:BatchGetSecretValue'], ['*']);
        anyResource.push(
          'secretsmanager:BatchGetSecretValue (each secret it returns is still checked against GetSecretValue, granted on the prefix only)',
        );
      }
      allow(actions, [secrets]);
      acknowledgements.push({
        id: `AwsSolutions-IAM5[Resource::${cdkNagName(stack.resolve(secrets))}]`,
        reason: `Workspace secrets are created at run time, one Secrets Manager secret each, named "${prefix}/<workspace>/<name>" (Secrets Manager adds a random suffix to each ARN); the grant covers this deployment's prefix only.`,
      });
    }

    acknowledgements.push({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: `IAM accepts only Resource "*" for actions without resource-level permissions: ${anyResource.join('; ')}.`,
    });
    acknowledge(this.role, acknowledgements);
  }
}

import { createHash } from 'node:crypto';

/**
 * The synthesized CloudFormation templates, read the way CloudFormation would deploy them: every
 * intrinsic function (Ref, Fn::GetAtt, Fn::ImportValue, Fn::Join, Fn::Sub, Fn::Select, Fn::Split)
 * resolved to the physical names and ARNs the emulated deployment uses. Names follow
 * CloudFormation's pattern (`<stack>-<logical id>`, lower case for buckets) without its random
 * suffix, so they stay the same from one start to the next and the data kept under them stays
 * reachable. A value this resolver cannot resolve is an error naming where it is: an emulated
 * function never starts with a half-resolved environment.
 */

export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  DependsOn?: string | string[];
}

export interface CfnTemplate {
  Resources: Record<string, CfnResource>;
  Outputs?: Record<string, { Value: unknown; Export?: { Name: unknown } }>;
}

export interface StackTemplate {
  stackName: string;
  template: CfnTemplate;
}

/** The emulated account and partition (what the pseudo parameters resolve to). */
export interface EmulatedAccount {
  region: string;
  accountId: string;
}

export class TemplateError extends Error {
  override name = 'TemplateError';
}

/** Short stable ids for resources CloudFormation names with a random id (subnets, security groups…). */
function shortId(seed: string, length = 17): string {
  return createHash('sha256').update(seed).digest('hex').slice(0, length);
}

/** A KMS key's id, as KMS makes them (a UUID), stable for the key's physical name. */
function kmsKeyId(physical: string): string {
  const h = shortId(`kms/${physical}`, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export class TemplateResolver {
  private readonly stacks: StackTemplate[];
  private readonly account: EmulatedAccount;
  /** Physical names the composition root decides itself (the API's id, for example). */
  private readonly overrides = new Map<string, string>();

  constructor(stacks: StackTemplate[], account: EmulatedAccount) {
    this.stacks = stacks;
    this.account = account;
  }

  /** Every resource of one type, across stacks. */
  resourcesOfType(type: string): { stack: StackTemplate; logicalId: string; resource: CfnResource }[] {
    return this.stacks.flatMap((stack) =>
      Object.entries(stack.template.Resources)
        .filter(([, r]) => r.Type === type)
        .map(([logicalId, resource]) => ({ stack, logicalId, resource })),
    );
  }

  stack(name: string): StackTemplate {
    const found = this.stacks.find((s) => s.stackName === name);
    if (!found) throw new TemplateError(`No stack ${name}`);
    return found;
  }

  /** Pins what `Ref` of a resource answers (before anything is resolved). */
  setPhysicalId(stackName: string, logicalId: string, physicalId: string): void {
    this.overrides.set(`${stackName}/${logicalId}`, physicalId);
  }

  /** A value of `stack`'s template with every intrinsic resolved. */
  resolve(stack: StackTemplate, value: unknown, where = '(value)'): unknown {
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map((v, i) => this.resolve(stack, v, `${where}[${i}]`));
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 1) {
      const [[fn, arg]] = entries as [[string, unknown]];
      if (fn === 'Ref') return this.ref(stack, String(arg), where);
      if (fn === 'Fn::GetAtt') {
        const [id, attr] = Array.isArray(arg) ? arg : String(arg).split(/\.(.*)/s);
        return this.getAtt(stack, String(id), String(attr), where);
      }
      if (fn === 'Fn::ImportValue') return this.importValue(String(this.resolve(stack, arg, where)), where);
      if (fn === 'Fn::Join') {
        const [sep, parts] = arg as [string, unknown[]];
        const resolved = this.resolve(stack, parts, where) as unknown[];
        return resolved.map(String).join(sep);
      }
      if (fn === 'Fn::Select') {
        const [index, list] = arg as [unknown, unknown];
        const items = this.resolve(stack, list, where) as unknown[];
        return items[Number(this.resolve(stack, index, where))];
      }
      if (fn === 'Fn::Split') {
        const [sep, text] = arg as [string, unknown];
        return String(this.resolve(stack, text, where)).split(sep);
      }
      if (fn === 'Fn::Sub') return this.sub(stack, arg, where);
      if (fn.startsWith('Fn::')) throw new TemplateError(`${where}: ${fn} is not supported by the emulator`);
    }
    return Object.fromEntries(entries.map(([k, v]) => [k, this.resolve(stack, v, `${where}.${k}`)]));
  }

  private sub(stack: StackTemplate, arg: unknown, where: string): string {
    const [text, vars] = Array.isArray(arg)
      ? [String(arg[0]), (arg[1] ?? {}) as Record<string, unknown>]
      : [String(arg), {} as Record<string, unknown>];
    return text.replace(/\$\{([^}]+)\}/g, (_m, name: string) => {
      if (name.startsWith('!')) return `\${${name.slice(1)}}`;
      if (name in vars) return String(this.resolve(stack, vars[name], where));
      const dot = name.indexOf('.');
      if (dot > 0 && !name.startsWith('AWS::')) {
        return String(this.getAtt(stack, name.slice(0, dot), name.slice(dot + 1), where));
      }
      return String(this.ref(stack, name, where));
    });
  }

  private pseudo(stack: StackTemplate, name: string): string | undefined {
    switch (name) {
      case 'AWS::Region':
        return this.account.region;
      case 'AWS::AccountId':
        return this.account.accountId;
      case 'AWS::Partition':
        return 'aws';
      case 'AWS::URLSuffix':
        return 'amazonaws.com';
      case 'AWS::StackName':
        return stack.stackName;
      case 'AWS::StackId':
        return `arn:aws:cloudformation:${this.account.region}:${this.account.accountId}:stack/${stack.stackName}/${shortId(stack.stackName, 8)}`;
      case 'AWS::NoValue':
        return undefined;
      default:
        return undefined;
    }
  }

  private resource(stack: StackTemplate, logicalId: string, where: string): CfnResource {
    const r = stack.template.Resources[logicalId];
    if (!r) throw new TemplateError(`${where}: no resource ${logicalId} in ${stack.stackName}`);
    return r;
  }

  /** The name a resource gets: its own name property, else `<stack>-<logical id>`. */
  physicalName(stack: StackTemplate, logicalId: string): string {
    const override = this.overrides.get(`${stack.stackName}/${logicalId}`);
    if (override) return override;
    const r = this.resource(stack, logicalId, logicalId);
    const p = r.Properties ?? {};
    const own = (key: string) =>
      p[key] === undefined ? undefined : String(this.resolve(stack, p[key], `${logicalId}.${key}`));
    switch (r.Type) {
      case 'AWS::DynamoDB::Table':
        return own('TableName') ?? `${stack.stackName}-${logicalId}`;
      case 'AWS::S3::Bucket':
        return own('BucketName') ?? `${stack.stackName}-${logicalId}`.toLowerCase().slice(0, 63);
      case 'AWS::Lambda::Function':
        return own('FunctionName') ?? `${stack.stackName}-${logicalId}`.slice(0, 64);
      case 'AWS::SecretsManager::Secret':
        return own('Name') ?? `${logicalId}-${shortId(`${stack.stackName}/${logicalId}`, 12)}`;
      case 'AWS::ECS::Cluster':
        return own('ClusterName') ?? `${stack.stackName}-${logicalId}`;
      case 'AWS::Scheduler::ScheduleGroup':
        return own('Name') ?? `${stack.stackName}-${logicalId}`;
      case 'AWS::SQS::Queue':
        return own('QueueName') ?? `${stack.stackName}-${logicalId}`;
      case 'AWS::IAM::Role':
        return own('RoleName') ?? `${stack.stackName}-${logicalId}`.slice(0, 64);
      case 'AWS::Logs::LogGroup':
        return own('LogGroupName') ?? `/aws/emulated/${stack.stackName}/${logicalId}`;
      case 'AWS::ECS::TaskDefinition':
        return own('Family') ?? `${stack.stackName}${logicalId}`;
      case 'AWS::ApiGateway::RestApi':
        return shortId(`${stack.stackName}/${logicalId}`, 10);
      default:
        return `${stack.stackName}-${logicalId}`;
    }
  }

  private arn(service: string, resource: string): string {
    return `arn:aws:${service}:${this.account.region}:${this.account.accountId}:${resource}`;
  }

  private ref(stack: StackTemplate, name: string, where: string): unknown {
    if (name.startsWith('AWS::')) return this.pseudo(stack, name);
    const r = this.resource(stack, name, where);
    const physical = this.physicalName(stack, name);
    switch (r.Type) {
      case 'AWS::SecretsManager::Secret':
        return this.arn('secretsmanager', `secret:${physical}`);
      case 'AWS::ECS::TaskDefinition':
        return this.arn('ecs', `task-definition/${physical}:1`);
      case 'AWS::SQS::Queue':
        return `https://sqs.${this.account.region}.amazonaws.com/${this.account.accountId}/${physical}`;
      case 'AWS::KMS::Key':
        return kmsKeyId(physical);
      // A version's and an alias's Ref is its qualified ARN; every version here is the same code.
      case 'AWS::Lambda::Version':
        return `${this.lambdaArn(stack, r, where)}:1`;
      case 'AWS::Lambda::Alias':
        return `${this.lambdaArn(stack, r, where)}:${String(this.resolve(stack, r.Properties?.Name, `${where}.Name`))}`;
      case 'AWS::EC2::Subnet':
        return `subnet-${shortId(physical)}`;
      case 'AWS::EC2::SecurityGroup':
        return `sg-${shortId(physical)}`;
      case 'AWS::EC2::VPC':
        return `vpc-${shortId(physical)}`;
      case 'AWS::ElasticLoadBalancingV2::Listener':
        return this.arn(
          'elasticloadbalancing',
          `listener/app/${stack.stackName.slice(0, 32)}/${shortId(physical, 16)}/${shortId(`${physical}/listener`, 16)}`,
        );
      default:
        return physical;
    }
  }

  /** The function a version or an alias is of (its FunctionName), as an unqualified ARN. */
  private lambdaArn(stack: StackTemplate, r: CfnResource, where: string): string {
    const name = String(this.resolve(stack, r.Properties?.FunctionName, `${where}.FunctionName`));
    return name.startsWith('arn:') ? name : this.arn('lambda', `function:${name}`);
  }

  private getAtt(stack: StackTemplate, logicalId: string, attr: string, where: string): unknown {
    const r = this.resource(stack, logicalId, where);
    const physical = this.physicalName(stack, logicalId);
    const key = `${r.Type}.${attr}`;
    switch (key) {
      case 'AWS::DynamoDB::Table.Arn':
        return this.arn('dynamodb', `table/${physical}`);
      case 'AWS::S3::Bucket.Arn':
        return `arn:aws:s3:::${physical}`;
      case 'AWS::Lambda::Function.Arn':
        return this.arn('lambda', `function:${physical}`);
      case 'AWS::IAM::Role.Arn':
        return `arn:aws:iam::${this.account.accountId}:role/${physical}`;
      case 'AWS::SQS::Queue.Arn':
        return this.arn('sqs', physical);
      case 'AWS::SQS::Queue.QueueUrl':
        return this.ref(stack, logicalId, where);
      case 'AWS::Scheduler::ScheduleGroup.Arn':
        return this.arn('scheduler', `schedule-group/${physical}`);
      case 'AWS::KMS::Key.Arn':
        return this.arn('kms', `key/${kmsKeyId(physical)}`);
      case 'AWS::KMS::Key.KeyId':
        return kmsKeyId(physical);
      case 'AWS::ECS::Cluster.Arn':
        return this.arn('ecs', `cluster/${physical}`);
      case 'AWS::Logs::LogGroup.Arn':
        return this.arn('logs', `log-group:${physical}:*`);
      case 'AWS::EC2::SecurityGroup.GroupId':
        return this.ref(stack, logicalId, where);
      case 'AWS::SecretsManager::Secret.Id':
        return this.ref(stack, logicalId, where);
      case 'AWS::ApiGateway::RestApi.RootResourceId':
        return `root-${shortId(physical, 8)}`;
      default:
        if (attr === 'Arn') return this.arn(r.Type.split('::')[1]?.toLowerCase() ?? 'unknown', physical);
        return `${physical}.${attr}`;
    }
  }

  private importValue(name: string, where: string): unknown {
    for (const stack of this.stacks) {
      for (const [id, output] of Object.entries(stack.template.Outputs ?? {})) {
        if (output.Export === undefined) continue;
        if (this.resolve(stack, output.Export.Name, `${stack.stackName}.Outputs.${id}`) !== name) continue;
        return this.resolve(stack, output.Value, `${stack.stackName}.Outputs.${id}`);
      }
    }
    throw new TemplateError(`${where}: no stack exports ${name}`);
  }
}

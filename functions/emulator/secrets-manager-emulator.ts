import { randomInt, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Tag } from '@aws-sdk/client-secrets-manager';
import type { Logger } from '../shared/logger.ts';
import { AwsWireError, EmulatorServer, parseJsonObject, readLimitedBody, sendJson } from './emulator-http.ts';
import { EncryptedStateFile } from './encrypted-state-file.ts';
import {
  type Body,
  checkName,
  err,
  invalidParameter,
  notFound,
  optionalString,
  requiredString,
  secretValue,
  tagsOf,
} from './secrets-manager-requests.ts';
import { type StoredSecret, seconds, valueEntry, versionOf } from './secrets-manager-versions.ts';

/*
 * A stand-in for AWS Secrets Manager on loopback: the awsJson1_1 protocol (POST /, X-Amz-Target:
 * secretsmanager.<Operation>, JSON in and out, errors as {"__type", "Message"} with status 400), so
 * the unchanged SecretsManagerClient in the bundled Lambdas talks to it through
 * AWS_ENDPOINT_URL_SECRETS_MANAGER. Operations: CreateSecret, PutSecretValue, GetSecretValue,
 * BatchGetSecretValue (by id list), DeleteSecret, RestoreSecret, DescribeSecret. State is one
 * file, encrypted at rest (encrypted-state-file.ts), so secrets survive a restart. A request's fields are checked in secrets-manager-requests.ts;
 * a stored secret's versions are secrets-manager-versions.ts.
 */

export interface SecretsManagerEmulatorOptions {
  /** Where the state file (secrets-manager.json, encrypted, mode 0600) and its key file live. */
  dataDir: string;
  region?: string;
  accountId?: string;
  /** The clock (scheduled deletions come due by it); tests pass a fake one. */
  now?: () => Date;
  logger?: Logger;
}

/** A secret the composition root registers before the Lambdas start (one the CDK template defines). */
export interface SeedSecretInput {
  name: string;
  secretString?: string;
  /** The ARN the template resolved for the secret, so a Lambda configured with it finds it. */
  arn?: string;
  description?: string;
  kmsKeyId?: string;
  tags?: Tag[];
}

export interface SecretWriteResult {
  arn: string;
  name: string;
  versionId: string;
}

interface State {
  secrets: StoredSecret[];
}

/** Secrets Manager's quota: 20 ids a batch. */
const MAX_BATCH_IDS = 20;
/** The service's own request limit is far larger than any valid request; this bounds memory. */
const MAX_REQUEST_BYTES = 1024 * 1024;
const SUFFIX_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const DEFAULT_RECOVERY_DAYS = 30;

const MARKED_FOR_DELETION =
  "You can't perform this operation on the secret because it was marked for deletion.";

export class SecretsManagerEmulator {
  private readonly region: string;
  private readonly accountId: string;
  private readonly now: () => Date;
  private readonly logger: Logger | undefined;
  private readonly file: EncryptedStateFile<State>;
  private readonly state: State;
  private readonly server: EmulatorServer;

  constructor(options: SecretsManagerEmulatorOptions) {
    this.region = options.region ?? 'us-east-1';
    this.accountId = options.accountId ?? '000000000000';
    this.now = options.now ?? (() => new Date());
    this.logger = options.logger;
    this.file = new EncryptedStateFile(options.dataDir, 'secrets-manager', 'the Secrets Manager state');
    this.state = this.file.load({ secrets: [] });
    this.server = new EmulatorServer(
      (req, res) => this.handle(req, res),
      (res, e) => sendJson(res, e.status, { __type: e.code, Message: e.message, ...e.fields }),
      this.logger,
    );
  }

  listen(port: number, host: string): Promise<string> {
    return this.server.listen(port, host);
  }

  close(): Promise<void> {
    return this.server.close();
  }

  /**
   * Registers a secret as CreateSecret would, optionally under a given ARN (the one the CDK
   * template's resources resolve to). Refuses a name or ARN already in use.
   */
  createSecret(input: SeedSecretInput): SecretWriteResult {
    checkName(input.name);
    if (input.arn !== undefined && this.findByArn(input.arn)) {
      throw err('ResourceExistsException', `A secret with the ARN ${input.arn} already exists.`);
    }
    const value = secretValue(input.secretString === undefined ? {} : { SecretString: input.secretString });
    const created = this.create({
      name: input.name,
      arn: input.arn,
      value,
      description: input.description,
      kmsKeyId: input.kmsKeyId,
      tags: input.tags ?? [],
      versionId: undefined,
    });
    return { arn: created.arn, name: created.name, versionId: created.current?.versionId ?? '' };
  }

  /** Sets a new current value of an existing secret, by name or ARN, as PutSecretValue would. */
  putSecretValue(nameOrArn: string, value: string): SecretWriteResult {
    return this.putValue(nameOrArn, secretValue({ SecretString: value }), undefined);
  }

  // ---------------------------------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = String(req.headers['x-amz-target'] ?? '');
    const operation = target.startsWith('secretsmanager.') ? target.slice('secretsmanager.'.length) : '';
    if (req.method !== 'POST' || !operation) {
      throw err('UnknownOperationException', 'The operation is not supported by this endpoint.');
    }
    const raw = await readLimitedBody(
      req,
      MAX_REQUEST_BYTES,
      () => new AwsWireError('RequestEntityTooLargeException', 413, 'The request is too large.'),
    );
    sendJson(res, 200, this.dispatch(operation, parseJsonObject(raw) as Body), {
      'content-type': 'application/x-amz-json-1.1',
    });
  }

  private dispatch(operation: string, body: Body): unknown {
    this.purgeDueDeletions();
    switch (operation) {
      case 'CreateSecret':
        return this.createSecretOp(body);
      case 'PutSecretValue':
        return this.putSecretValueOp(body);
      case 'GetSecretValue':
        return this.getSecretValueOp(body);
      case 'BatchGetSecretValue':
        return this.batchGetSecretValueOp(body);
      case 'DeleteSecret':
        return this.deleteSecretOp(body);
      case 'RestoreSecret':
        return this.restoreSecretOp(body);
      case 'DescribeSecret':
        return this.describeSecretOp(body);
      default:
        throw err(
          'UnknownOperationException',
          `The operation ${operation} is not supported by this emulator.`,
        );
    }
  }

  private createSecretOp(body: Body): unknown {
    const name = requiredString(body, 'Name');
    checkName(name);
    const secret = this.create({
      name,
      arn: undefined,
      value: secretValue(body),
      description: optionalString(body, 'Description'),
      kmsKeyId: optionalString(body, 'KmsKeyId'),
      tags: tagsOf(body),
      versionId: optionalString(body, 'ClientRequestToken'),
    });
    return {
      ARN: secret.arn,
      Name: secret.name,
      ...(secret.current ? { VersionId: secret.current.versionId } : {}),
    };
  }

  private putSecretValueOp(body: Body): unknown {
    const id = requiredString(body, 'SecretId');
    const value = secretValue(body);
    if (!value) throw invalidParameter('You must provide either SecretString or SecretBinary.');
    const out = this.putValue(id, value, optionalString(body, 'ClientRequestToken'));
    return { ARN: out.arn, Name: out.name, VersionId: out.versionId, VersionStages: ['AWSCURRENT'] };
  }

  private getSecretValueOp(body: Body): unknown {
    const secret = this.live(requiredString(body, 'SecretId'));
    const version = versionOf(
      secret,
      optionalString(body, 'VersionId'),
      optionalString(body, 'VersionStage'),
    );
    return valueEntry(secret, version);
  }

  private batchGetSecretValueOp(body: Body): unknown {
    if (body.Filters !== undefined && body.Filters !== null) {
      if (body.SecretIdList !== undefined) {
        throw invalidParameter('Either SecretIdList or Filters must be provided, but not both.');
      }
      throw invalidParameter('Filters are not supported by this emulator; pass SecretIdList.');
    }
    const ids = body.SecretIdList;
    if (!Array.isArray(ids) || ids.length === 0 || !ids.every((id) => typeof id === 'string' && id)) {
      throw invalidParameter('SecretIdList must be a list of 1 to 20 secret names or ARNs.');
    }
    if (ids.length > MAX_BATCH_IDS) {
      throw invalidParameter(`SecretIdList can contain at most ${MAX_BATCH_IDS} secret ids.`);
    }
    const SecretValues: unknown[] = [];
    const Errors: unknown[] = [];
    for (const id of ids as string[]) {
      try {
        const secret = this.live(id);
        SecretValues.push(valueEntry(secret, versionOf(secret, undefined, undefined)));
      } catch (e) {
        if (!(e instanceof AwsWireError)) throw e;
        Errors.push({ SecretId: id, ErrorCode: e.code, Message: e.message });
      }
    }
    return { SecretValues, Errors };
  }

  private deleteSecretOp(body: Body): unknown {
    const id = requiredString(body, 'SecretId');
    const force = body.ForceDeleteWithoutRecovery === true;
    const window = body.RecoveryWindowInDays;
    if (force && window !== undefined && window !== null) {
      throw invalidParameter(
        "You can't use ForceDeleteWithoutRecovery in conjunction with RecoveryWindowInDays.",
      );
    }
    const days = window === undefined || window === null ? DEFAULT_RECOVERY_DAYS : window;
    if (!force && (typeof days !== 'number' || !Number.isInteger(days) || days < 7 || days > 30)) {
      throw invalidParameter('RecoveryWindowInDays must be a whole number of days from 7 to 30.');
    }
    const secret = this.find(id);
    if (!secret) throw notFound();
    const now = this.now().getTime();
    if (force) {
      this.state.secrets = this.state.secrets.filter((s) => s !== secret);
      this.save();
      return { ARN: secret.arn, Name: secret.name, DeletionDate: seconds(now) };
    }
    if (secret.deletionDate !== undefined) throw err('InvalidRequestException', MARKED_FOR_DELETION);
    secret.deletionDate = now + (days as number) * 86_400_000;
    this.save();
    return { ARN: secret.arn, Name: secret.name, DeletionDate: seconds(secret.deletionDate) };
  }

  private restoreSecretOp(body: Body): unknown {
    const secret = this.find(requiredString(body, 'SecretId'));
    if (!secret) throw notFound();
    delete secret.deletionDate;
    this.save();
    return { ARN: secret.arn, Name: secret.name };
  }

  private describeSecretOp(body: Body): unknown {
    const secret = this.find(requiredString(body, 'SecretId'));
    if (!secret) throw notFound();
    const versions: Record<string, string[]> = {};
    if (secret.current) versions[secret.current.versionId] = ['AWSCURRENT'];
    if (secret.previous) versions[secret.previous.versionId] = ['AWSPREVIOUS'];
    return {
      ARN: secret.arn,
      Name: secret.name,
      ...(secret.description !== undefined ? { Description: secret.description } : {}),
      ...(secret.kmsKeyId !== undefined ? { KmsKeyId: secret.kmsKeyId } : {}),
      Tags: secret.tags,
      CreatedDate: seconds(secret.createdDate),
      LastChangedDate: seconds(secret.lastChangedDate),
      ...(secret.deletionDate !== undefined ? { DeletedDate: seconds(secret.deletionDate) } : {}),
      VersionIdsToStages: versions,
    };
  }

  // ---------------------------------------------------------------------------------------------

  private create(input: {
    name: string;
    arn: string | undefined;
    value: { secretString?: string; secretBinary?: string } | undefined;
    description: string | undefined;
    kmsKeyId: string | undefined;
    tags: Tag[];
    versionId: string | undefined;
  }): StoredSecret {
    const existing = this.state.secrets.find((s) => s.name === input.name);
    if (existing?.deletionDate !== undefined) {
      throw err(
        'InvalidRequestException',
        "You can't create this secret because a secret with this name is already scheduled for deletion.",
      );
    }
    if (existing) {
      throw err(
        'ResourceExistsException',
        `The operation failed because the secret ${input.name} already exists.`,
      );
    }
    const now = this.now().getTime();
    const secret: StoredSecret = {
      arn: input.arn ?? this.newArn(input.name),
      name: input.name,
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.kmsKeyId !== undefined ? { kmsKeyId: input.kmsKeyId } : {}),
      tags: input.tags,
      createdDate: now,
      lastChangedDate: now,
      ...(input.value
        ? { current: { versionId: input.versionId ?? randomUUID(), ...input.value, createdDate: now } }
        : {}),
    };
    this.state.secrets.push(secret);
    this.save();
    return secret;
  }

  private putValue(
    id: string,
    value: { secretString?: string; secretBinary?: string } | undefined,
    token: string | undefined,
  ): SecretWriteResult {
    const secret = this.live(id);
    const current = secret.current;
    // A retried request (same ClientRequestToken) is idempotent only with the same value.
    if (token !== undefined && (current?.versionId === token || secret.previous?.versionId === token)) {
      const same = current?.versionId === token ? current : secret.previous;
      if (same?.secretString === value?.secretString && same?.secretBinary === value?.secretBinary) {
        return { arn: secret.arn, name: secret.name, versionId: token };
      }
      throw err(
        'ResourceExistsException',
        "You can't modify an existing version, you can only create a new version.",
      );
    }
    const now = this.now().getTime();
    if (current) secret.previous = current;
    secret.current = { versionId: token ?? randomUUID(), ...value, createdDate: now };
    secret.lastChangedDate = now;
    this.save();
    return { arn: secret.arn, name: secret.name, versionId: secret.current.versionId };
  }

  /** A secret that is not scheduled for deletion, by name, full ARN or partial ARN. */
  private live(id: string): StoredSecret {
    const secret = this.find(id);
    if (!secret) throw notFound();
    if (secret.deletionDate !== undefined) throw err('InvalidRequestException', MARKED_FOR_DELETION);
    return secret;
  }

  private find(id: string): StoredSecret | undefined {
    if (id.startsWith('arn:')) return this.findByArn(id);
    return this.state.secrets.find((s) => s.name === id);
  }

  /** A full ARN, or a partial one: the ARN without the six random characters Secrets Manager adds. */
  private findByArn(arn: string): StoredSecret | undefined {
    return (
      this.state.secrets.find((s) => s.arn === arn) ??
      this.state.secrets.find((s) => /-[A-Za-z0-9]{6}$/.test(s.arn) && s.arn.slice(0, -7) === arn)
    );
  }

  private newArn(name: string): string {
    const suffix = Array.from({ length: 6 }, () => SUFFIX_CHARS[randomInt(SUFFIX_CHARS.length)]).join('');
    return `arn:aws:secretsmanager:${this.region}:${this.accountId}:secret:${name}-${suffix}`;
  }

  /** Secrets whose recovery window has passed are gone, as they would be in AWS. */
  private purgeDueDeletions(): void {
    const now = this.now().getTime();
    const kept = this.state.secrets.filter((s) => s.deletionDate === undefined || s.deletionDate > now);
    if (kept.length !== this.state.secrets.length) {
      this.state.secrets = kept;
      this.save();
    }
  }

  private save(): void {
    this.file.save(this.state);
  }
}

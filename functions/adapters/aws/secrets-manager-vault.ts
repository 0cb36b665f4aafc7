import { setTimeout as delay } from 'node:timers/promises';
import {
  BatchGetSecretValueCommand,
  CreateSecretCommand,
  DeleteSecretCommand,
  InvalidRequestException,
  PutSecretValueCommand,
  ResourceExistsException,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import type { SecretRef, SecretVault } from '../../ports/secret-vault.ts';

export interface SecretsManagerVaultOptions {
  /** Every secret's name starts with `<prefix>/`; the Lambdas are granted that prefix only. */
  prefix: string;
  /** The KMS key that encrypts the secrets (the stack's key); the account default when absent. */
  kmsKeyId?: string | undefined;
  client?: SecretsManagerClient;
  /** Waits between create attempts while a deleted secret of the same name is still being removed. */
  retryDelaysMs?: number[];
}

/** BatchGetSecretValue takes at most 20 ids a call. */
const BATCH = 20;

/**
 * The AWS vault: one Secrets Manager secret per workspace secret, named
 * `<prefix>/<workspace_id>/<NAME>`, encrypted with the platform's KMS key and tagged with its
 * workspace. Names and timestamps for listings stay in the table; this holds values only.
 */
export class SecretsManagerVault implements SecretVault {
  private readonly client: SecretsManagerClient;
  private readonly prefix: string;
  private readonly kmsKeyId: string | undefined;
  private readonly retryDelaysMs: number[];

  constructor(options: SecretsManagerVaultOptions) {
    this.client = options.client ?? new SecretsManagerClient({});
    this.prefix = options.prefix.replace(/\/+$/, '');
    this.kmsKeyId = options.kmsKeyId;
    this.retryDelaysMs = options.retryDelaysMs ?? [250, 1000, 3000];
  }

  secretName(ref: SecretRef): string {
    return `${this.prefix}/${ref.workspaceId}/${ref.name}`;
  }

  async putValue(ref: SecretRef, value: string): Promise<void> {
    const SecretId = this.secretName(ref);
    try {
      await this.client.send(new PutSecretValueCommand({ SecretId, SecretString: value }));
      return;
    } catch (err) {
      if (!(err instanceof ResourceNotFoundException)) throw err;
    }
    for (let attempt = 0; ; attempt++) {
      try {
        await this.client.send(
          new CreateSecretCommand({
            Name: SecretId,
            SecretString: value,
            ...(this.kmsKeyId ? { KmsKeyId: this.kmsKeyId } : {}),
            Description: `agenthost workspace secret ${ref.name}`,
            Tags: [
              { Key: 'agenthost:workspace', Value: ref.workspaceId },
              { Key: 'agenthost:secret', Value: ref.name },
            ],
          }),
        );
        return;
      } catch (err) {
        // Created by a concurrent request between our two calls: the value is ours to set.
        if (err instanceof ResourceExistsException) {
          await this.client.send(new PutSecretValueCommand({ SecretId, SecretString: value }));
          return;
        }
        // A forced delete of the same name finishes in the background; wait for it a little.
        const pendingDelete =
          err instanceof InvalidRequestException && /scheduled for deletion/i.test(err.message);
        const wait = this.retryDelaysMs[attempt];
        if (!pendingDelete || wait === undefined) throw err;
        await delay(wait);
      }
    }
  }

  async deleteValue(ref: SecretRef): Promise<void> {
    try {
      // Without recovery, so a secret of the same name can be created again at once.
      await this.client.send(
        new DeleteSecretCommand({ SecretId: this.secretName(ref), ForceDeleteWithoutRecovery: true }),
      );
    } catch (err) {
      if (!(err instanceof ResourceNotFoundException)) throw err;
    }
  }

  async resolve(workspaceId: string, names: string[]): Promise<Record<string, string>> {
    const wanted = [...new Set(names)];
    const byId = new Map(wanted.map((name) => [this.secretName({ workspaceId, name }), name]));
    const out: Record<string, string> = {};
    const ids = [...byId.keys()];
    for (let i = 0; i < ids.length; i += BATCH) {
      const res = await this.client.send(
        new BatchGetSecretValueCommand({ SecretIdList: ids.slice(i, i + BATCH) }),
      );
      for (const v of res.SecretValues ?? []) {
        const name = v.Name ? byId.get(v.Name) : undefined;
        if (name !== undefined && v.SecretString !== undefined) out[name] = v.SecretString;
      }
      // Errors list the ids that do not exist (ResourceNotFoundException): absent from the result.
      const other = (res.Errors ?? []).filter((e) => e.ErrorCode !== 'ResourceNotFoundException');
      if (other.length > 0) {
        throw new Error(
          `Secrets Manager refused ${other.length} secret(s): ${other.map((e) => e.ErrorCode).join(', ')}`,
        );
      }
    }
    return out;
  }
}

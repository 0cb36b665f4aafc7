/**
 * A secret as the Secrets Manager emulator (secrets-manager-emulator.ts) stores it, with its
 * AWSCURRENT and AWSPREVIOUS versions: picking a version by id or staging label, and a version
 * as GetSecretValue and BatchGetSecretValue return it.
 */
import type { Tag } from '@aws-sdk/client-secrets-manager';
import { notFound } from './secrets-manager-requests.ts';

export interface StoredVersion {
  versionId: string;
  secretString?: string;
  /** Base64, as on the wire. */
  secretBinary?: string;
  createdDate: number;
}

export interface StoredSecret {
  arn: string;
  name: string;
  description?: string;
  kmsKeyId?: string;
  tags: Tag[];
  createdDate: number;
  lastChangedDate: number;
  current?: StoredVersion;
  previous?: StoredVersion;
  /** Set while the secret is scheduled for deletion (epoch ms of the deletion). */
  deletionDate?: number;
}

/** The wire's timestamps are epoch seconds. */
export const seconds = (ms: number) => ms / 1000;

export function valueEntry(secret: StoredSecret, version: StoredVersion): Record<string, unknown> {
  return {
    ARN: secret.arn,
    Name: secret.name,
    VersionId: version.versionId,
    ...(version.secretString !== undefined ? { SecretString: version.secretString } : {}),
    ...(version.secretBinary !== undefined ? { SecretBinary: version.secretBinary } : {}),
    VersionStages: [version === secret.current ? 'AWSCURRENT' : 'AWSPREVIOUS'],
    CreatedDate: seconds(version.createdDate),
  };
}

export function versionOf(
  secret: StoredSecret,
  versionId: string | undefined,
  stage: string | undefined,
): StoredVersion {
  let version: StoredVersion | undefined;
  if (versionId !== undefined) {
    version = [secret.current, secret.previous].find((v) => v?.versionId === versionId);
    // Both given: they must name the same version.
    if (version && stage !== undefined && staged(secret, stage) !== version) version = undefined;
  } else {
    version = staged(secret, stage ?? 'AWSCURRENT');
  }
  if (!version) {
    throw notFound(
      `Secrets Manager can't find the specified secret value for ${
        versionId !== undefined ? `VersionId: ${versionId}` : `staging label: ${stage ?? 'AWSCURRENT'}`
      }`,
    );
  }
  return version;
}

export function staged(secret: StoredSecret, stage: string): StoredVersion | undefined {
  if (stage === 'AWSCURRENT') return secret.current;
  if (stage === 'AWSPREVIOUS') return secret.previous;
  return undefined;
}

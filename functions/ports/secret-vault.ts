/**
 * The SecretVault port: where workspace secret values live. Names and timestamps (what listings
 * show) live in the Store; values only here. Values never leave the vault except through
 * `resolve`, which runtimes use to inject a run's declared secrets.
 */
export interface SecretRef {
  workspaceId: string;
  name: string;
}

export interface SecretVault {
  /** Creates or replaces a value. */
  putValue(ref: SecretRef, value: string): Promise<void>;
  /** Deletes a value; deleting one that does not exist is not an error. */
  deleteValue(ref: SecretRef): Promise<void>;
  /** The values of these names in a workspace; names with no value are absent from the result. */
  resolve(workspaceId: string, names: string[]): Promise<Record<string, string>>;
}

/** The vault cannot be opened as configured (missing or mismatched key). A start-up error. */
export class VaultConfigurationError extends Error {
  override name = 'VaultConfigurationError';
}

import type { Client } from './cli-context.ts';
import { CliError, EXIT } from './cli-errors.ts';
import type { ServiceRecord } from './service-record.ts';

type ServicePatch = Parameters<Client['services']['patch']>[2];

/** The flags of `services update` that change the service (docs/cli.md). */
export interface ServicePatchFlags {
  command?: string;
  clearCommand?: boolean;
  env?: Record<string, string>;
  unsetEnv?: string[];
  secret?: string[];
  removeSecret?: string[];
  minInstances?: number;
  maxInstances?: number;
  autoUpdate?: boolean;
  /** a URL, or false with --no-alert-url. */
  alertUrl?: string | false;
  maxRestartFailures?: number;
}

/** The PATCH body for the flags: env and secrets are whole sets in the API, merged here. */
export function patchOf(current: ServiceRecord, flags: ServicePatchFlags): ServicePatch {
  const patch: ServicePatch = {};
  if (flags.command !== undefined) patch.command = flags.command;
  if (flags.clearCommand) patch.command = null;
  if (flags.env || flags.unsetEnv) {
    const env = { ...current.env, ...flags.env };
    for (const key of flags.unsetEnv ?? []) {
      if (!(key in env))
        throw new CliError(`--unset-env ${key}: the service has no variable ${key}`, EXIT.usage);
      delete env[key];
    }
    patch.env = env;
  }
  if (flags.secret || flags.removeSecret) {
    const names = new Set([...current.extra_secrets, ...(flags.secret ?? [])]);
    for (const name of flags.removeSecret ?? []) {
      if (!names.has(name))
        throw new CliError(
          `--remove-secret ${name}: not one of the service’s extra secrets (${current.extra_secrets.join(', ') || 'none'})`,
          EXIT.usage,
        );
      names.delete(name);
    }
    patch.secrets = [...names];
  }
  if (flags.minInstances !== undefined) patch.min_instances = flags.minInstances;
  if (flags.maxInstances !== undefined) patch.max_instances = flags.maxInstances;
  if (flags.autoUpdate !== undefined) patch.auto_update = flags.autoUpdate;
  if (flags.alertUrl !== undefined)
    patch.alert_webhook_url = flags.alertUrl === false ? null : flags.alertUrl;
  if (flags.maxRestartFailures !== undefined) patch.max_restart_failures = flags.maxRestartFailures;
  return patch;
}

#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { createAccount } from '../functions/core/accounts/account.ts';
import {
  type Config,
  ConfigError,
  processClientConfig,
  processConfig,
  TIERS,
  type Tier,
} from '../functions/platform/config.ts';
import { VaultConfigurationError } from '../functions/ports/secret-vault.ts';
import { PlatformError } from '../functions/shared/errors.ts';

const USAGE = `agenthost: run and operate the agent hosting platform

Usage:
  agenthost start [--emulated]
      Serve the API on HOST:PORT (default 127.0.0.1:8787) with data in PLATFORM_DATA_DIR.
      --emulated (npm run start:emulated): the AWS deployment as \`cdk synth\` builds it, run on
      this machine (each Lambda as deployed, API Gateway, DynamoDB Local, S3 and the control
      planes emulated; needs Java 17+). docs/deploy.md says what is and is not emulated.
  agenthost publish [DIR] [--workspace ID] [--allow-no-secrets] [--json]
      Publish DIR/agent.json (or DIR/SKILL.md) as the next version and upload its code bundle
      (bundle.exclude / bundle.include honoured). AGENTHOST_URL and AGENTHOST_API_KEY configure it.
  agenthost accounts create --org SLUG --tier free|pro|team|enterprise [--email E] [--json]
      Create an account, its personal workspace and its first API key, and print the key.
      Works while the server runs: locally against the data dir, in AWS mode against the table.

Configuration comes from the environment; see README.md.`;

async function main(argv: string[]): Promise<number> {
  const [command, sub, ...rest] = argv;
  if (command === 'start' && sub === '--emulated' && rest.length === 0) {
    const { startEmulatedPlatform } = await import('../functions/emulator/start-emulated.ts');
    await startEmulatedPlatform(processConfig());
    return -1; // keeps running until a signal
  }
  if (command === 'start') {
    const { startLocalPlatform } = await import('../functions/platform/start.ts');
    await startLocalPlatform(processConfig());
    return -1; // keeps running until a signal
  }
  if (command === 'accounts' && sub === 'create') return accountsCreate(processConfig(), rest);
  if (command === 'publish') {
    const { publishCommand } = await import('../functions/cli/publish.ts');
    return publishCommand(argv.slice(1), processClientConfig(), (line) => process.stdout.write(`${line}\n`));
  }
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return command === undefined ? 2 : 0;
  }
  process.stderr.write(`Unknown command: ${argv.join(' ')}\n\n${USAGE}\n`);
  return 2;
}

async function accountsCreate(config: Config, args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      org: { type: 'string' },
      tier: { type: 'string' },
      email: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (!values.org || !values.tier) throw new UsageError('accounts create needs --org SLUG and --tier TIER');
  if (!(TIERS as readonly string[]).includes(values.tier)) {
    throw new UsageError(`--tier must be one of ${TIERS.join(', ')}`);
  }
  const { accountsDeps } = await import('../functions/cli/accounts-deps.ts');
  const deps = await accountsDeps(config);
  try {
    const created = await createAccount(deps, {
      org: values.org,
      tier: values.tier as Tier,
      ...(values.email ? { email: values.email } : {}),
    });
    if (values.json) {
      const out = {
        api_key: created.api_key,
        account_id: created.account.id,
        workspace_id: created.workspace_id,
        org: created.account.org,
        tier: created.account.tier,
      };
      process.stdout.write(`${JSON.stringify(out)}\n`);
    } else {
      process.stdout.write(
        `Created account ${created.account.org} (${created.account.tier}), id ${created.account.id}\n` +
          `Personal workspace: ${created.workspace_id}\n` +
          `API key (shown once, store it now):\n${created.api_key}\n`,
      );
    }
    return 0;
  } finally {
    await deps.store.close();
  }
}

class UsageError extends Error {}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof PlatformError) process.stderr.write(`agenthost: ${err.message}\n`);
    else if (
      err instanceof ConfigError ||
      err instanceof UsageError ||
      err instanceof VaultConfigurationError
    )
      process.stderr.write(`agenthost: ${err.message}\n`);
    else if (err instanceof TypeError && (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`agenthost: ${err.message}\n`);
    } else
      process.stderr.write(`agenthost: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = err instanceof PlatformError && err.code === 'CONFLICT' ? 3 : 1;
  },
);

/**
 * `agenthost secrets …`: a workspace's secrets (the values agents get as environment variables).
 * The platform never returns a value, and the CLI never takes one as an argument (it would land in
 * the shell history and the process list): `set` reads it from stdin or a masked prompt.
 * One file a command, each added to the group in this order.
 */
import type { Command } from 'commander';
import type { CliRuntime } from '../../cli-runtime.ts';
import { registerSecretDelete } from './delete.ts';
import { registerSecretList } from './list.ts';
import { registerSecretSet } from './set.ts';

export function registerSecrets(program: Command, cli: CliRuntime): void {
  const secrets = program
    .command('secrets')
    .description('A workspace’s secrets: names and dates only; values are write-only');
  registerSecretList(secrets, cli);
  registerSecretSet(secrets, cli);
  registerSecretDelete(secrets, cli);
}

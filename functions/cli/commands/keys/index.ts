/**
 * `agenthost keys …`: the account's API keys. The platform stores only a key's hash, so a new key
 * is printed exactly once, by `create`, marked as such; `list` shows the prefix that recognises
 * one. Revoking the key the CLI itself runs with is allowed (the platform refuses only the last
 * key), with a warning, because the next command will fail with it.
 * One file a command, each added to the group in this order.
 */
import type { Command } from 'commander';
import type { CliRuntime } from '../../cli-runtime.ts';
import { registerKeyCreate } from './create.ts';
import { registerKeyList } from './list.ts';
import { registerKeyRevoke } from './revoke.ts';

export function registerKeys(program: Command, cli: CliRuntime): void {
  const keys = program.command('keys').description('Your account’s API keys: list, create, revoke');
  registerKeyList(keys, cli);
  registerKeyCreate(keys, cli);
  registerKeyRevoke(keys, cli);
}

/** `agenthost keys create`: create an API key and print it once: store it now, it cannot be shown again. */
import type { Command } from 'commander';
import { printRecord } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';

export function registerKeyCreate(keys: Command, cli: CliRuntime): void {
  keys
    .command('create')
    .description('Create an API key and print it once: store it now, it cannot be shown again')
    .option('--name <label>', 'a label to recognise the key by (default: unnamed)')
    .option(
      '--agent <name>',
      'mark the key as an agent’s: tasks created with it record this agent name as created_by',
    )
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  agenthost keys create --name ci',
        '  agenthost keys create --name triage-bot --agent triage --json | jq -r .api_key',
      ].join('\n'),
    )
    .action(
      cli.action(async (ctx, opts: { name?: string; agent?: string }) => {
        const client = await ctx.client();
        const created = await client.apiKeys.create({
          ...(opts.name !== undefined ? { name: opts.name } : {}),
          ...(opts.agent !== undefined ? { agent: opts.agent } : {}),
        });
        ctx.note('The API key is shown once: store it now (agenthost login, or AGENTHOST_API_KEY).');
        printRecord(ctx, created, [
          ['id', created.id],
          ['name', created.name],
          ['agent', created.agent],
          ['created', created.created_at],
          ['api key', created.api_key],
        ]);
      }),
    );
}

/** `agenthost schedules test-alert`: send a test failure alert to the schedule’s alert URL now (exits 1 if it was not delivered). */
import type { Command } from 'commander';
import { EXIT } from '../../cli-errors.ts';
import { printRecord } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';

export function registerScheduleTestAlert(schedules: Command, cli: CliRuntime): void {
  schedules
    .command('test-alert')
    .description(
      'Send a test failure alert to the schedule’s alert URL now (exits 1 if it was not delivered)',
    )
    .argument('<schedule-id>', 'the schedule’s id')
    .addHelpText('after', ['', 'Example:', '  agenthost schedules test-alert 3f2a…'].join('\n'))
    .action(
      cli.action(async (ctx, id: string) => {
        const client = await ctx.client();
        const ws = await ctx.workspace(client);
        const result = await client.schedules.testAlert(ws, id);
        printRecord(ctx, result, [
          ['delivered', result.delivered ? 'yes' : 'no'],
          ['attempts', result.attempts],
          ['status code', result.status_code],
          ['error', result.error],
        ]);
        return result.delivered ? EXIT.ok : EXIT.server;
      }),
    );
}

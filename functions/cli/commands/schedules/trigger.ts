/** `agenthost schedules trigger`: runs a schedule now and prints the run. */
import type { Command } from 'commander';
import type { JsonBody } from '../../../../sdk/src/operation-types.ts';
import { EXIT } from '../../cli-errors.ts';
import { printRecord } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { type InputFlags, inputOptions, readInputOption } from '../../input-option.ts';

type JsonObject = NonNullable<JsonBody<'triggerSchedule'>['input_data']>;

export function registerScheduleTrigger(schedules: Command, cli: CliRuntime): void {
  inputOptions(
    schedules
      .command('trigger')
      .description('Run a schedule now and print the run (exits 1 if the run fails)')
      .argument('<schedule-id>', 'the schedule’s id'),
    'the input for this run only (default: the schedule’s)',
  )
    .addHelpText(
      'after',
      ['', 'Example:', '  agenthost schedules trigger 3f2a… --input \'{"day":"monday"}\''].join('\n'),
    )
    .action(
      cli.action(async (ctx, id: string, flags: InputFlags) => {
        const input = await readInputOption(ctx, flags);
        const client = await ctx.client();
        const ws = await ctx.workspace(client);
        ctx.note(`running schedule ${id} …`);
        const run = await client.schedules.trigger(ws, id, input ? { input_data: input as JsonObject } : {});
        printRecord(ctx, run, [
          ['run', run.run_id],
          ['status', run.status],
          ['duration', `${run.duration_ms} ms`],
          ['output', run.output],
          ['error', run.error],
        ]);
        return run.status === 'success' ? EXIT.ok : EXIT.server;
      }),
    );
}

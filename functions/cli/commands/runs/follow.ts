/**
 * `agenthost runs follow`: a run's events as they are logged, to its end: the model's text on
 * stdout as it writes it, tool calls noted on stderr, then the result's data; a failed run prints
 * its error and exits non-zero. A dropped connection is resumed after the last event read.
 */
import type { Command } from 'commander';
import { AgentHostError, type ErrorCode, type ErrorEnvelope, STATUS_OF } from '../../../../sdk/src/errors.ts';
import { printJson } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { intArg } from '../../option-parsers.ts';

export function registerRunFollow(runs: Command, cli: CliRuntime): void {
  runs
    .command('follow')
    .description('Print a run’s events as they come, to its end (--json: one JSON line an event)')
    .argument('<id>', 'the run’s id')
    .option('--after <event>', 'only the events after this one (its id)', intArg(0, 1_000_000_000))
    .addHelpText('after', ['', 'Example:', '  agenthost runs follow RUN_ID'].join('\n'))
    .action(
      cli.action(async (ctx, id: string, flags: { after?: number }) => {
        const client = await ctx.client();
        let streamed = '';
        for await (const e of client.runs.follow(id, { after: flags.after ?? 0 })) {
          if (ctx.json) ctx.out(JSON.stringify(e));
          else if (e.event === 'delta') {
            const text = String(e.data.text ?? '');
            ctx.write(text);
            streamed += text;
          } else if (e.event === 'step')
            ctx.note(`${e.data.kind} ${e.data.name}: ${e.data.outcome} (${e.data.duration_ms} ms)`);
          else if (e.event === 'result') {
            if (streamed) ctx.write('\n');
            const data = e.data.data as Record<string, unknown> | undefined;
            const text = data && Object.keys(data).length === 1 ? data.text : undefined;
            if (text !== streamed) printJson(ctx, data);
          } else {
            if (streamed) ctx.write('\n');
            // The run's error as the plain call's would be: its code, message and exit status.
            const envelope = e.data as unknown as ErrorEnvelope;
            throw new AgentHostError(STATUS_OF[envelope.error.code as ErrorCode] ?? 500, envelope);
          }
        }
      }),
    );
}

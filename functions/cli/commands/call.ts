/** `agenthost call org/agent[@vN][/endpoint]`: one agent call, its data on stdout. */
import { type Command, Option } from 'commander';
import { resolveAgentRef } from '../agent-ref.ts';
import { callResultJson } from '../call-result-json.ts';
import { CliError, EXIT } from '../cli-errors.ts';
import { printJson } from '../cli-output.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { readInputOption } from '../input-option.ts';
import { parseJsonOption } from '../json-option.ts';
import { intArg, seconds } from '../option-parsers.ts';
import { type CallFlags, callOptions, checkFiles, collect } from './call-flags.ts';

/** What `agenthost call --help` adds after the options. */
const CALL_HELP = [
  '',
  'Examples:',
  '  agenthost call acme/summarise@v2 --input \'{"text":"…"}\'',
  '  agenthost call acme/ocr --file scan.png --metadata \'{"lang":"en"}\'',
  'Warnings go to stderr; a failure prints its error code and exits non-zero (docs/cli.md).',
  'On a terminal the answer is printed as it is written, and a managed loop’s tool calls are',
  'noted on stderr as they end; its result (JSON) follows the model’s last words.',
  '--json prints the final envelope only.',
  '--async starts the call and prints its run’s id at once: `agenthost runs follow ID` for its',
  'answer, `agenthost runs cancel ID` to stop it (docs/runs.md). --webhook URL has the run’s',
  'document POSTed there when it ends, signed with the secret `agenthost runs webhook-secret` makes.',
].join('\n');

export function registerCall(program: Command, cli: CliRuntime): void {
  // --skills and --no-skills set one value (the last wins); seeing both is a contradiction to refuse.
  const skillFlags = new Set<string>();
  program
    .command('call')
    .on('option:skills', () => skillFlags.add('skills'))
    .on('option:no-skills', () => skillFlags.add('no-skills'))
    .description('Call an agent and print its data (the whole envelope with --json)')
    .argument('<agent>', 'org/name, org/name@v2 or org/name@v2/endpoint (no version: the newest)')
    .option('-i, --input <json>', 'the input, a JSON object')
    .option('--input-file <path>', 'read the input from a JSON file (- for stdin)')
    .option('-f, --file <path>', 'send a file (multipart); repeat for several', collect)
    .option('--metadata <json>', 'with --file: the JSON metadata sent beside the files (default: the input)')
    .option('--provider <provider>', 'the model provider, for agents that support several')
    .option('--model <model>', 'the model')
    .addOption(
      new Option('--skills <refs>', 'skills to add, comma-separated org/name@vN').conflicts('skillsOnly'),
    )
    .option('--skills-only <refs>', 'only these skills, comma-separated')
    .addOption(new Option('--no-skills', 'no skills at all').conflicts('skillsOnly'))
    .option(
      '--timeout <seconds>',
      'the call’s deadline, seconds from now (X-Platform-Deadline-Ms)',
      seconds(0.001, 86_400),
    )
    .option('--tenant <id>', 'your end user’s id, recorded with the call for usage')
    .option('--max-hops <n>', 'the deepest call chain the agent may start', intArg(1, 100))
    .option('--stream', 'print the answer as the model writes it (the default when stdout is a terminal)')
    .option('--no-stream', 'wait for the whole answer, then print it')
    .addOption(
      new Option(
        '--async',
        'start the call without waiting: print its run’s id (the run with --json)',
      ).conflicts('stream'),
    )
    .option('--webhook <url>', 'with --async: POST the run’s document to this URL when it ends, signed')
    .addHelpText('after', CALL_HELP)
    .action(
      cli.action(async (ctx, ref: string, flags: CallFlags) => {
        let input = (await readInputOption(ctx, flags)) ?? {};
        if (flags.metadata !== undefined) {
          if (!flags.file?.length) throw new CliError('--metadata goes with --file', EXIT.usage);
          input = parseJsonOption('--metadata', flags.metadata);
        }
        if (flags.webhook !== undefined && !flags.async)
          throw new CliError('--webhook goes with --async: a run is told when it ends', EXIT.usage);
        if (skillFlags.has('skills') && skillFlags.has('no-skills'))
          throw new CliError('--skills and --no-skills contradict each other: give one', EXIT.usage);
        await checkFiles(flags.file ?? []);
        const client = await ctx.client();
        const address = await resolveAgentRef(client, ref);
        const fullRef = `${address.org}/${address.agent}@${address.version}${address.endpoint ? `/${address.endpoint}` : ''}`;
        const options = callOptions(flags);
        if (flags.async) {
          const run = await client.agents.start(fullRef, input, options);
          if (ctx.json) printJson(ctx, run);
          else ctx.out(run.run_id);
          ctx.note(`started run ${run.run_id}: agenthost runs follow ${run.run_id}`);
          return;
        }
        const streaming = !ctx.json && (flags.stream ?? ctx.io.stdout.isTTY === true);
        let result: Awaited<ReturnType<typeof client.agents.call>> | undefined;
        let streamed = '';
        if (streaming) {
          for await (const e of client.agents.stream(fullRef, input, options)) {
            if (e.type === 'delta') {
              ctx.write(e.text);
              streamed += e.text;
            } else if (e.type === 'step') ctx.note(`${e.kind} ${e.name}: ${e.outcome} (${e.duration_ms} ms)`);
            else result = e.result;
          }
        } else result = await client.agents.call(fullRef, input, options);
        if (!result) throw new CliError('the call ended without a result', EXIT.server);
        // The streamed text's line ends before the warnings (stderr), which share its terminal.
        if (streamed) ctx.write('\n');
        for (const w of result.warnings ?? []) ctx.note(`warning ${w.code}: ${w.message}`);
        if (result.deprecation)
          ctx.note(
            `warning DEPRECATED: ${fullRef} is deprecated${result.deprecation.sunset ? `, sunset ${result.deprecation.sunset}` : ''}${result.deprecation.successor ? `; successor ${result.deprecation.successor}` : ''}`,
          );
        if (!streamed) printJson(ctx, ctx.json ? callResultJson(result) : result.data);
        // A prompt agent's data is the text on the screen already; a managed loop's is the object
        // it submitted, which its last words (the streamed text) only talk about: printed after.
        else if (!isStreamedText(result.data, streamed)) printJson(ctx, result.data);
      }),
    );
}

/** A result that is only the streamed text: `{ "text": … }` as prompt agents answer. */
function isStreamedText(data: unknown, streamed: string): boolean {
  if (data === streamed) return true;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return false;
  const keys = Object.keys(data);
  return keys.length === 1 && keys[0] === 'text' && (data as { text: unknown }).text === streamed;
}

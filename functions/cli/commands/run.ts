/**
 * `agenthost run [DIR]`: runs the agent in DIR as the platform would, without publishing it, for
 * fast iteration (local-run.ts does it, on an in-process platform; it is loaded only when run runs).
 */
import type { Command } from 'commander';
import type { CliRuntime } from '../cli-runtime.ts';
import type { RunFlags } from '../local-run.ts';

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function registerRun(program: Command, cli: CliRuntime): void {
  program
    .command('run')
    .description(
      'Run the agent in DIR as the platform would, without publishing it; print its data as `call` does',
    )
    .argument('[dir]', 'the agent’s directory', '.')
    .option('-i, --input <json>', 'the input, a JSON object')
    .option(
      '--input-file <path>',
      'read the input from a JSON file (- for stdin; default: DIR/input.json if present)',
    )
    .option('-f, --file <path>', 'send a file with the input, as `call --file`; repeat for several', collect)
    .option(
      '--secrets-file <path>',
      'KEY=VALUE lines with the secrets the manifest declares (they win over the environment)',
    )
    .option(
      '--skill <dir>',
      'attach the skill in this directory (its SKILL.md) to the call; repeatable',
      collect,
    )
    .option('--provider <provider>', 'the model provider, for agents that support several')
    .option('--model <model>', 'the model')
    .option('--timeout <seconds>', 'the call’s deadline, seconds from now')
    .addHelpText(
      'after',
      [
        '',
        'Models are called with the provider settings of your environment, as the platform reads',
        'them (OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY, …). Declared secrets come from the',
        'environment or --secrets-file; a missing required one is an error naming it. Code runs in',
        'the bubblewrap sandbox (PLATFORM_SANDBOX=unisolated: without isolation). An always-on agent',
        'is served at a local URL until Ctrl-C. Nothing is published; nothing needs an API key.',
        '',
        'Examples:',
        '  agenthost run . --input \'{"topic":"tides"}\'',
        '  agenthost run ./my-tool --input-file input.json --secrets-file .env',
        '  agenthost run ./my-prompt --skill ./my-skill --input-file input.json',
      ].join('\n'),
    )
    .action(
      cli.action(async (ctx, dirArg: string, flags: RunFlags) => {
        // Loaded only when run runs: it brings the whole platform, which no other command needs.
        const { runAgentDir } = await import('../local-run.ts');
        return runAgentDir(ctx, dirArg, flags);
      }),
    );
}

/**
 * `agenthost publish [DIR]`: publishes DIR/agent.json (or DIR/SKILL.md) as the next version, then,
 * for code-runtime agents and managed-loop agents with files of their own, packs DIR (bundle.exclude
 * and bundle.include applied, include winning) and uploads it, with a progress line for each step.
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { type PublishBody, packAgentBundle, readAgentDir } from '../agent-dir.ts';
import { CliError, EXIT } from '../cli-errors.ts';
import { printRecord } from '../cli-output.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { CLI_COMMAND } from '../copyable-command.ts';

export function registerPublish(program: Command, cli: CliRuntime): void {
  program
    .command('publish')
    .description('Publish DIR/agent.json (or DIR/SKILL.md) as the next version and upload its code bundle')
    .argument('[dir]', 'the agent’s directory', '.')
    .option('--allow-no-secrets', 'publish a tool or agent that declares no required_secrets')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  agenthost publish ./triage',
        '  agenthost publish examples/tool-word-count --allow-no-secrets',
        'The workspace is --workspace, else the profile’s default, else your personal one.',
      ].join('\n'),
    )
    .action(
      cli.action(async (ctx, dirArg: string, opts: { allowNoSecrets?: boolean }) => {
        const dir = resolve(dirArg);
        if (!(await stat(dir).catch(() => undefined))?.isDirectory())
          throw new CliError(`${dir} is not a directory`, EXIT.usage);
        const { body } = await readAgentDir(dir);
        const client = await ctx.client();
        const chosen = (await ctx.resolve()).workspace;
        ctx.note(`publishing ${dir} …`);
        let agent = await client.agents.publish(body as PublishBody, {
          ...(chosen ? { workspace_id: chosen } : {}),
          ...(opts.allowNoSecrets ? { allow_no_secrets: 'true' } : {}),
        });
        const ref = `${agent.org}/${agent.name}@${agent.version}`;
        for (const w of agent.warnings ?? [])
          ctx.note(`warning ${w.code}${w.field ? ` (${w.field})` : ''}: ${w.message}`);

        const manifest = body as { bundle?: { exclude?: string[]; include?: string[] } };
        if (agent.execution_engine === 'code_runtime' || agent.execution_engine === 'managed_loop') {
          ctx.note(`packing ${dir} …`);
          const packed = await packAgentBundle(dir, {
            execution_engine: agent.execution_engine,
            bundle: manifest.bundle,
          }).catch((err: CliError) => {
            throw new CliError(`published ${ref}, but ${err.message}`, EXIT.usage);
          });
          if (packed) {
            ctx.note(
              `uploading the bundle: ${packed.files.length} files, ${formatBytes(packed.data.length)} …`,
            );
            agent = (await client.agents.uploadBundle(agent.id, packed.data)) as typeof agent;
          }
        }
        const head: [string, unknown][] = [
          ['published', ref],
          ['id', agent.id],
          ['type', agent.type],
        ];
        // An always-on agent is not called (the call is refused): it runs as a service, deployed.
        if (agent.run_mode === 'always_on') {
          printRecord(ctx, agent, [
            ...head,
            ['deploy', `${CLI_COMMAND} services deploy ${agent.org}/${agent.name}`],
          ]);
          return;
        }
        // The endpoint the agent answers: its manifest's default_endpoint (`run` unless it names
        // another), which the agent record carries at its top level like every manifest field.
        const endpoint: unknown = agent.default_endpoint;
        const url = `${(await ctx.resolve()).url}/${agent.org}/${agent.name}/${agent.version}/${typeof endpoint === 'string' ? endpoint : 'run'}`;
        printRecord(ctx, agent, [
          ...head,
          ['call', `${CLI_COMMAND} call ${ref} --input '{…}'`],
          ['url', `POST ${url}`],
        ]);
      }),
    );
}

function formatBytes(n: number): string {
  return n < 1024
    ? `${n} B`
    : n < 1024 * 1024
      ? `${(n / 1024).toFixed(1)} KB`
      : `${(n / 1024 / 1024).toFixed(1)} MB`;
}

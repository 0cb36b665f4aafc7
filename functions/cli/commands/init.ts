/**
 * `agenthost init [--type T] [--name N] [DIR]`: writes a working starter agent of that type
 * (init-templates.ts), so an author's first publish succeeds before they change anything. Existing
 * files are never overwritten without --force: the author's work is not ours to replace.
 */
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { shellWord } from '../../shared/shell-quote.ts';
import { CliError, EXIT } from '../cli-errors.ts';
import { printRecord } from '../cli-output.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { CLI_COMMAND } from '../copyable-command.ts';
import { INIT_TYPES, type InitType, NEEDS_ALLOW_NO_SECRETS, templateFiles } from '../init-templates.ts';

interface InitFlags {
  type: InitType;
  name?: string;
  force?: boolean;
}

export function registerInit(program: Command, cli: CliRuntime): void {
  program
    .command('init')
    .description('Create a working starter agent (manifest, code, sample input, README) in DIR')
    .argument('[dir]', 'where to write it (default: a new directory named for the agent)')
    .addOption(new Option('-t, --type <type>', 'the kind of agent').choices(INIT_TYPES).default('prompt'))
    .option('-n, --name <name>', 'the agent’s name (default: DIR’s name, else my-<type>)')
    .option('--force', 'overwrite files that already exist')
    .addHelpText(
      'after',
      [
        '',
        'Types: prompt (a template sent to a model), tool (code reading JSON on stdin, printing',
        'JSON), agent (a model with tools in a sandbox), skill (instructions attached to calls),',
        'service (an always-on HTTP app).',
        '',
        'Examples:',
        '  agenthost init --type tool word-stats',
        '  agenthost init --type agent --name researcher .',
      ].join('\n'),
    )
    .action(
      cli.action(async (ctx, dirArg: string | undefined, flags: InitFlags) => {
        const name = await agentName(flags, dirArg);
        const dir = resolve(dirArg ?? name);
        const existing = await stat(dir).catch(() => undefined);
        if (existing && !existing.isDirectory()) throw new CliError(`${dir} is not a directory`, EXIT.usage);
        const files = templateFiles(flags.type, name);
        if (!flags.force) {
          const taken: string[] = [];
          for (const path of Object.keys(files))
            if (await stat(join(dir, path)).catch(() => undefined)) taken.push(path);
          if (taken.length > 0)
            throw new CliError(
              `${dir} already has ${taken.join(', ')}; nothing was written`,
              EXIT.usage,
              'choose another directory, or overwrite them with --force',
            );
        }
        for (const [path, text] of Object.entries(files)) {
          await mkdir(dirname(join(dir, path)), { recursive: true });
          await writeFile(join(dir, path), text);
        }
        const shown = relative(process.cwd(), dir) || '.';
        const paths = Object.keys(files).sort();
        printRecord(ctx, { name, type: flags.type, dir, files: paths }, [
          ['created', `${name} (${flags.type}) in ${dir}`],
          ['files', paths.join(', ')],
        ]);
        if (!ctx.json) ctx.note(nextSteps(flags.type, name, shown));
      }),
    );
}

/** --name, else the directory's name, else my-<type>; checked with the manifest's own name rule. */
async function agentName(flags: InitFlags, dirArg: string | undefined): Promise<string> {
  const fromDir = dirArg ? basename(resolve(dirArg)) : undefined;
  const name = flags.name ?? fromDir ?? `my-${flags.type}`;
  // The manifest's schemas (zod) are loaded here, not at every CLI start.
  const { agentNameSchema } = await import('../../core/agents/manifest-fields.ts');
  const checked = agentNameSchema.safeParse(name);
  if (!checked.success)
    throw new CliError(
      `the agent name "${name}" ${checked.error.issues[0]?.message ?? 'is invalid'}`,
      EXIT.usage,
      flags.name
        ? 'pass another --name'
        : `name it with --name, e.g. --name ${suggestName(name, flags.type)}`,
    );
  return name;
}

function suggestName(from: string, type: InitType): string {
  const slug = from
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64);
  return slug || `my-${type}`;
}

const CLI = CLI_COMMAND;

/** Each line runs as copied, on its own, from the directory init ran in (hence each its own cd). */
function nextSteps(type: InitType, name: string, dir: string): string {
  const cd = dir === '.' ? '' : `cd ${shellWord(dir)} && `;
  const publish = `${cd}${CLI} publish .${NEEDS_ALLOW_NO_SECRETS[type] ? ' --allow-no-secrets' : ''}`;
  const lines =
    type === 'skill'
      ? [
          `try it:      ${CLI} run AGENT_DIR --skill ${shellWord(dir)}`,
          `publish it:  ${publish}`,
          `attach it:   ${CLI} call <org>/<agent> --skills <org>/${name} …`,
        ]
      : type === 'service'
        ? [
            `run it:      ${cd}${CLI} run .`,
            `publish it:  ${publish}`,
            `deploy it:   ${CLI} services deploy <org>/${name}`,
          ]
        : [
            `run it:      ${cd}${CLI} run . --input-file input.json`,
            `publish it:  ${publish}`,
            `call it:     ${cd}${CLI} call <org>/${name} --input-file input.json`,
          ];
  return ['', 'Next (README.md has more):', ...lines.map((l) => `  ${l}`)].join('\n');
}

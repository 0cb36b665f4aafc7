/**
 * `agenthost completion bash|zsh`: a shell completion script, generated from the command tree
 * itself (every command's subcommands and options), so it cannot fall behind the CLI.
 */
import type { Command } from 'commander';
import { CliError, EXIT } from '../cli-errors.ts';
import type { CliRuntime } from '../cli-runtime.ts';

/** Each command path ("", "agents", "agents list") and the words that may follow it. */
export function completionWords(program: Command): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const globals = program.options.flatMap((o) => [o.long, o.short].filter((f): f is string => !!f));
  const walk = (cmd: Command, path: string[]) => {
    const words = [
      ...cmd.commands.map((c) => c.name()),
      ...cmd.options.flatMap((o) => [o.long].filter((f): f is string => !!f)),
      ...globals.filter((g) => g.startsWith('--')),
      '--help',
    ];
    out.set(path.join(' '), [...new Set(words)]);
    for (const sub of cmd.commands) walk(sub, [...path, sub.name()]);
  };
  walk(program, []);
  return out;
}

function bashScript(words: Map<string, string[]>): string {
  const cases = [...words].map(([path, w]) => `    "${path}") words="${w.join(' ')}" ;;`).join('\n');
  return `# agenthost bash completion: eval "$(agenthost completion bash)" in ~/.bashrc
_agenthost() {
  local cur path="" i w words
  cur="\${COMP_WORDS[COMP_CWORD]}"
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && continue
    case "\${path:+$path }$w" in
${[...words.keys()]
  .filter((p) => p !== '')
  .map((p) => `      "${p}") path="${p}" ;;`)
  .join('\n')}
    esac
  done
  case "$path" in
${cases}
    *) words="" ;;
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _agenthost agenthost
`;
}

function zshScript(words: Map<string, string[]>): string {
  return `#compdef agenthost
# agenthost zsh completion: eval "$(agenthost completion zsh)" in ~/.zshrc
autoload -U bashcompinit && bashcompinit
${bashScript(words)}`;
}

export function registerCompletion(program: Command, cli: CliRuntime): void {
  program
    .command('completion')
    .description('Print a shell completion script')
    .argument('<shell>', 'bash or zsh')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        `  echo 'eval "$(agenthost completion bash)"' >> ~/.bashrc`,
        `  echo 'eval "$(agenthost completion zsh)"' >> ~/.zshrc`,
      ].join('\n'),
    )
    .action(
      cli.action(async (ctx, shell: string) => {
        const words = completionWords(program);
        if (shell === 'bash') ctx.out(bashScript(words));
        else if (shell === 'zsh') ctx.out(zshScript(words));
        else
          throw new CliError(`no completion for ${shell}`, EXIT.usage, 'agenthost completion bash, or zsh');
      }),
    );
}

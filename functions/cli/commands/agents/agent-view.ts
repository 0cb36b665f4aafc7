/** What the `agenthost agents` commands share. */
import { type Command, Option } from 'commander';
import type { findOwnAgent } from '../../agent-ref.ts';
import type { CliContext } from '../../cli-context.ts';
import { printRecord } from '../../cli-output.ts';
import { intArg, seconds } from '../../option-parsers.ts';

export type AgentRecord = Awaited<ReturnType<typeof findOwnAgent>>;

export const agentColumns = [
  { header: 'AGENT', value: (a: AgentRecord) => `${a.org}/${a.name}@${a.version}` },
  { header: 'TYPE', value: (a: AgentRecord) => a.type },
  { header: 'STATUS', value: (a: AgentRecord) => a.status },
  { header: 'ID', value: (a: AgentRecord) => a.id },
];

export function showAgent(ctx: CliContext, a: AgentRecord): void {
  printRecord(ctx, a, [
    ['agent', `${a.org}/${a.name}@${a.version}`],
    ['id', a.id],
    ['type', a.type],
    ['engine', a.execution_engine],
    ['status', a.status],
    ['description', a.description],
    ['workspace', a.workspace_id],
    ['bundle', a.bundle ? 'uploaded' : 'none'],
    ['created', a.created_at],
  ]);
}

/** `--since`, `--until`, `--level`, `--limit`, `--follow`: the filters of docs/logs.md. */
export function logOptions(command: Command): Command {
  return command
    .option('--since <time>', 'only lines at or after this ISO 8601 time')
    .option('--until <time>', 'only lines at or before this ISO 8601 time')
    .addOption(
      new Option('--level <level>', 'the lowest severity to show').choices(['info', 'warn', 'error']),
    )
    .option('--limit <n>', 'lines to show, 1-5000 (default 100)', intArg(1, 5000))
    .option('-F, --follow', 'keep printing new lines as they come (Ctrl-C to stop)')
    .option('--interval <seconds>', 'with --follow: how often to look for new lines', seconds(0.2, 3600), 2);
}

/**
 * `agenthost tasks …`: a workspace's tasks (the to-do list people and agents share). Lists and
 * creates act in the workspace commands use (-w, the profile's, else the personal one); a task's
 * own commands take its id, which names its workspace.
 */
import { type Command, Option } from 'commander';
import { TASK_PRIORITIES, TASK_STATUSES } from '../../core/tasks/task-names.ts';
import type { CliContext, Client } from '../cli-context.ts';
import { CliError, EXIT } from '../cli-errors.ts';
import { printList, printRecord } from '../cli-output.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { intArg } from '../option-parsers.ts';

type Task = Awaited<ReturnType<Client['tasks']['list']>>['tasks'][number];
type Status = (typeof TASK_STATUSES)[number];
type Priority = (typeof TASK_PRIORITIES)[number];

const taskColumns = [
  { header: 'ID', value: (t: Task) => t.id },
  { header: 'STATUS', value: (t: Task) => t.status },
  { header: 'PRIORITY', value: (t: Task) => t.priority },
  { header: 'DUE', value: (t: Task) => t.due_date },
  { header: 'PROJECT', value: (t: Task) => t.project },
  { header: 'TITLE', value: (t: Task) => t.title },
];

function showTask(ctx: CliContext, t: Task): void {
  printRecord(ctx, t, [
    ['id', t.id],
    ['title', t.title],
    ['status', t.status],
    ['priority', t.priority],
    ['due', t.due_date],
    ['project', t.project],
    ['description', t.description],
    ['workspace', t.workspace_id],
    ['created by', t.created_by],
    ['created', t.created_at],
    ['updated', t.updated_at],
    ['completed', t.completed_at],
  ]);
}

const statusOption = (what: string) => new Option('--status <status>', what).choices(TASK_STATUSES);
const priorityOption = (what: string) => new Option('--priority <priority>', what).choices(TASK_PRIORITIES);

interface UpdateFlags {
  title?: string;
  /** A string to set, or false for --no-… (clear). */
  description?: string | false;
  due?: string | false;
  project?: string | false;
  status?: Status;
  priority?: Priority;
}

export function registerTasks(program: Command, cli: CliRuntime): void {
  const tasks = program
    .command('tasks')
    .description('A workspace’s tasks: list, create, update, complete, delete');

  tasks
    .command('list')
    .description('List the workspace’s tasks, newest first, filtered as the flags say')
    .addOption(statusOption('only tasks with this status'))
    .addOption(priorityOption('only tasks with this priority'))
    .option('--project <project>', 'only tasks of this project')
    .option('--overdue', 'only open tasks whose due date has passed')
    .option('--limit <n>', 'tasks per page, 1-200 (default 50)', intArg(1, 200))
    .option('--offset <n>', 'skip this many matches first', intArg(0, 1_000_000))
    .option('--all', 'every page, not only the first')
    .addHelpText('after', '\nExample:\n  agenthost tasks list --status open --project launch --all')
    .action(
      cli.action(
        async (
          ctx,
          opts: {
            status?: Status;
            priority?: Priority;
            project?: string;
            overdue?: boolean;
            limit?: number;
            offset?: number;
            all?: boolean;
          },
        ) => {
          const limit = opts.limit;
          const offset = opts.offset;
          if (opts.all && offset !== undefined)
            throw new CliError('--all lists every task; it takes no --offset', EXIT.usage);
          const client = await ctx.client();
          const workspace_id = await ctx.workspace(client);
          const filters = {
            workspace_id,
            ...(opts.status ? { status: opts.status } : {}),
            ...(opts.priority ? { priority: opts.priority } : {}),
            ...(opts.project !== undefined ? { project: opts.project } : {}),
            ...(opts.overdue ? { overdue: 'true' as const } : {}),
          };
          if (opts.all) {
            const all: Task[] = [];
            for await (const t of client.tasks.iterate(filters, limit ?? 200)) all.push(t);
            printList(ctx, { tasks: all, total: all.length }, all, taskColumns, 'no tasks');
            return;
          }
          const page = await client.tasks.list({
            ...filters,
            ...(limit !== undefined ? { limit } : {}),
            ...(offset !== undefined ? { offset } : {}),
          });
          printList(ctx, page, page.tasks, taskColumns, 'no tasks');
          const shown = (offset ?? 0) + page.tasks.length;
          if (!ctx.json && page.total > shown)
            ctx.note(`(${page.total} in all: --all to list every one, or --offset ${shown})`);
        },
      ),
    );

  tasks
    .command('get')
    .description('Show one task')
    .argument('<id>', 'the task’s id')
    .addHelpText('after', ['', 'Example:', '  agenthost tasks get TASK_ID --json'].join('\n'))
    .action(cli.action(async (ctx, id: string) => showTask(ctx, await (await ctx.client()).tasks.get(id))));

  tasks
    .command('create')
    .description('Create a task in the workspace')
    .argument('<title>', 'what is to be done')
    .option('--description <text>', 'more detail')
    .option('--due <date>', 'the due date, YYYY-MM-DD')
    .option('--project <project>', 'a project name to group tasks by')
    .addOption(priorityOption('its priority (default normal)'))
    .addOption(statusOption('its status (default open)'))
    .addHelpText(
      'after',
      '\nExample:\n  agenthost tasks create "Review the Q3 report" --due 2026-07-01 --priority high',
    )
    .action(
      cli.action(
        async (
          ctx,
          title: string,
          opts: {
            description?: string;
            due?: string;
            project?: string;
            priority?: Priority;
            status?: Status;
          },
        ) => {
          const client = await ctx.client();
          const workspace_id = await ctx.workspace(client);
          const task = await client.tasks.create({
            title,
            workspace_id,
            ...(opts.description !== undefined ? { description: opts.description } : {}),
            ...(opts.due !== undefined ? { due_date: opts.due } : {}),
            ...(opts.project !== undefined ? { project: opts.project } : {}),
            ...(opts.priority ? { priority: opts.priority } : {}),
            ...(opts.status ? { status: opts.status } : {}),
          });
          showTask(ctx, task);
        },
      ),
    );

  tasks
    .command('update')
    .description('Change some of a task’s fields; --no-due, --no-project, --no-description clear one')
    .argument('<id>', 'the task’s id')
    .option('--title <title>', 'a new title')
    .option('--description <text>', 'a new description')
    .option('--no-description', 'clear the description')
    .option('--due <date>', 'a new due date, YYYY-MM-DD')
    .option('--no-due', 'clear the due date')
    .option('--project <project>', 'a new project')
    .option('--no-project', 'clear the project')
    .addOption(statusOption('a new status'))
    .addOption(priorityOption('a new priority'))
    .addHelpText('after', '\nExample:\n  agenthost tasks update TASK_ID --status in_progress --no-due')
    .action(
      cli.action(async (ctx, id: string, opts: UpdateFlags) => {
        const cleared = (v: string | false | undefined) => (v === false ? null : v);
        const body = {
          ...(opts.title !== undefined ? { title: opts.title } : {}),
          ...(opts.description !== undefined ? { description: cleared(opts.description) } : {}),
          ...(opts.due !== undefined ? { due_date: cleared(opts.due) } : {}),
          ...(opts.project !== undefined ? { project: cleared(opts.project) } : {}),
          ...(opts.status ? { status: opts.status } : {}),
          ...(opts.priority ? { priority: opts.priority } : {}),
        };
        if (Object.keys(body).length === 0)
          throw new CliError(
            'nothing to change',
            EXIT.usage,
            'give at least one of --title, --description, --due, --project, --status, --priority (or --no-…)',
          );
        showTask(ctx, await (await ctx.client()).tasks.update(id, body));
      }),
    );

  tasks
    .command('complete')
    .description('Mark a task done (its completion time is kept if it was done already)')
    .argument('<id>', 'the task’s id')
    .addHelpText('after', ['', 'Example:', '  agenthost tasks complete TASK_ID'].join('\n'))
    .action(
      cli.action(async (ctx, id: string) => showTask(ctx, await (await ctx.client()).tasks.complete(id))),
    );

  tasks
    .command('delete')
    .description('Delete a task')
    .argument('<id>', 'the task’s id')
    .addHelpText('after', ['', 'Example:', '  agenthost tasks delete TASK_ID'].join('\n'))
    .action(
      cli.action(async (ctx, id: string) => {
        await (await ctx.client()).tasks.delete(id);
        if (ctx.json) ctx.out(JSON.stringify({ deleted: id }, null, 2));
        else ctx.note(`deleted task ${id}`);
      }),
    );
}

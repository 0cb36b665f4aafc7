/**
 * `agenthost tasks …`: a workspace's tasks (the to-do list people and agents share). Lists and
 * creates act in the workspace commands use (-w, the profile's, else the personal one); a task's
 * own commands take its id, which names its workspace. One file a command, each added to the group
 * in this order.
 */
import type { Command } from 'commander';
import type { CliRuntime } from '../../cli-runtime.ts';
import { registerTaskComplete } from './complete.ts';
import { registerTaskCreate } from './create.ts';
import { registerTaskDelete } from './delete.ts';
import { registerTaskGet } from './get.ts';
import { registerTaskList } from './list.ts';
import { registerTaskUpdate } from './update.ts';

export function registerTasks(program: Command, cli: CliRuntime): void {
  const tasks = program
    .command('tasks')
    .description('A workspace’s tasks: list, create, update, complete, delete');
  registerTaskList(tasks, cli);
  registerTaskGet(tasks, cli);
  registerTaskCreate(tasks, cli);
  registerTaskUpdate(tasks, cli);
  registerTaskComplete(tasks, cli);
  registerTaskDelete(tasks, cli);
}

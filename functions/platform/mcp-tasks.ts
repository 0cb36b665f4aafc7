import { setTimeout as delay } from 'node:timers/promises';
import type { TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { type CallToolResult, ErrorCode, McpError, type Task } from '@modelcontextprotocol/sdk/types.js';
import type { AuthContext } from '../core/api-keys/api-keys.ts';
import { describeRun, findRun, getRun, listRuns } from '../core/runs/call-run-reads.ts';
import { type CallRunRecord, runExpiresAtMs } from '../core/runs/call-run-record.ts';
import type { RunDocument } from '../core/runs/call-run-schemas.ts';
import { cancelRun } from '../core/runs/run-cancel.ts';
import { PlatformError } from '../shared/errors.ts';
import type { Deps } from './deps.ts';
import { runToolResult } from './mcp-results.ts';

/*
 * MCP tasks (spec 2025-11-25, experimental; docs/mcp.md, "Tasks") over the platform's runs: a tool
 * call made a task is its agent call started as a run (mcp-server.ts, through startRun), and the
 * task is the run, its id the run's. The server is stateless and, on AWS, each request may reach
 * another Lambda instance, so nothing of a task is kept here: every tasks/get, tasks/result,
 * tasks/list and tasks/cancel reads (or marks) the run's record, under the caller's account, so
 * another account's task is not found, as another account's run is 404.
 *
 * The SDK's server (its Protocol class) answers those four requests itself from a TaskStore: this
 * is one, built for the request's caller. What the SDK would otherwise do through it (create a task,
 * store its result, set its status) is the run's own: a run is written once its call is admitted and
 * ended by whoever ran it, and the only status a client sets is `cancelled`, which cancels the run.
 */

/** How often a client is asked to poll (tasks/get's pollInterval), and the SDK's tasks/result waits between reads. */
export const TASK_POLL_MS = 1_000;

/** The task a run is, as tasks/get answers it. */
export function taskOf(deps: Deps, run: CallRunRecord | RunDocument): Task {
  const status = taskStatus(run);
  const times = [run.created_at, run.started_at, run.cancel_requested_at, run.ended_at].filter(
    (t): t is string => t !== null,
  );
  const message = statusMessage(deps, run, status);
  return {
    taskId: run.run_id,
    status,
    ...(message ? { statusMessage: message } : {}),
    createdAt: run.created_at,
    lastUpdatedAt: times.reduce((a, b) => (Date.parse(b) > Date.parse(a) ? b : a)),
    // Kept as long as the run is (90 days from its creation), whatever the client asked.
    ttl: runExpiresAtMs(run) - Date.parse(run.created_at),
    pollInterval: TASK_POLL_MS,
  };
}

/**
 * A run's status as a task's. A run whose cancel was asked is `cancelled` from that moment: MCP
 * has tasks/cancel answer the task cancelled, and a cancelled task stay so even if its work ends
 * otherwise (a cancel that lands as the run ends loses to its end: docs/runs.md).
 */
function taskStatus(run: CallRunRecord | RunDocument): Task['status'] {
  if (run.cancel_requested_at !== null || run.status === 'cancelled') return 'cancelled';
  switch (run.status) {
    case 'queued':
    case 'running':
      return 'working';
    case 'succeeded':
      return 'completed';
    default:
      return 'failed';
  }
}

function statusMessage(
  deps: Deps,
  run: CallRunRecord | RunDocument,
  status: Task['status'],
): string | undefined {
  if (status === 'working')
    return `Running; its events: GET ${deps.config.publicUrl ?? ''}/runs/${run.run_id}/events`;
  if (status === 'cancelled') return 'Cancelled by its caller';
  const body = 'result' in run ? run.result?.body : run.result_body;
  const error = (body as { error?: { code?: string; message?: string } } | null | undefined)?.error;
  return error ? `${error.code}: ${error.message}` : undefined;
}

/** The caller's runs as MCP tasks: a TaskStore for one request's server. */
export function runTaskStore(deps: Deps, auth: AuthContext): TaskStore {
  const find = async (taskId: string): Promise<CallRunRecord | null> => {
    try {
      return await findRun(deps, auth, taskId);
    } catch (err) {
      if (err instanceof PlatformError && err.code === 'NOT_FOUND') return null;
      throw err;
    }
  };
  return {
    createTask() {
      // A task-augmented tool call starts its run itself (mcp-server.ts): nothing else makes tasks.
      throw new Error('Tasks are made by tool calls alone');
    },
    async getTask(taskId) {
      const run = await find(taskId);
      return run ? taskOf(deps, run) : null;
    },
    storeTaskResult() {
      throw new Error('A task’s result is its run’s, written by the run');
    },
    async getTaskResult(taskId): Promise<CallToolResult> {
      // Asked once the task is terminal (the SDK waits for that): a cancelled run may still be
      // stopping, and is read until it has ended, which a run always does (at worst as interrupted).
      for (;;) {
        const run = await getRun(deps, auth, taskId);
        if (run.result) return runToolResult(run.result);
        await delay(250);
      }
    },
    async updateTaskStatus(taskId, status) {
      // tasks/cancel is the one change a client makes (the SDK's handler, after it found the task not terminal).
      if (status !== 'cancelled') throw new Error(`A task is not set ${status}: its run sets its status`);
      try {
        await cancelRun(deps, auth, taskId);
      } catch (err) {
        if (!(err instanceof PlatformError) || err.code !== 'CONFLICT') throw err;
        // It ended meanwhile, otherwise: as tasks/cancel answers a terminal task.
        const run = await find(taskId);
        const now = run ? taskOf(deps, run).status : 'completed';
        throw new McpError(ErrorCode.InvalidParams, `Cannot cancel task in terminal status: ${now}`);
      }
    },
    async listTasks(cursor) {
      // A cursor is a run id (GET /runs' next_cursor); anything else is no cursor of ours.
      if (cursor !== undefined && !RUN_ID.test(cursor)) throw new Error(`Invalid cursor: ${cursor}`);
      const page = await listRuns(deps, auth, { limit: TASKS_PAGE, ...(cursor ? { cursor } : {}) });
      return {
        tasks: page.runs.map((run) => taskOf(deps, run)),
        ...(page.next_cursor ? { nextCursor: page.next_cursor } : {}),
      };
    },
  };
}

/** Tasks a tasks/list page holds. */
const TASKS_PAGE = 50;

const RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The task a run just started is: CreateTaskResult's `task`. */
export function createdTask(deps: Deps, record: CallRunRecord): Task {
  return taskOf(deps, describeRun(record));
}

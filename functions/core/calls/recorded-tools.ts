import type { LlmTool } from '../../ports/llm-gateway.ts';
import type { RunSteps } from '../../ports/run-steps.ts';
import { SUBMIT_TOOL } from './loop-built-in-tools.ts';
import type { LoopState } from './loop-state.ts';
import type { WorkdirSnapshots } from './workdir-snapshots.ts';

/*
 * A managed loop's tool calls as a run's steps (ports/run-steps.ts): each call is the step
 * `tool-<the model's id of the call>`, recorded with what it answered the model (its text, or its
 * error's message) and with the loop's state as it left it. A replayed loop gets each finished
 * call's answer without running it (no sandbox command, no sub-agent call, no step event: they
 * happened) and its state back: the compute time, the tool-call log and the submitted result its
 * end reads.
 *
 * A turn's calls may run side by side: each records the state when it ended, numbered, and a
 * replay keeps the latest, which holds every call that had ended by then. So with the working
 * directory (workdir-snapshots.ts): each call that may have written records it, and a replay puts
 * the latest back before its first call that runs.
 */

/** Tools that write nothing in the working directory: no snapshot after them. */
const READ_ONLY_TOOLS = new Set(['read_file', 'list_files', SUBMIT_TOOL]);

/** Where a loop's tool calls are recorded: the run's steps, and its working directory's snapshots. */
export interface ToolRecording {
  steps: RunSteps;
  workdir?: WorkdirSnapshots | undefined;
}

/** The loop's state a tool call leaves, as its step records it. */
interface RecordedState {
  /** The order in which the run's tool calls ended. */
  seq: number;
  computeMs: number;
  logs: LoopState['logs'];
  omittedLogs: number;
  submitted: LoopState['submitted'];
}

interface RecordedCall {
  text?: string;
  /** The message of the error the call threw: the model saw it as the tool's error. */
  error?: string;
  state: RecordedState;
  /** The working directory's files changed so far (workdir-snapshots.ts), after a call that may write. */
  workdir?: string;
}

/** `tools`, each call of them a step of the run's `steps`, read back into `state` on a replay. */
export function recordedTools(
  tools: LlmTool[],
  state: LoopState,
  recording: ToolRecording | undefined,
): LlmTool[] {
  if (!recording) return tools;
  const { steps, workdir } = recording;
  let ended = 0;
  let restored = -1;
  // The latest snapshot a replayed call recorded, put back once, before the first call that runs.
  let snapshot: { seq: number; data: string } | undefined;
  let putBack: Promise<void> | undefined;
  // Each call, known once it answered from its record (its snapshot taken in) or began to run.
  const known: Promise<void>[] = [];
  const putBackOnce = async () => {
    // The AI SDK starts a turn's calls together: the replayed ones among them answer from their
    // records (read from the bundle store, for a large one), and one of them may hold the latest
    // snapshot. The first call that runs waits for every call started so far (they all are by the
    // next turn of the event loop) to be known before it puts one back.
    if (!putBack) {
      putBack = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => Promise.all(known))
        .then(() => (snapshot && workdir ? workdir.restore(snapshot.data) : undefined));
    }
    return putBack;
  };
  // A name the model's ids give each call, once in the run: a provider that repeats an id across
  // turns gets its later calls numbered (the same on a replay, whose calls come in the same order).
  const named = new Map<string, number>();
  const stepName = (toolCallId: string) => {
    const seen = named.get(toolCallId) ?? 0;
    named.set(toolCallId, seen + 1);
    return seen === 0 ? `tool-${toolCallId}` : `tool-${toolCallId}#${seen}`;
  };
  const stateNow = (): RecordedState => ({
    seq: ended++,
    computeMs: state.computeMs,
    logs: [...state.logs],
    omittedLogs: state.omittedLogs,
    submitted: state.submitted,
  });
  return tools.map((tool) => ({
    ...tool,
    execute: async (args, call) => {
      // A call without the model's id cannot be named the same on a replay: it runs unrecorded.
      if (!call) return tool.execute(args);
      let ran = false;
      let isKnown!: () => void;
      known.push(
        new Promise<void>((resolve) => {
          isKnown = resolve;
        }),
      );
      const outcome = await steps
        .step<RecordedCall>(stepName(call.toolCallId), async () => {
          ran = true;
          isKnown();
          await putBackOnce();
          let ending: Pick<RecordedCall, 'text' | 'error'>;
          try {
            ending = { text: await tool.execute(args, call) };
          } catch (err) {
            ending = { error: err instanceof Error ? err.message : String(err) };
          }
          const state = stateNow();
          const files = workdir && !READ_ONLY_TOOLS.has(tool.name) ? await workdir.take() : undefined;
          return { ...ending, state, ...(files === undefined ? {} : { workdir: files }) };
        })
        .catch((err: unknown) => {
          // Known all the same: a call that waits on it must not wait for ever.
          isKnown();
          throw err;
        });
      if (!ran && outcome.workdir !== undefined && outcome.state.seq > (snapshot?.seq ?? -1))
        snapshot = { seq: outcome.state.seq, data: outcome.workdir };
      isKnown();
      // Only a replayed call's state is read back: a call that ran left its state itself, and
      // the calls beside it may have gone on since.
      if (!ran && outcome.state.seq > restored) {
        restored = outcome.state.seq;
        ended = Math.max(ended, restored + 1);
        Object.assign(state, {
          computeMs: outcome.state.computeMs,
          logs: [...outcome.state.logs],
          omittedLogs: outcome.state.omittedLogs,
          submitted: outcome.state.submitted,
        });
      }
      if (outcome.error !== undefined) throw new Error(outcome.error);
      return outcome.text ?? '';
    },
  }));
}

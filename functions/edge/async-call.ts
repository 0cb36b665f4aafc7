import type { CallContext, CallResponse, CallStream } from '../core/calls/call-context.ts';
import { recordedInput } from '../core/calls/recorded-call.ts';
import { spreadRetries } from '../core/revision.ts';
import { describeRun } from '../core/runs/call-run-reads.ts';
import { type CallRunRecord, runExpiresAtMs } from '../core/runs/call-run-record.ts';
import { endRun, newRunId, openRun, type RunEnding } from '../core/runs/call-runs.ts';
import { CANCELLED, watchCancel } from '../core/runs/run-cancel.ts';
import { RunEventLog } from '../core/runs/run-event-log.ts';
import { RunHandedOver } from '../core/runs/run-hand-over.ts';
import { sendRunWebhook } from '../core/runs/run-webhook.ts';
import { routes } from '../platform/routes.ts';
import type { CoreDeps } from '../ports/core-deps.ts';
import type { RunSteps } from '../ports/run-steps.ts';
import { PlatformError } from '../shared/errors.ts';
import { jsonAnswer } from './answers.ts';
import { errorEnvelope } from './error-answer.ts';
import { mappedError } from './error-mapping.ts';
import { RESPOND_ASYNC } from './prefer-header.ts';

/*
 * A call started without waiting (`Prefer: respond-async`, RFC 7240; docs/runs.md). It goes through
 * every step of a plain call up to the moment a streamed call would open its stream (admitted,
 * charged, about to run): whatever refuses it before is the ordinary answer. There its run is
 * written, and the caller is answered 202 with the run, a Location to it and Preference-Applied,
 * while the call runs on. When it ends, its run ends with exactly the answer the plain call would
 * have had. The client going away stops nothing: nobody waits on the answer.
 *
 * The host sees the run through as work after the answer (`onDelivered`): the Node shell after it
 * has written the 202, a Lambda until its handler returns, within its timeout, which is the call's
 * streamed deadline (PLATFORM_MAX_STREAMED_CALL_SECONDS) and more. On AWS a run that can be made
 * again from its steps is handed to the run worker instead, a durable function that runs it past
 * the Lambda's 15 minutes (docs/runs.md, "Long runs").
 */

export interface AsyncCallHost {
  requestId: string;
  /**
   * The host's AfterAnswer.onDelivered: sees the run through after the 202. A host without it (an
   * app called in memory) leaves the run to go on in its process unwatched.
   */
  onDelivered?: ((run: () => Promise<unknown>) => void) | undefined;
  /** Its completion webhook (X-Platform-Webhook), already checked (core/runs/run-webhook.ts); null without one. */
  webhookUrl?: string | null;
}

/** A run once opened: its record as written, and the headers the call's answer carries. */
export interface StartedRun {
  record: CallRunRecord;
  /** A deprecated version's Deprecation, Sunset and Link, and X-Trace-Id. */
  headers: Record<string, string>;
}

/**
 * Runs `call` (given the stream it opens once it runs, and its signal) as a run, and answers it: 202
 * once it opened, else the call's own answer or its error (thrown).
 */
export async function asyncCall(
  deps: CoreDeps,
  host: AsyncCallHost,
  call: RunCall,
): Promise<CallResponse | Response> {
  const started = await startRun(deps, host, call);
  if ('result' in started) return started.result;
  const { record, headers } = started;
  const location = `${deps.config.publicUrl ?? ''}/runs/${record.run_id}`;
  const answerHeaders = { ...headers, Location: location, 'Preference-Applied': RESPOND_ASYNC };
  return jsonAnswer(describeRun(record), host.requestId, { status: 202, headers: answerHeaders });
}

/** A call to run as a run: given the stream it opens once it runs, its signal, and its steps. */
export type RunCall = (
  stream: CallStream,
  signal: AbortSignal,
  steps: RunSteps | undefined,
) => Promise<CallResponse>;

/** A run's steps are kept this long at least: past the longest deadline a run may have. */
export const RUN_STEPS_KEPT_MS = 2 * 86_400_000;

/**
 * Starts `call` as a run: resolves with the run once it is written and the call about to run (the
 * host then sees it through: onDelivered), else with the call's own answer, or rejects with its
 * error (a refusal: no run). What the call route's 202 and an MCP task (docs/mcp.md) are made from.
 */
export async function startRun(
  deps: CoreDeps,
  host: AsyncCallHost,
  call: RunCall,
): Promise<StartedRun | { result: CallResponse }> {
  const runId = newRunId();
  // Recorded where the platform carries runs on after a restart (docs/runs.md, "Carried on").
  const keepUntilMs = deps.clock.now().getTime() + RUN_STEPS_KEPT_MS;
  const steps = await deps.runRecorder?.steps(runId, keepUntilMs, { fresh: true });
  return runThrough(deps, host, call, steps, {
    async open(context) {
      const record = await openRun(deps, context, runId, host.webhookUrl ?? null);
      // A run to carry on if its process goes away.
      await deps.runRecorder?.opened(record);
      const log = new RunEventLog(deps, runId, runExpiresAtMs(record));
      return { record, log, handedOver: await handOver(deps, record, steps) };
    },
  });
}

/**
 * Hands the run to the run worker (ports/run-worker.ts), where there is one and the run can be
 * made again from its steps (its input recorded: no files, not a code tool that orchestrates):
 * whether it did (`refused`: it could not be, and the run fails, refunded, its slot freed).
 */
async function handOver(
  deps: CoreDeps,
  record: CallRunRecord,
  steps: RunSteps | undefined,
): Promise<boolean | 'refused'> {
  if (!deps.runWorker || !steps || !(await recordedInput(steps))) return false;
  try {
    // The Lambda client's own retries are in it (throttling, a lost answer).
    await deps.runWorker.start(record);
    return true;
  } catch (err) {
    // Not run here instead: its deadline is a run's, past what this function may live.
    deps.logger.error('run not handed over', { run_id: record.run_id, error: String(err) });
    return 'refused';
  }
}

/**
 * How a run's stream opens: its record (written now, or there already), its events' log, and
 * whether it was handed over to the run worker (then it runs there, not here).
 */
export interface RunOpening {
  open(
    call: CallContext,
  ): Promise<{ record: CallRunRecord; log: RunEventLog; handedOver?: boolean | 'refused' }>;
}

/**
 * Runs `call` as the run `opening` opens, to its end: the run written (or found), its cancel
 * watched, its events logged, its end written with the call's answer and its webhook sent. Resolves
 * as startRun does; what a run carried on by another process runs through too (run-resume.ts).
 */
export function runThrough(
  deps: CoreDeps,
  host: AsyncCallHost,
  call: RunCall,
  steps: RunSteps | undefined,
  opening: RunOpening,
): Promise<StartedRun | { result: CallResponse }> {
  const { requestId } = host;
  // Aborted when its caller cancels the run (CANCELLED).
  const stopped = new AbortController();
  return new Promise((resolve, reject) => {
    let opened: OpenedRun | undefined;
    const stream: CallStream = {
      // The engine starts once the run is written, not before: a run that could not be written
      // fails its call before anything runs, refunded, and answered as that failure.
      async open(headers, context) {
        const { record, log, handedOver } = await opening.open(context);
        if (handedOver === true) {
          // Answered as started; the call stops here and the worker runs it (run-hand-over.ts).
          resolve({ record, headers });
          throw new RunHandedOver(record.run_id);
        }
        const unwatch = watchCancel(deps, record, () => stopped.abort(CANCELLED));
        opened = { record, log, unwatch };
        resolve({ record, headers });
        if (handedOver === 'refused') {
          // Answered as started, and ended as failed before anything ran (refunded: nothing went
          // out), so that it neither holds its slot nor waits for its deadline to be read.
          throw new PlatformError('INTERNAL_ERROR', 'The run could not be started; try again');
        }
        // A cancel asked for before this process took the run (the run worker's, after a hand-over).
        if (record.cancel_requested_at) stopped.abort(CANCELLED);
        host.onDelivered?.(() => ended);
        // What a streamed call would send its client goes to the run's events (docs/runs.md).
        return log.events();
      },
    };
    const ended = call(stream, stopped.signal, steps).then(
      async (result) => {
        if (!opened) return resolve({ result });
        const body = { ...result.body, metadata: { ...result.body.metadata, request_id: requestId } };
        await end(deps, opened, { status: 'succeeded', http: 200, body });
      },
      async (error: unknown) => {
        if (error instanceof RunHandedOver) return;
        if (!opened) return reject(error);
        // The same error path as a plain answer's (error-mapping.ts): its envelope is the run's result.
        const failure = mappedError(deps.logger, error, {
          requestId,
          method: 'POST',
          route: routes.callAgent.path,
        });
        const status =
          stopped.signal.reason === CANCELLED
            ? 'cancelled'
            : failure.code === 'TIMEOUT'
              ? 'timed_out'
              : 'failed';
        const body = errorEnvelope(failure, requestId);
        await end(deps, opened, { status, http: failure.status, body });
      },
    );
  });
}

interface OpenedRun {
  record: CallRunRecord;
  log: RunEventLog;
  unwatch: () => void;
}

/** Tries to write a run's end this many times before leaving it to be read as interrupted. */
const END_ATTEMPTS = 5;

/** Ends the opened run and sends its webhook; never throws (nobody is left to answer). */
async function end(deps: CoreDeps, { record, log, unwatch }: OpenedRun, ending: RunEnding): Promise<void> {
  unwatch();
  // Its events before its end: a reader that sees the run ended finds them all.
  await log.end();
  for (let attempt = 0; ; attempt++) {
    try {
      // Ended here and nowhere else (a run ends once): its webhook goes now, after its end is written.
      if (await endRun(deps, record, ending)) await sendRunWebhook(deps, record);
      // None left to carry on; an entry not deleted expires by itself.
      await deps.runRecorder?.ended(record).catch((err: unknown) => {
        deps.logger.warn('open run entry not deleted', { run_id: record.run_id, error: String(err) });
      });
      return;
    } catch (err) {
      if (attempt + 1 >= END_ATTEMPTS) {
        // Left running, the run is answered as interrupted once well past its deadline.
        return deps.logger.error('run not ended', { run_id: record.run_id, error: String(err) });
      }
      await spreadRetries(attempt + 3);
    }
  }
}

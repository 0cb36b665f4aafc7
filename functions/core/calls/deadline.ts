/**
 * A call's deadline, and the rule that sets it. Two clocks meet here and only here: the process
 * clock (Date.now), which timers, abort signals and sandbox deadlines run on, and the platform
 * clock (deps.clock, the store's), which concurrency leases, charges, run credentials and the
 * X-Platform-Deadline-Ms header are in. The clocks may disagree (tests move a fake platform clock
 * by hand), so an instant crosses from one to the other by the time it has left, never as a value.
 */
import type { Clock } from '../../ports/clock.ts';
import type { Tier } from '../../ports/config.ts';
import type { CoreDeps } from '../../ports/core-deps.ts';
import { invalidInput, PlatformError } from '../../shared/errors.ts';
import { TIER_LIMITS } from '../accounts/tiers.ts';
import type { AgentVersion } from '../agents/agent-record.ts';

/** The platform's cap on a call's run time (spec "Limits": maximum 300 s, platform-enforced). */
export const MAX_CALL_SECONDS = 300;

/** An instant a call must finish by, held on the process clock and convertible to the platform's. */
export class Deadline {
  private readonly clock: Clock;
  /** Epoch ms on the process clock (what a sandbox session's deadlineMs is in). */
  readonly processMs: number;

  private constructor(clock: Clock, processMs: number) {
    this.clock = clock;
    this.processMs = processMs;
  }

  /** The deadline `ms` from now. */
  static in(clock: Clock, ms: number): Deadline {
    return new Deadline(clock, Date.now() + ms);
  }

  /** A deadline given on the platform clock (X-Platform-Deadline-Ms, a run credential's deadline_ms). */
  static atPlatformTime(clock: Clock, platformMs: number): Deadline {
    return new Deadline(clock, Date.now() + (platformMs - clock.now().getTime()));
  }

  /** Milliseconds left (negative once it has passed). */
  remainingMs(): number {
    return this.processMs - Date.now();
  }

  /** The same instant as epoch ms on the platform clock (for leases, charges and run credentials). */
  platformMs(): number {
    return this.clock.now().getTime() + (this.processMs - Date.now());
  }

  /** The earlier of this deadline and `other`. */
  earlier(other: Deadline): Deadline {
    return other.processMs < this.processMs ? other : this;
  }
}

/** What a call's deadline is counted for: each kind has its own cap. */
export interface CallKind {
  /** A streamed call (docs/calls.md, "Streamed calls"): not held to API Gateway's buffered limit. */
  streamed?: boolean | undefined;
  /**
   * A run (Prefer: respond-async, or an MCP task; docs/runs.md): its own limit, which the caller's
   * tier bounds. Takes precedence over `streamed` (a run opens its events as a streamed call does).
   */
  run?: boolean | undefined;
  /** The caller's tier (AuthContext.tier). */
  tier: Tier;
}

/**
 * How many seconds a call of `agent` may run, before the caller's X-Platform-Deadline-Ms.
 *
 * A call: the agent's timeout_seconds, capped at 300 s, and in AWS at PLATFORM_MAX_CALL_SECONDS,
 * just under API Gateway's buffered integration timeout, or for a streamed call at
 * PLATFORM_MAX_STREAMED_CALL_SECONDS (always-on agents, whose timeout is 0, get the cap).
 *
 * A run: the agent's run_timeout_seconds (else its timeout_seconds), capped by the caller's tier
 * (TIER_LIMITS runMaxSeconds: an hour for paid tiers) and PLATFORM_MAX_RUN_SECONDS. The spec's 300 s
 * is the request timeout's; a run is not a request, and a durable engine carries it on.
 */
export function callSeconds(deps: CoreDeps, agent: AgentVersion, kind: CallKind): number {
  const { timeout_seconds, run_timeout_seconds } = agent.manifest;
  if (kind.run) {
    const cap = Math.min(TIER_LIMITS[kind.tier].runMaxSeconds, deps.config.maxRunSeconds);
    return Math.min(run_timeout_seconds ?? (timeout_seconds || cap), cap);
  }
  // A streamed call's answer is not buffered by API Gateway: its own cap (300 s unless set).
  const cap = Math.min(
    MAX_CALL_SECONDS,
    kind.streamed ? deps.config.maxStreamedCallSeconds : deps.config.maxCallSeconds,
  );
  return Math.min(timeout_seconds || cap, cap);
}

/** The earlier of the call's own time (callSeconds) and the caller's X-Platform-Deadline-Ms. */
export function callDeadline(
  deps: CoreDeps,
  agent: AgentVersion,
  header: string | undefined,
  kind: CallKind,
): Deadline {
  const now = deps.clock.now().getTime();
  const deadline = Deadline.in(deps.clock, callSeconds(deps, agent, kind) * 1000);
  if (header === undefined) return deadline;
  if (!/^\d{1,16}$/.test(header.trim())) {
    throw invalidInput([{ field: 'header.x-platform-deadline-ms', message: 'must be epoch milliseconds' }]);
  }
  const callerDeadline = Number(header);
  if (callerDeadline <= now)
    throw new PlatformError('TIMEOUT', 'X-Platform-Deadline-Ms is already in the past');
  return deadline.earlier(Deadline.atPlatformTime(deps.clock, callerDeadline));
}

/**
 * A run that cannot be carried on whole (a call with files, whose input is not recorded; an agent
 * that recorded-call.ts carriedOnWhole refuses) runs only where it started, as a streamed call
 * does: its deadline is held to the streamed call's, counted from when the call began.
 */
export function uncarriedRunDeadline(
  deps: CoreDeps,
  call: { agent: AgentVersion; auth: { tier: Tier }; startedMs: number; deadline: Deadline },
): Deadline {
  const seconds = callSeconds(deps, call.agent, { streamed: true, tier: call.auth.tier });
  const streamed = Deadline.in(deps.clock, seconds * 1000 - (Date.now() - call.startedMs));
  return call.deadline.earlier(streamed);
}

/** The abort reason of a call whose caller hung up (a streamed call's client went away). */
export const CALLER_GONE = 'caller-gone';

/** The abort reason of a call whose run its caller cancelled (POST /runs/{run_id}/cancel). */
export const CANCELLED = 'cancelled';

/**
 * The work raced against the call's end (its deadline passed, its caller gone, its run cancelled):
 * `end(reason)`, the reason the call's AbortController is aborted with, rejects it at once with
 * that end's 504 TIMEOUT, unless the work has settled; then it builds nothing (an abort made to
 * cancel what a failed engine left running must not build a TIMEOUT nobody reads). The caller
 * calls `end` as it aborts, rather than this listening on the signal: an EventTarget listener
 * added and removed each call cost more than the rest of the race (about 1% of a prompt call's
 * CPU under load).
 */
export function raceEnd<T>(work: Promise<T>): { result: Promise<T>; end: (reason: unknown) => void } {
  let end: (reason: unknown) => void = () => {};
  const result = new Promise<T>((resolve, reject) => {
    let settled = false;
    end = (reason) => {
      if (settled) return;
      settled = true;
      reject(endError(reason));
    };
    work.then(
      (value) => {
        settled = true;
        resolve(value);
      },
      (error: unknown) => {
        settled = true;
        reject(error);
      },
    );
  });
  return { result, end };
}

function endError(reason: unknown): PlatformError {
  return reason === CALLER_GONE
    ? // The spec has no code for a call its caller abandoned: it ended before its answer, as a
      // timeout does, and the record says why (docs/calls.md, "Streamed calls").
      new PlatformError('TIMEOUT', 'The caller closed the connection before the call ended', {
        reason: 'caller_gone',
      })
    : reason === CANCELLED
      ? // Nor for one its caller cancelled: likewise, said in its details (docs/runs.md).
        new PlatformError('TIMEOUT', 'The caller cancelled the run before it ended', {
          reason: 'cancelled',
        })
      : new PlatformError('TIMEOUT', 'The call exceeded its deadline');
}

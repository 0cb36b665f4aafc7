import { createHash } from 'node:crypto';
import type { CoreDeps } from '../../ports/core-deps.ts';
import { invalidInput, PlatformError, parseJsonBody } from '../../shared/errors.ts';
import { hashApiKey, hashesEqual } from '../api-keys/api-key-secret.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { MAX_CALL_SECONDS } from '../calls/deadline.ts';
import { idempotent } from '../idempotency/idempotent.ts';
import { loadStoredSchedule, scheduleKeys } from './schedule-record.ts';
import { answeredRun } from './schedule-run-output.ts';
import { runCodec, runOf } from './schedule-run-record.ts';
import { executeRun, type Run, type RunRecord } from './schedule-runs.ts';
import type { ScheduleTriggerInput } from './schedule-schemas.ts';
import { loadSchedule } from './schedules.ts';
import { IDEMPOTENCY_WINDOW_SECONDS, MAX_IDEMPOTENCY_KEY_LENGTH } from './webhook-limits.ts';

/** A hash compared against for unknown schedules, so every refusal costs the same. */
const NO_HASH = hashApiKey('no schedule has this secret');

const notFound = () => new PlatformError('NOT_FOUND', 'Webhook not found');

/**
 * The webhook input: no body is input_data alone; a JSON object is merged over input_data (the
 * body's keys win); any other JSON value is wrapped as {data: value}.
 */
export function webhookInput(inputData: Record<string, unknown>, body: Buffer): Record<string, unknown> {
  const text = body.toString('utf8');
  if (text.trim() === '') return { ...inputData };
  const value = parseJsonBody(text);
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return { ...inputData, ...(value as Record<string, unknown>) };
  }
  return { ...inputData, data: value };
}

/**
 * POST /webhooks/{schedule_id}/{webhook_secret}: the secret is the credential (hashed, compared in
 * constant time; unknown schedule and wrong secret answer alike). A disabled schedule answers 409
 * and runs nothing. With an idempotency-key, the first request claims the key with a conditional
 * create and runs; a repeat within the window waits for that run and returns it with
 * deduplicated true, running nothing.
 */
export async function triggerWebhook(
  deps: CoreDeps,
  scheduleId: string,
  secret: string,
  body: Buffer,
  idempotencyKey: string | undefined,
): Promise<Run> {
  const s = await webhookSchedule(deps, scheduleId, secret);
  if (!s.enabled) {
    throw new PlatformError(
      'CONFLICT',
      s.auto_disabled
        ? 'This schedule was disabled after repeated failures; an owner must enable it again'
        : 'This schedule is disabled; an owner must enable it to accept webhooks',
    );
  }
  const input = webhookInput(s.input_data, body);
  if (idempotencyKey === undefined) return answer(deps, await executeRun(deps, s, input, 'webhook'));

  const key = idempotencyKey.trim();
  if (key === '' || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw invalidInput([
      { field: 'header.idempotency-key', message: `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters` },
    ]);
  }
  // The record as stored keeps a large output behind its reference (schedule-run-output.ts), so the
  // key's item stays small and a repeat answers the same output.
  const { outcome, repeated } = await idempotent(
    deps,
    {
      key: scheduleKeys.idempotency(s.id, createHash('sha256').update(key).digest('hex')),
      windowSeconds: IDEMPOTENCY_WINDOW_SECONDS,
      leaseMs: (MAX_CALL_SECONDS + 30) * 1000,
    },
    // A run that throws was not recorded at all (recordFinishedRun): a repeat is told at once.
    (runId) => executeRun(deps, s, input, 'webhook', { runId }),
    runCodec,
  );
  return answer(deps, outcome, repeated);
}

/** A run as answered: its stored output read back, or linked when too large (schedule-run-output.ts). */
async function answer(deps: CoreDeps, record: RunRecord, deduplicated = false): Promise<Run> {
  return runOf(await answeredRun(deps, record), deduplicated);
}

/**
 * The webhook schedule this secret opens, or 404 alike for an unknown schedule and a wrong secret.
 * The local server asks this before reading a webhook's body, so a caller without the secret has
 * no body read at all.
 */
export async function webhookSchedule(deps: CoreDeps, scheduleId: string, secret: string) {
  const stored = /^[0-9a-f-]{36}$/.test(scheduleId) ? await loadStoredSchedule(deps, scheduleId) : undefined;
  const presented = hashApiKey(secret);
  const expected = stored?.webhookSecretHash ?? NO_HASH;
  const match = hashesEqual(presented, expected);
  if (
    !stored ||
    stored.deletedAt ||
    stored.schedule.type !== 'webhook' ||
    !stored.webhookSecretHash ||
    !match
  ) {
    throw notFound();
  }
  return stored.schedule;
}

/** POST .../trigger: runs now, synchronously (owners only); `input_data` given replaces the schedule's. */
export async function triggerSchedule(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
  id: string,
  input: ScheduleTriggerInput,
): Promise<Run> {
  const stored = await loadSchedule(deps, auth, workspaceId, id, 'owner');
  const record = await executeRun(
    deps,
    stored.schedule,
    input.input_data ?? stored.schedule.input_data,
    'manual',
  );
  return answer(deps, record);
}

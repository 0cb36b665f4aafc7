/** An idempotency key is remembered this long after its first use (docs/schedules.md). */
export const IDEMPOTENCY_WINDOW_SECONDS = 24 * 3600;
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** The largest webhook body accepted. */
export const MAX_WEBHOOK_BODY_BYTES = 1024 * 1024;

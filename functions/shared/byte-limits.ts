/**
 * Sizes of what the platform stores, in bytes as they are stored (UTF-8), checked where a value
 * enters (docs/limits.md). A limit in characters would let a value through that DynamoDB, which
 * counts bytes against its 400 KB item, then refuses with a retryable 500 on AWS only: 199,000 `€`
 * are 199,000 characters and 597,000 bytes. Each limit leaves the item it is stored in well
 * under 400 KB with the record's other fields beside it.
 */

/** A schedule's input_data (its JSON), stored on the schedule and handed to every run. */
export const MAX_INPUT_DATA_BYTES = 256 * 1024;
/** An agent version's manifest as a whole (its JSON), stored on the version's record. */
export const MAX_MANIFEST_BYTES = 256 * 1024;
/** A prompt agent's prompt_template. */
export const MAX_PROMPT_TEMPLATE_BYTES = 192 * 1024;
/**
 * A service's env (names and values together). ECS refuses a task definition over 64 KiB, and the
 * env travels in it beside the containers' other settings and the secrets' references.
 */
export const MAX_SERVICE_ENV_BYTES = 32 * 1024;
/**
 * A service's env and its secrets together. Each secret travels in the task definition as a
 * reference (its name and its ARN) and once more in the list of names the launcher reads: up to
 * about 500 bytes for a 128-character name, counted as SERVICE_SECRET_BYTES. With the rest of the
 * task definition (two containers, two signed URLs, a 4 KiB command: up to 10 KiB) and 100
 * variables' JSON framing (2.5 KiB), 44 KiB keeps it 4 KiB under ECS's 64 KiB in the worst case
 * (test/adapters/service-task-definition-size.test.ts); 100 long secret names and a full env came to 90 KB.
 */
export const MAX_SERVICE_SETTINGS_BYTES = 44 * 1024;
/** What one secret counts against MAX_SERVICE_SETTINGS_BYTES. */
export const SERVICE_SECRET_BYTES = 512;

/*
 * A request body, on both deployments, is held to what AWS can carry to a function: a Lambda
 * event of 6 MiB, less room for the rest of the event, with the body counted as the event carries
 * it (edge/event-body-budget.ts counts it).
 */
/** Lambda's synchronous invocation payload: the whole event. */
export const LAMBDA_EVENT_BYTES = 6 * 1024 * 1024;
/**
 * Room kept in the event for everything but the body: API Gateway allows 10,240 bytes of headers
 * and of URL, and the event carries each twice (`headers` and `multiValueHeaders`, the query in
 * two forms), with the request context beside them: under 64 KiB in all.
 */
export const EVENT_MARGIN_BYTES = 64 * 1024;
/** The most a request body may take as the event carries it: 6,225,920 bytes. */
export const EVENT_BODY_BYTES = LAMBDA_EVENT_BYTES - EVENT_MARGIN_BYTES;
/** The largest binary body (multipart, an archive) that fits: base64 takes 4 bytes for every 3. */
export const MAX_BINARY_BODY_BYTES = (EVENT_BODY_BYTES / 4) * 3;

export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** Bytes of a value's JSON (as it is stored). */
export function jsonBytes(value: unknown): number {
  return utf8Bytes(JSON.stringify(value) ?? '');
}

/** The message of a value over its byte limit: the limit and its size, both in bytes. */
export function overBytes(limit: number, size: number, what = 'as JSON'): string {
  return `must be at most ${limit} bytes ${what} (UTF-8); it is ${size}`;
}

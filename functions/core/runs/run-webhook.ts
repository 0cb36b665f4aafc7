import type { CoreDeps } from '../../ports/core-deps.ts';
import { invalidInput } from '../../shared/errors.ts';
import { endedRunDocument } from './call-run-reads.ts';
import { type CallRunRecord, callRunEntity, callRunKeys } from './call-run-record.ts';
import { readWebhookSecret } from './webhook-secret.ts';
import { SIGNATURE_HEADER, signatureHeader } from './webhook-signature.ts';

/*
 * A run's completion webhook (docs/runs.md, "Told when it ends"): named by its call's
 * X-Platform-Webhook header, checked before the 202 (a refused one starts nothing), and sent once
 * the run has ended: one POST of the run's document as GET /runs/{run_id} answers it, signed with
 * the account's signing secret, through the Notifier (the alerts' sender: the same URL rules, again
 * at send time, a timeout per attempt and retries with backoff).
 */

/** The header that names it. */
export const WEBHOOK_HEADER = 'X-Platform-Webhook';
const FIELD = `header.${WEBHOOK_HEADER.toLowerCase()}`;

/** Longer URLs are refused: a record holds it, and a receiver's URL is never this long. */
export const WEBHOOK_URL_MAX_LENGTH = 2048;

/** Attempts at most: the first and four retries, waiting about 1, 4, 16 and 30 s between them. */
export const WEBHOOK_ATTEMPTS = 5;

/**
 * A stored output over this many bytes is linked in the webhook's document, not sent: on AWS the
 * delivery is one asynchronous Lambda invocation, whose payload is bounded (256 KiB).
 */
export const WEBHOOK_INLINE_OUTPUT_BYTES = 128 * 1024;

/**
 * The webhook `url` as a run may name it, or an INVALID_INPUT naming the header: a URL the alerts'
 * rules accept (checked after DNS resolution; private and loopback addresses refused on AWS), from
 * an account that has a signing secret to sign it with.
 */
export async function checkRunWebhook(deps: CoreDeps, accountId: string, url: string): Promise<string> {
  const refuse = (message: string) => invalidInput([{ field: FIELD, message }]);
  if (url.length > WEBHOOK_URL_MAX_LENGTH)
    throw refuse(`must be at most ${WEBHOOK_URL_MAX_LENGTH} characters`);
  const checked = await deps.notifier.checkUrl(url);
  if (!checked.ok) throw refuse(`the completion webhook is refused: ${checked.reason}`);
  if ((await readWebhookSecret(deps, accountId)) === undefined)
    throw refuse(
      'the account has no webhook signing secret to sign it with: make one with POST /api-keys/webhook-secret',
    );
  return url;
}

/**
 * Sends the ended run's webhook, if it named one: handed to the Notifier, which sends it off this
 * path. Never throws (nobody is left to answer); what went wrong is logged, without the URL's query.
 */
export async function sendRunWebhook(deps: CoreDeps, opened: CallRunRecord): Promise<void> {
  if (opened.webhook_url === null) return;
  const label = `run ${opened.run_id} webhook`;
  try {
    // The run as it ended, read back: exactly the document GET /runs/{run_id} answers now.
    const item = await deps.store.get({
      pk: callRunKeys.ofAccount(opened.account_id),
      sk: callRunKeys.sk(opened.run_id),
    });
    if (!item) throw new Error('the run’s record is gone');
    const record = callRunEntity.fromItem(item);
    const secret = await readWebhookSecret(deps, record.account_id);
    // Made at admission; a secret gone since (never, today) leaves nothing to sign with.
    if (secret === undefined) throw new Error('the account has no webhook signing secret');
    const payload = await endedRunDocument(deps, record, WEBHOOK_INLINE_OUTPUT_BYTES);
    const at = Math.floor(deps.clock.now().getTime() / 1000);
    // The body the sender sends is this text (ports/notifier.ts): the signature is over it.
    const signature = signatureHeader(secret, at, JSON.stringify(payload));
    await deps.notifier.enqueue({
      url: record.webhook_url ?? opened.webhook_url,
      payload,
      label,
      headers: { [SIGNATURE_HEADER]: signature, 'X-Platform-Run-Id': record.run_id },
      attempts: WEBHOOK_ATTEMPTS,
    });
  } catch (err) {
    deps.logger.warn(`${label} not sent`, { run_id: opened.run_id, error: String(err) });
  }
}

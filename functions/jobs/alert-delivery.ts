import { sendAlertNow } from '../platform/alert-sender.ts';
import { processConfig } from '../platform/config.ts';
import type { AlertDelivery, DeliveryResult } from '../ports/notifier.ts';
import { createLogger } from '../shared/logger.ts';

/**
 * Invoked asynchronously (adapters/aws/lambda-notifier.ts) with one delivery: POSTs it with the
 * timeout and bounded retries of adapters/outbound/alert-delivery.ts, the URL checked again now under
 * AWS rules. Lambda's own async retries are off (the stack sets 0), so an alert is sent at most
 * `ALERT_ATTEMPTS` times.
 */
export async function handler(event: AlertDelivery): Promise<DeliveryResult> {
  const config = processConfig();
  const logger = createLogger(config.logLevel);
  if (typeof event?.url !== 'string' || typeof event.payload !== 'object' || event.payload === null) {
    logger.error('alert delivery event malformed; dropped');
    return { delivered: false, attempts: 0, status: null, error: 'malformed event' };
  }
  const result = await sendAlertNow(config, event);
  const fields = { label: event.label, attempts: result.attempts, status: result.status };
  if (result.delivered) logger.info('alert delivered', fields);
  else logger.warn('alert not delivered', { ...fields, error: result.error });
  return result;
}

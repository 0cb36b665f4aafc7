import type { Config } from '../ports/config.ts';
import type { AlertDelivery, AlertUrlCheck, DeliveryResult } from '../ports/notifier.ts';

/**
 * Sends one alert now, with the delivery adapter's timeout, retries and send-time URL check:
 * what the alert-delivery Lambda and an AWS notifier's test alerts do. Both adapters load on first
 * use, by the paths lib/lambda-bundling.ts leaves out of modules that never send alerts.
 */
export async function sendAlertNow(mode: Config['mode'], delivery: AlertDelivery): Promise<DeliveryResult> {
  const { deliverAlert } = await import('../adapters/outbound/alert-delivery.ts');
  return deliverAlert(delivery, { mode });
}

/** Checks an alert URL as a delivery would (an AWS notifier's check, when a schedule is saved). */
export async function checkAlertUrl(mode: Config['mode'], url: string): Promise<AlertUrlCheck> {
  const { checkOutboundUrl } = await import('../adapters/outbound/outbound-url.ts');
  const checked = await checkOutboundUrl(url, { mode });
  return checked.ok ? { ok: true } : { ok: false, reason: checked.reason };
}

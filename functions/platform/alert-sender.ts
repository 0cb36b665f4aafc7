import type { Config } from '../ports/config.ts';
import type { AlertDelivery, AlertUrlCheck, DeliveryResult } from '../ports/notifier.ts';

/**
 * Alert delivery and URL checks, loaded on first use (ALERT_SENDER_MODULES): lib/lambda-bundling.ts
 * reads their paths (lazy-modules.ts lazyImportPaths) to leave them out of modules that never send
 * or check alerts. A table of its own, apart from LAZY_MODULES, so the alert-delivery Lambda
 * bundles none of the composition root's modules.
 */
export const ALERT_SENDER_MODULES = {
  alertDelivery: () => import('../adapters/outbound/alert-delivery.ts'),
  outboundUrl: () => import('../adapters/outbound/outbound-url.ts'),
} as const;

/**
 * Sends one alert now, with the delivery adapter's timeout, retries and send-time URL check:
 * what the alert-delivery Lambda and an AWS notifier's test alerts do.
 */
export async function sendAlertNow(mode: Config['mode'], delivery: AlertDelivery): Promise<DeliveryResult> {
  const { deliverAlert } = await ALERT_SENDER_MODULES.alertDelivery();
  return deliverAlert(delivery, { mode });
}

/** Checks an alert URL as a delivery would (an AWS notifier's check, when a schedule is saved). */
export async function checkAlertUrl(mode: Config['mode'], url: string): Promise<AlertUrlCheck> {
  const { checkOutboundUrl } = await ALERT_SENDER_MODULES.outboundUrl();
  const checked = await checkOutboundUrl(url, { mode });
  return checked.ok ? { ok: true } : { ok: false, reason: checked.reason };
}

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

/** The settings the outbound rules read. */
export type OutboundConfig = Pick<Config, 'mode' | 'emulatorLoopbackPorts'>;

/** The outbound rules of this deployment: its mode's, and the emulated deployment's receivers. */
export function outboundRules(config: OutboundConfig) {
  return { mode: config.mode, loopbackPorts: config.emulatorLoopbackPorts };
}

/**
 * Sends one alert now, with the delivery adapter's timeout, retries and send-time URL check:
 * what the alert-delivery Lambda and an AWS notifier's test alerts do.
 */
export async function sendAlertNow(config: OutboundConfig, delivery: AlertDelivery): Promise<DeliveryResult> {
  const { deliverAlert } = await ALERT_SENDER_MODULES.alertDelivery();
  return deliverAlert(delivery, outboundRules(config));
}

/** Checks an alert URL as a delivery would (an AWS notifier's check, when a schedule is saved). */
export async function checkAlertUrl(config: OutboundConfig, url: string): Promise<AlertUrlCheck> {
  const { checkOutboundUrl } = await ALERT_SENDER_MODULES.outboundUrl();
  const checked = await checkOutboundUrl(url, outboundRules(config));
  return checked.ok ? { ok: true } : { ok: false, reason: checked.reason };
}

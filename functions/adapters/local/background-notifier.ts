import type { AlertDelivery, AlertUrlCheck, DeliveryResult, Notifier } from '../../ports/notifier.ts';
import { type DeliveryPolicy, deliverAlert } from '../outbound/alert-delivery.ts';
import { checkOutboundUrl } from '../outbound/outbound-url.ts';

type Log = (level: 'info' | 'warn', message: string, fields: Record<string, unknown>) => void;

/**
 * Local notifier: deliveries run in this process, after the caller has moved on (the run is
 * recorded and answered first). `drain` waits for those in flight, at shutdown and in tests.
 */
export class BackgroundNotifier implements Notifier {
  private readonly pending = new Set<Promise<unknown>>();
  private readonly policy: DeliveryPolicy;
  private readonly log: Log;

  constructor(policy: DeliveryPolicy, log: Log) {
    this.policy = policy;
    this.log = log;
  }

  async enqueue(delivery: AlertDelivery): Promise<void> {
    const job = this.deliver(delivery).finally(() => this.pending.delete(job));
    this.pending.add(job);
  }

  async deliver(delivery: AlertDelivery): Promise<DeliveryResult> {
    const result = await deliverAlert(delivery, this.policy);
    this.log(
      result.delivered ? 'info' : 'warn',
      `alert ${delivery.label} ${result.delivered ? 'delivered' : 'not delivered'}`,
      {
        attempts: result.attempts,
        status: result.status,
        ...(result.error ? { error: result.error } : {}),
      },
    );
    return result;
  }

  async checkUrl(url: string): Promise<AlertUrlCheck> {
    const checked = await checkOutboundUrl(url, {
      mode: this.policy.mode,
      ...(this.policy.resolve ? { resolve: this.policy.resolve } : {}),
    });
    return checked.ok ? { ok: true } : { ok: false, reason: checked.reason };
  }

  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }
}

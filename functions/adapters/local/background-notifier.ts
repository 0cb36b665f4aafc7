import { type DeliveryPolicy, deliverAlert } from '../../core/alerts/alert-delivery.ts';
import type { AlertDelivery, DeliveryResult, Notifier } from '../../ports/notifier.ts';

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

  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }
}

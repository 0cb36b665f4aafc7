import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import type { AlertDelivery, AlertUrlCheck, DeliveryResult, Notifier } from '../../ports/notifier.ts';
import { type DeliveryPolicy, deliverAlert } from '../outbound/alert-delivery.ts';
import { checkOutboundUrl } from '../outbound/outbound-url.ts';

/**
 * The Notifier port in AWS: `enqueue` invokes the alert-delivery Lambda asynchronously (the
 * caller's Lambda may freeze the moment it answers, so nothing is left running in it), and that
 * Lambda POSTs with the same timeout and bounded retries as the local notifier. `deliver` (test
 * alerts) sends from the calling Lambda and reports the outcome.
 */
export class LambdaNotifier implements Notifier {
  private readonly client: LambdaClient;
  private readonly functionName: string;
  private readonly policy: DeliveryPolicy;

  constructor(options: { client: LambdaClient; functionName: string; policy: DeliveryPolicy }) {
    this.client = options.client;
    this.functionName = options.functionName;
    this.policy = options.policy;
  }

  async enqueue(delivery: AlertDelivery): Promise<void> {
    await this.client.send(
      new InvokeCommand({
        FunctionName: this.functionName,
        InvocationType: 'Event',
        Payload: Buffer.from(JSON.stringify(delivery)),
      }),
    );
  }

  deliver(delivery: AlertDelivery): Promise<DeliveryResult> {
    return deliverAlert(delivery, this.policy);
  }

  async checkUrl(url: string): Promise<AlertUrlCheck> {
    const checked = await checkOutboundUrl(url, {
      mode: this.policy.mode,
      loopbackPorts: this.policy.loopbackPorts,
      ...(this.policy.resolve ? { resolve: this.policy.resolve } : {}),
    });
    return checked.ok ? { ok: true } : { ok: false, reason: checked.reason };
  }

  async drain(): Promise<void> {}
}

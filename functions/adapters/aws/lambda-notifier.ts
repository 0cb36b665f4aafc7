import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import { type DeliveryPolicy, deliverAlert } from '../../core/alerts/alert-delivery.ts';
import type { AlertDelivery, DeliveryResult, Notifier } from '../../ports/notifier.ts';

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

  async drain(): Promise<void> {}
}

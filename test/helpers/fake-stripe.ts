import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

/**
 * Stripe's API on loopback, as far as the platform uses it: POST /v1/checkout/sessions answers a
 * Checkout Session as Stripe does (form-encoded request, JSON answer); anything else is Stripe's
 * 404 error. Webhook events are signed with Stripe's own SDK (`signed`), so the platform's
 * signature check runs as it does against Stripe.
 */
export interface FakeStripe {
  apiBase: string;
  secretKey: string;
  webhookSecret: string;
  /** Every request: its path, its form body and its Authorization header. */
  seen: { path: string; form: URLSearchParams; auth: string | undefined }[];
  /** A Stripe-Signature header for `payload`. */
  signed(payload: string, secret?: string): string;
  /** A `checkout.session.completed` event for a session, as Stripe sends it. */
  completedEvent(eventId: string, sessionId: string, paymentStatus?: string): string;
  close(): Promise<void>;
}

const readBody = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

export async function startFakeStripe(): Promise<FakeStripe> {
  const seen: FakeStripe['seen'] = [];
  const webhookSecret = 'whsec_test_0123456789abcdef';
  const stripe = new Stripe('sk_test_unused');
  let n = 0;
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    seen.push({ path: req.url ?? '', form: new URLSearchParams(body), auth: req.headers.authorization });
    if (req.method === 'POST' && req.url === '/v1/checkout/sessions') {
      n++;
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_fake_${n}` });
      res.end(
        JSON.stringify({
          id: `cs_test_${n}`,
          object: 'checkout.session',
          url: `https://checkout.stripe.com/c/pay/cs_test_${n}`,
          payment_status: 'unpaid',
        }),
      );
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ error: { type: 'invalid_request_error', message: 'Unrecognized request URL' } }),
    );
  }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    apiBase: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    secretKey: 'sk_test_platform',
    webhookSecret,
    seen,
    signed: (payload, secret = webhookSecret) =>
      stripe.webhooks.generateTestHeaderString({ payload, secret }),
    completedEvent: (eventId, sessionId, paymentStatus = 'paid') =>
      JSON.stringify({
        id: eventId,
        object: 'event',
        type: 'checkout.session.completed',
        data: { object: { id: sessionId, object: 'checkout.session', payment_status: paymentStatus } },
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

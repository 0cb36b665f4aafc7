import * as z from 'zod';
import { intParam } from '../../shared/query-params.ts';
import { MAX_TOPUP_CREDITS, MIN_TOPUP_CREDITS } from './billing-limits.ts';

export const checkoutBody = z.strictObject({
  credits: z
    .number()
    .int('must be a whole number of credits')
    .min(MIN_TOPUP_CREDITS, `must be at least ${MIN_TOPUP_CREDITS} credits ($${MIN_TOPUP_CREDITS / 100})`)
    .max(MAX_TOPUP_CREDITS, `must be at most ${MAX_TOPUP_CREDITS} credits`)
    .describe('Credits to buy; one credit is one US cent'),
});

export const transactionsQuery = z.strictObject({
  limit: intParam(1, 500).default(50),
  offset: intParam(0, 1_000_000).default(0),
});

export const checkoutParams = z.strictObject({
  session_id: z.string().regex(/^[A-Za-z0-9_-]{8,255}$/, 'must be a checkout session id'),
});

export const balanceSchema = z.object({ balance_credits: z.number().int(), currency: z.literal('credits') });
export const checkoutSchema = z.object({
  session_id: z.string(),
  checkout_url: z.string(),
  credits: z.number().int(),
  amount_cents: z.number().int(),
  currency: z.string(),
});
export const transactionsSchema = z.object({
  transactions: z.array(
    z.object({
      entry_id: z.uuid(),
      type: z.enum(['topup', 'charge', 'refund']),
      amount: z.number().int(),
      reference: z.string(),
      agent: z.string().nullable(),
      created_at: z.string(),
    }),
  ),
  total: z.number().int(),
});
export const webhookAckSchema = z.object({
  received: z.boolean(),
  duplicate: z.boolean(),
  landed: z.boolean(),
});
export const confirmSchema = z.object({
  session_id: z.string(),
  status: z.string(),
  credits: z.number().int(),
  landed: z.boolean(),
  balance_credits: z.number().int(),
});

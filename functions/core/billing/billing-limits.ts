/** Top-up bounds in credits (one credit is one US cent): $5 to $10,000. */
export const MIN_TOPUP_CREDITS = 500;
export const MAX_TOPUP_CREDITS = 1_000_000;
/** Stripe webhook bodies are small; anything larger is not one. */
export const MAX_WEBHOOK_BYTES = 256 * 1024;

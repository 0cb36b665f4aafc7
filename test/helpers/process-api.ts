/** What a platform process answered: its status and its JSON body (the assertions check its shape). */
export interface ProcessAnswer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: the shapes are what the assertions check.
  body: any;
}

export type ProcessApi = (
  method: string,
  path: string,
  key: string | null,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<ProcessAnswer>;

/**
 * JSON requests to a platform running as its own process (test/helpers/process.ts), with `key` as
 * its bearer (none for null). `url` names where it listens at the time of each request: the tests
 * that kill a platform start it again, on another port.
 */
export function processApi(url: () => string): ProcessApi {
  return async (method, path, key, body, headers = {}) => {
    const res = await fetch(`${url()}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : {} };
  };
}

/** Buys `credits` for the key's account through the local checkout, confirmed at once. */
export async function buyCredits(api: ProcessApi, key: string, credits: number): Promise<void> {
  const checkout = await api('POST', '/billing/checkout', key, { credits });
  if (checkout.status >= 300) throw new Error(`checkout refused: ${JSON.stringify(checkout.body)}`);
  await api('POST', `${new URL(checkout.body.checkout_url).pathname}/confirm`, null);
}

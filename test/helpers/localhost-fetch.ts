import { type LookupAddress, lookup } from 'node:dns';
import { Agent, fetch as undiciFetch } from 'undici';

/**
 * fetch as a browser or curl does it for `*.localhost` names: RFC 6761 has them resolve to
 * loopback, which browsers and curl do by themselves, while Node asks the system resolver (no
 * nss-myhostname here, so no answer). The emulated deployment's service URLs are such names
 * (http://<service>-<workspace>.services.localhost:<port>); every other name resolves as usual.
 */

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

const dispatcher = new Agent({
  connect: {
    lookup: (hostname: string, options: { all?: boolean }, callback: LookupCallback) => {
      if (hostname === 'localhost' || hostname.endsWith('.localhost')) {
        if (options?.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
        else callback(null, '127.0.0.1', 4);
        return;
      }
      lookup(hostname, options as never, callback as never);
    },
  },
});

export async function fetchUrl(
  url: string,
  init: { method?: string; headers?: Record<string, string> } = {},
) {
  return undiciFetch(url, { ...init, dispatcher });
}

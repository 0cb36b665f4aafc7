import type { LookupAddress, LookupOptions } from 'node:dns';
import { lookup as dnsLookupAsync } from 'node:dns/promises';
import type { IncomingMessage } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Checks for outbound URLs given by users (alert webhooks), per the design's security rule:
 * "checked after DNS resolution: link-local and metadata addresses always refused; private and
 * loopback ranges refused in AWS mode".
 *
 * Decisions:
 * - Schemes: `https:` in both modes; `http:` only in local mode (an AWS deployment sends user
 *   webhooks over TLS only). Anything else (`ftp:`, `file:`, `data:` …) is refused.
 * - URLs carrying credentials (`user:pass@`) are refused; any port is allowed.
 * - The host is resolved (IP literals are used as they are; WHATWG URL parsing already turns
 *   `http://2852039166/`, `0xa9fea9fe`, octal and short forms into dotted quads) and the URL is
 *   refused if ANY resolved address is refused, so a name cannot smuggle one bad address among
 *   good ones. A name that resolves to nothing is refused.
 * - Always refused: unspecified/"this network" (0.0.0.0/8, ::), link-local (169.254.0.0/16,
 *   fe80::/10, which covers the AWS/GCP/Azure metadata address 169.254.169.254 and ECS's
 *   169.254.170.2), cloud metadata (fd00:ec2::/32 on AWS, 100.100.100.200 on Alibaba),
 *   multicast (224.0.0.0/4, ff00::/8), reserved 240.0.0.0/4 and broadcast 255.255.255.255.
 * - Also refused in AWS mode: loopback (127.0.0.0/8, ::1), private (10/8, 172.16/12,
 *   192.168/16, fc00::/7, fec0::/10), CGNAT 100.64/10, benchmarking 198.18/15, the IETF and
 *   documentation ranges, and any IPv6 address outside global unicast 2000::/3.
 * - IPv6 addresses that embed an IPv4 address (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible,
 *   NAT64 64:ff9b::/96, 6to4 2002::/16, Teredo) are also judged by the embedded address, so
 *   `[::ffff:169.254.169.254]` is refused like 169.254.169.254.
 */

export type PlatformMode = 'local' | 'aws';
export type Resolver = (host: string) => Promise<string[]>;

export interface OutboundUrlOptions {
  mode: PlatformMode;
  /**
   * The emulated deployment's receivers (PLATFORM_EMULATOR_LOOPBACK_PORTS, docs/deploy.md): in AWS
   * mode, a URL on one of these ports whose every address is loopback is allowed, over http too.
   * The emulator sets it for the functions it runs; no synthesized function carries it
   * (test/cdk), so a real deployment keeps AWS's rules whole.
   */
  loopbackPorts?: readonly number[] | undefined;
  /** Resolves a host name to addresses; defaults to the system resolver (`dns.lookup`, all). */
  resolve?: Resolver;
}

export type OutboundUrlCheck = { ok: true; url: URL; addresses: string[] } | { ok: false; reason: string };

type Scope = 'always' | 'aws';
interface Rule {
  family: 'ipv4' | 'ipv6';
  label: string;
  scope: Scope;
  list: BlockList;
}

function rule(cidr: string, label: string, scope: Scope): Rule {
  const [network, bits] = cidr.split('/') as [string, string];
  const family = isIP(network) === 6 ? 'ipv6' : 'ipv4';
  const list = new BlockList();
  list.addSubnet(network, Number(bits), family);
  return { family, label, scope, list };
}

// Order matters only for the reason reported: 'always' findings win over 'aws' ones anyway.
const RULES: Rule[] = [
  rule('0.0.0.0/8', 'unspecified ("this network")', 'always'),
  rule('169.254.0.0/16', 'link-local (cloud metadata)', 'always'),
  rule('100.100.100.200/32', 'cloud metadata', 'always'),
  rule('224.0.0.0/4', 'multicast', 'always'),
  rule('255.255.255.255/32', 'broadcast', 'always'),
  rule('240.0.0.0/4', 'reserved', 'always'),
  rule('::/128', 'unspecified', 'always'),
  rule('fe80::/10', 'link-local', 'always'),
  rule('ff00::/8', 'multicast', 'always'),
  rule('fd00:ec2::/32', 'cloud metadata', 'always'),
  rule('64:ff9b:1::/48', 'reserved (local-use NAT64)', 'always'),

  rule('127.0.0.0/8', 'loopback', 'aws'),
  rule('10.0.0.0/8', 'private', 'aws'),
  rule('172.16.0.0/12', 'private', 'aws'),
  rule('192.168.0.0/16', 'private', 'aws'),
  rule('100.64.0.0/10', 'shared address space (CGNAT)', 'aws'),
  rule('198.18.0.0/15', 'benchmarking', 'aws'),
  rule('192.0.0.0/24', 'reserved (IETF protocol assignments)', 'aws'),
  rule('192.0.2.0/24', 'reserved (documentation)', 'aws'),
  rule('198.51.100.0/24', 'reserved (documentation)', 'aws'),
  rule('203.0.113.0/24', 'reserved (documentation)', 'aws'),
  rule('192.88.99.0/24', 'reserved (6to4 relay)', 'aws'),
  rule('::1/128', 'loopback', 'aws'),
  rule('fc00::/7', 'private (unique local)', 'aws'),
  rule('fec0::/10', 'private (site-local)', 'aws'),
  rule('2001::/23', 'reserved (IETF protocol assignments)', 'aws'),
  rule('2001:db8::/32', 'reserved (documentation)', 'aws'),
  rule('100::/64', 'reserved (discard)', 'aws'),
];

const GLOBAL_UNICAST_V6 = rule('2000::/3', 'global unicast', 'aws');

/** Parses an IPv6 address (optionally with a zone and a dotted-quad tail) into 8 groups. */
function ipv6Groups(address: string): number[] | null {
  let text = address.split('%')[0]!.toLowerCase();
  if (isIP(text) !== 6) return null;
  const tail = text.lastIndexOf(':');
  const last = text.slice(tail + 1);
  if (last.includes('.')) {
    const o = last.split('.').map(Number);
    text = `${text.slice(0, tail + 1)}${((o[0]! << 8) | o[1]!).toString(16)}:${((o[2]! << 8) | o[3]!).toString(16)}`;
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const left = parse(head);
  if (rest === undefined) return left;
  const right = parse(rest);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

function v4(hi: number, lo: number): string {
  return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
}

function v6Text(g: number[]): string {
  return g.map((x) => x.toString(16)).join(':');
}

/** The IPv4 address embedded in an IPv6 one by the usual transition mechanisms, if any. */
function embeddedIPv4(g: number[]): string | null {
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  // IPv4-mapped ::ffff:a.b.c.d and SIIT ::ffff:0:a.b.c.d
  if (zero(0, 5) && g[5] === 0xffff) return v4(g[6]!, g[7]!);
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return v4(g[6]!, g[7]!);
  // IPv4-compatible ::a.b.c.d (deprecated), excluding :: and ::1
  if (zero(0, 6) && (g[6] !== 0 || g[7]! > 1)) return v4(g[6]!, g[7]!);
  // NAT64 well-known prefix 64:ff9b::/96
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return v4(g[6]!, g[7]!);
  // 6to4 2002:AABB:CCDD::/48
  if (g[0] === 0x2002) return v4(g[1]!, g[2]!);
  // Teredo 2001:0::/32, client address stored inverted in the last 32 bits
  if (g[0] === 0x2001 && g[1] === 0) return v4(~g[6]! & 0xffff, ~g[7]! & 0xffff);
  return null;
}

interface Finding {
  label: string;
  scope: Scope;
}

function findings(address: string): Finding[] {
  const family = isIP(address);
  if (family === 4) {
    return RULES.filter((r) => r.family === 'ipv4' && r.list.check(address, 'ipv4'));
  }
  const g = ipv6Groups(address);
  if (family !== 6 || g === null) return [{ label: 'not an IP address', scope: 'always' }];
  const text = v6Text(g);
  const found: Finding[] = RULES.filter((r) => r.family === 'ipv6' && r.list.check(text, 'ipv6'));
  if (!GLOBAL_UNICAST_V6.list.check(text, 'ipv6')) found.push({ label: 'not global unicast', scope: 'aws' });
  const inner = embeddedIPv4(g);
  if (inner !== null) {
    for (const f of findings(inner)) found.push({ label: `embeds ${inner}: ${f.label}`, scope: f.scope });
  }
  return found;
}

/** Why `address` may not be contacted in `mode`, or null if it may. */
export function refusedAddressReason(address: string, mode: PlatformMode): string | null {
  const all = findings(address);
  const hit = all.find((f) => f.scope === 'always') ?? (mode === 'aws' ? all[0] : undefined);
  return hit ? `address ${address} is ${hit.label}` : null;
}

export const systemResolver: Resolver = async (host) => {
  const found = await dnsLookupAsync(host, { all: true, order: 'verbatim' });
  return found.map((a) => a.address);
};

function literalHost(hostname: string): string | null {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) ? bare : null;
}

/** Checks a user-given outbound URL; see the module comment for what is refused and why. */
export async function checkOutboundUrl(url: string, options: OutboundUrlOptions): Promise<OutboundUrlCheck> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: 'not a valid URL' };
  }
  const receiver = emulatedReceiver(parsed, options);
  const allowed = options.mode === 'aws' && !receiver ? ['https:'] : ['https:', 'http:'];
  if (!allowed.includes(parsed.protocol)) {
    return {
      ok: false,
      reason: `scheme ${parsed.protocol.replace(/:$/, '')} is not allowed (use ${allowed.map((p) => p.slice(0, -1)).join(' or ')})`,
    };
  }
  if (parsed.username !== '' || parsed.password !== '') {
    return { ok: false, reason: 'credentials in the URL are not allowed' };
  }
  if (parsed.hostname === '') return { ok: false, reason: 'the URL has no host' };

  let addresses: string[];
  const literal = literalHost(parsed.hostname);
  if (literal !== null) {
    addresses = [literal];
  } else {
    try {
      addresses = await (options.resolve ?? systemResolver)(parsed.hostname);
    } catch {
      return { ok: false, reason: `host ${parsed.hostname} could not be resolved` };
    }
    if (addresses.length === 0) return { ok: false, reason: `host ${parsed.hostname} has no addresses` };
  }
  for (const address of addresses) {
    // An emulated receiver's loopback address is taken by local mode's rules: loopback only.
    const reason = refusedAddressReason(address, receiver ? 'local' : options.mode);
    if (reason !== null) return { ok: false, reason };
    if (receiver && findings(address).every((f) => f.label !== 'loopback'))
      return { ok: false, reason: `address ${address} is not loopback` };
  }
  return { ok: true, url: parsed, addresses: [...addresses] };
}

/** Whether `url` names one of the emulated deployment's loopback receivers (a port of `loopbackPorts`). */
function emulatedReceiver(url: URL, options: OutboundUrlOptions): boolean {
  if (!options.loopbackPorts?.length || url.port === '') return false;
  return options.loopbackPorts.includes(Number(url.port));
}

export type OutboundErrorKind = 'refused' | 'redirect' | 'timeout' | 'aborted' | 'network';

/** What `safeFetch` throws: `kind` says which rule or failure stopped the request. */
export class OutboundRequestError extends Error {
  readonly kind: OutboundErrorKind;
  constructor(kind: OutboundErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'OutboundRequestError';
    this.kind = kind;
  }
}

export interface SafeFetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  signal?: AbortSignal;
}

export interface SafeFetchOptions extends OutboundUrlOptions {
  /** Whole-request timeout, connection to last body byte read (default 5000 ms). */
  timeoutMs?: number;
  /** The most response body bytes read; the rest is discarded (default 64 KiB). */
  maxResponseBytes?: number;
}

export interface SafeFetchResponse {
  status: number;
  /** The response body, cut at `maxResponseBytes`. */
  body: Buffer;
  truncated: boolean;
}

export const DEFAULT_TIMEOUT_MS = 5000;
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** A `lookup` for `net.connect` that answers only with the addresses already checked. */
function pinnedLookup(addresses: string[]): LookupFunction {
  const pinned: LookupAddress[] = addresses.map((a) => ({
    address: a,
    family: isIP(a.split('%')[0]!) === 6 ? 6 : 4,
  }));
  return (_host: string, opts: LookupOptions, callback: LookupCallback): void => {
    const wanted =
      opts.family === 4 || opts.family === 6 ? pinned.filter((a) => a.family === opts.family) : pinned;
    if (wanted.length === 0) {
      const err: NodeJS.ErrnoException = new Error('no checked address of the requested family');
      err.code = 'ENOTFOUND';
      callback(err, '');
      return;
    }
    if (opts.all) callback(null, wanted);
    else callback(null, wanted[0]!.address, wanted[0]!.family);
  };
}

/**
 * Sends one request to a user-given URL after `checkOutboundUrl` accepts it. The connection goes
 * only to the addresses that were checked (a DNS answer that changes between the check and the
 * connection cannot redirect it), redirects are not followed (a 3xx is an error), the whole
 * exchange is bounded by `timeoutMs`, and at most `maxResponseBytes` of the body are read.
 * Throws `OutboundRequestError`.
 */
export async function safeFetch(
  url: string,
  init: SafeFetchInit,
  options: SafeFetchOptions,
): Promise<SafeFetchResponse> {
  const check = await checkOutboundUrl(url, options);
  if (!check.ok) throw new OutboundRequestError('refused', `outbound URL refused: ${check.reason}`);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const cap = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = init.signal ? AbortSignal.any([timeout, init.signal]) : timeout;
  const target = check.url;
  const headers: Record<string, string | number> = { ...init.headers };
  if (init.body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length')) {
    headers['content-length'] = Buffer.byteLength(init.body);
  }
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest;

  return new Promise<SafeFetchResponse>((resolvePromise, reject) => {
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      fn();
    };
    const fail = (error: OutboundRequestError) => finish(() => reject(error));

    if (signal.aborted) {
      fail(abortError(signal, timeoutMs));
      return;
    }
    const req = request(target, {
      method: init.method ?? 'GET',
      headers,
      agent: false, // a fresh connection each time: no pooled socket from another lookup
      lookup: pinnedLookup(check.addresses),
    });
    function onAbort() {
      fail(abortError(signal, timeoutMs));
      req.destroy();
    }
    signal.addEventListener('abort', onAbort, { once: true });
    req.on('error', (err) =>
      fail(new OutboundRequestError('network', `request failed: ${err.message}`, { cause: err })),
    );
    req.on('response', (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && status !== 304) {
        res.destroy();
        fail(
          new OutboundRequestError(
            'redirect',
            `the server answered ${status} (redirect${res.headers.location ? ` to ${res.headers.location}` : ''}); redirects are not followed`,
          ),
        );
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      const done = () =>
        finish(() => resolvePromise({ status, body: Buffer.concat(chunks, Math.min(size, cap)), truncated }));
      res.on('data', (chunk: Buffer) => {
        if (size + chunk.length > cap) {
          chunks.push(chunk.subarray(0, cap - size));
          size = cap;
          truncated = true;
          done();
          res.destroy();
          return;
        }
        chunks.push(chunk);
        size += chunk.length;
      });
      res.on('end', done);
      res.on('error', (err) =>
        fail(new OutboundRequestError('network', `response failed: ${err.message}`, { cause: err })),
      );
      res.on('aborted', () => fail(new OutboundRequestError('network', 'the response was cut short')));
    });
    req.end(init.body);
  });
}

function abortError(signal: AbortSignal, timeoutMs: number): OutboundRequestError {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === 'TimeoutError') {
    return new OutboundRequestError('timeout', `the request timed out after ${timeoutMs} ms`, {
      cause: reason,
    });
  }
  return new OutboundRequestError('aborted', 'the request was aborted', { cause: reason });
}

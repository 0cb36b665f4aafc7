import { isIP } from 'node:net';
import { PlatformError } from '../shared/errors.ts';
import type { Config } from './config.ts';

/*
 * DNS-rebinding protection (docs/mcp.md, "Host and Origin"). A page on evil.example whose name the
 * attacker re-points at 127.0.0.1 makes the browser send its requests to the platform with
 * `Host: evil.example` and `Origin: http://evil.example`: only the names tell such a request from
 * the platform's own clients, so a request naming a host the platform does not answer under is
 * refused. Host names are compared without their port: an attacker picks the name, not the port.
 */

/** A Host header's host name, lower-case (an IPv6 address without brackets); undefined if it is not `name[:port]`. */
function hostnameOf(authority: string): string | undefined {
  const m = /^(\[[0-9a-f:.]+\]|[^\s/\\@?#[\]:]+)(?::\d{1,5})?$/i.exec(authority);
  if (!m) return undefined;
  const name = (m[1] as string).toLowerCase();
  return name.startsWith('[') ? name.slice(1, -1) : name;
}

/** An Origin header's host name; undefined for `null` and anything that is not an http(s) origin. */
function originHostname(origin: string): string | undefined {
  const m = /^https?:\/\/(.+)$/i.exec(origin);
  return m ? hostnameOf(m[1] as string) : undefined;
}

/**
 * The host names the platform answers under: the configured ones, `localhost` (and its
 * subdomains, which browsers resolve to loopback themselves), the listen address (HOST) and the
 * public URL's host. An IP address is no name to re-point, so any is allowed.
 */
function allowedHostname(config: Config, name: string): boolean {
  if (config.allowedHosts.includes('*') || isIP(name) !== 0) return true;
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  const own = [config.host, config.publicUrl ? new URL(config.publicUrl).hostname : undefined];
  return [...config.allowedHosts, ...own].some((h) => h !== undefined && hostnameOf(h) === name);
}

/**
 * Refuses (403 FORBIDDEN) a request whose Host names a host the platform does not answer under,
 * or whose Origin is neither such a host's nor an origin allowed to call the API (CORS). No Origin
 * is fine: only browsers send it, and other clients are no rebinding's victims.
 */
export function assertAllowedHost(
  config: Config,
  host: string | undefined,
  origin: string | undefined,
): void {
  if (host !== undefined) {
    const name = hostnameOf(host);
    if (name === undefined || !allowedHostname(config, name)) {
      throw new PlatformError(
        'FORBIDDEN',
        `Host ${JSON.stringify(host.slice(0, 200))} is not a name this platform answers under (DNS-rebinding protection); its operator may add it to PLATFORM_ALLOWED_HOSTS`,
        { header: 'Host' },
      );
    }
  }
  if (origin === undefined) return;
  if (config.corsOrigins.includes('*') || config.corsOrigins.includes(origin)) return;
  const name = originHostname(origin);
  if (name === undefined || !allowedHostname(config, name)) {
    throw new PlatformError(
      'FORBIDDEN',
      `Origin ${JSON.stringify(origin.slice(0, 200))} may not call this platform (DNS-rebinding protection); its operator may allow it with PLATFORM_ALLOWED_HOSTS or PLATFORM_CORS_ORIGINS`,
      { header: 'Origin' },
    );
  }
}

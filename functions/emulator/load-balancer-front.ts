import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Elbv2Emulator, TargetGroup } from './elbv2-emulator.ts';

/**
 * The services load balancer's traffic side on loopback: one plain-HTTP port stands for the
 * template's listener (HTTPS on 443 in AWS). A request goes by its Host header through the
 * listener's rules (elbv2-emulator.ts) to a target of the rule's target group, or gets the
 * listener's default answer. Targets are health-checked as the target group says (path, matcher,
 * thresholds), but every second rather than at its interval, so a service is reachable within
 * seconds. As an ALB does, requests go to healthy targets, to all registered ones when none is
 * healthy (fail open), and get 503 when none is registered; a target that does not answer is 502.
 */

const CHECK_EVERY_MS = 1000;
const CHECK_TIMEOUT_MS = 5000;

const html = (status: number, title: string) =>
  `<html>\r\n<head><title>${status} ${title}</title></head>\r\n<body>\r\n<center><h1>${status} ${title}</h1></center>\r\n</body>\r\n</html>\r\n`;

export class LoadBalancerFront {
  private readonly elb: Elbv2Emulator;
  private readonly listenerArn: string;
  private server: Server | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly next = new Map<string, number>();

  constructor(elb: Elbv2Emulator, listenerArn: string) {
    this.elb = elb;
    this.listenerArn = listenerArn;
  }

  async listen(port: number, host: string): Promise<number> {
    const server = createServer((req, res) => {
      const answer = (status: number, title: string) => {
        if (res.headersSent) return res.destroy();
        res.writeHead(status, { 'content-type': 'text/html', server: 'awselb/2.0' });
        res.end(html(status, title));
      };
      const route = this.elb.route(this.listenerArn, String(req.headers.host ?? ''));
      if (!route) return answer(503, 'Service Temporarily Unavailable');
      if (route.fixed) {
        res.writeHead(route.fixed.status, { 'content-type': route.fixed.contentType, server: 'awselb/2.0' });
        res.end(route.fixed.body);
        return;
      }
      const target = route.group ? this.pick(route.group) : undefined;
      if (!target) return answer(503, 'Service Temporarily Unavailable');
      const remote = req.socket.remoteAddress ?? '127.0.0.1';
      const upstream = request(
        {
          host: '127.0.0.1',
          port: target,
          method: req.method,
          path: req.url,
          headers: {
            ...req.headers,
            'x-forwarded-for': remote,
            'x-forwarded-proto': 'https',
            'x-forwarded-port': '443',
          },
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on('error', () => answer(502, 'Bad Gateway'));
      req.on('error', () => upstream.destroy());
      res.on('error', () => upstream.destroy());
      req.pipe(upstream);
    });
    server.on('clientError', (_err, socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    this.server = server;
    this.timer = setInterval(() => void this.checkAll(), CHECK_EVERY_MS);
    this.timer.unref();
    return (server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  /** Round robin over the healthy targets, or over all when none is healthy. */
  private pick(group: TargetGroup): number | undefined {
    const all = [...group.targets.values()];
    if (all.length === 0) return undefined;
    const healthy = all.filter((t) => t.healthy === true);
    const pool = healthy.length > 0 ? healthy : all;
    const i = (this.next.get(group.arn) ?? 0) % pool.length;
    this.next.set(group.arn, i + 1);
    return pool[i]?.port;
  }

  private async checkAll(): Promise<void> {
    for (const group of this.elb.targetGroups()) {
      for (const target of group.targets.values()) {
        const ok = await this.check(target.port, group);
        // A streak of the same answer reaching the group's threshold changes the state.
        if (ok === target.streak > 0) target.streak += ok ? 1 : -1;
        else target.streak = ok ? 1 : -1;
        if (ok && target.streak >= group.healthyThreshold) target.healthy = true;
        if (!ok && -target.streak >= group.unhealthyThreshold) target.healthy = false;
      }
    }
  }

  private check(port: number, group: TargetGroup): Promise<boolean> {
    const codes = group.matcher.split(',').flatMap((part) => {
      const [from, to] = part.split('-').map(Number);
      return Array.from({ length: (to ?? from ?? 0) - (from ?? 0) + 1 }, (_, i) => (from ?? 0) + i);
    });
    return new Promise((resolve) => {
      const req = request(
        { host: '127.0.0.1', port, path: group.healthCheckPath, method: 'GET', timeout: CHECK_TIMEOUT_MS },
        (res) => {
          res.resume();
          resolve(codes.includes(res.statusCode ?? 0));
        },
      );
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(false));
      req.end();
    });
  }
}

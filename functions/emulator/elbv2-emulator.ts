import { createHash, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseQueryParams, queryError, queryResponse } from './aws-query-protocol.ts';
import type { TemplateResolver } from './cloudformation-template.ts';
import { AwsWireError, EmulatorServer, readLimitedBody } from './emulator-http.ts';

/**
 * Elastic Load Balancing v2 for the emulated deployment: the Query/XML API for what the ECS
 * service runner sends (CreateTargetGroup, DescribeTargetGroups, DeleteTargetGroup, CreateRule,
 * DescribeRules, DeleteRule), over the listeners the template defines (their default action is
 * the answer for unknown hosts). Targets are registered by the ECS emulator, as ECS registers a
 * service's tasks; load-balancer-front.ts serves the traffic by these rules and health-checks the
 * targets. State is in memory (ECS services do not outlive the emulator either).
 */

const NAMESPACE = 'http://elasticloadbalancing.amazonaws.com/doc/2015-12-01/';
const MAX_REQUEST_BYTES = 1024 * 1024;

export interface FixedResponse {
  status: number;
  contentType: string;
  body: string;
}

export interface TargetGroup {
  arn: string;
  name: string;
  protocol: string;
  port: number;
  vpcId: string | undefined;
  targetType: string;
  healthCheckPath: string;
  healthCheckIntervalSeconds: number;
  healthyThreshold: number;
  unhealthyThreshold: number;
  matcher: string;
  /** Registered targets: an id (the task) and the loopback port its container port is reached at. */
  targets: Map<string, { port: number; healthy: boolean | undefined; streak: number }>;
}

export interface ListenerRule {
  arn: string;
  listenerArn: string;
  priority: number;
  hosts: string[];
  targetGroupArn: string;
  conditions: unknown[];
  actions: unknown[];
}

interface Listener {
  arn: string;
  defaultResponse: FixedResponse;
}

const fail = (code: string, message: string) => new AwsWireError(code, 400, message);
const hex = (seed: string, n = 16) => createHash('sha256').update(seed).digest('hex').slice(0, n);

/** An ALB host-header value (`*` and `?` wildcards, case-insensitive) as a pattern. */
function hostPattern(value: string): RegExp {
  const body = value
    .toLowerCase()
    .split('')
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}$`);
}

export class Elbv2Emulator {
  private readonly listeners = new Map<string, Listener>();
  private readonly groups = new Map<string, TargetGroup>();
  private readonly rules = new Map<string, ListenerRule>();
  private readonly region: string;
  private readonly accountId: string;
  private readonly server: EmulatorServer;

  constructor(resolver: TemplateResolver, account: { region: string; accountId: string }) {
    this.region = account.region;
    this.accountId = account.accountId;
    for (const { stack, logicalId, resource } of resolver.resourcesOfType(
      'AWS::ElasticLoadBalancingV2::Listener',
    )) {
      const p = resolver.resolve(stack, resource.Properties ?? {}, logicalId) as {
        DefaultActions?: {
          Type: string;
          FixedResponseConfig?: { StatusCode: string; ContentType?: string; MessageBody?: string };
        }[];
      };
      const fixed = p.DefaultActions?.find((a) => a.Type === 'fixed-response')?.FixedResponseConfig;
      const arn = String(resolver.resolve(stack, { Ref: logicalId }, logicalId));
      this.listeners.set(arn, {
        arn,
        defaultResponse: {
          status: Number(fixed?.StatusCode ?? 404),
          contentType: fixed?.ContentType ?? 'text/plain',
          body: fixed?.MessageBody ?? '',
        },
      });
    }
    this.server = new EmulatorServer(
      (req, res) => this.handle(req, res),
      (res, e) => {
        const body = queryError(NAMESPACE, e.code, e.message, randomUUID());
        res.writeHead(e.status, { 'content-type': 'text/xml', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      },
    );
  }

  listen(port: number, host: string): Promise<string> {
    return this.server.listen(port, host);
  }

  close(): Promise<void> {
    return this.server.close();
  }

  listenerArns(): string[] {
    return [...this.listeners.keys()];
  }

  /** Where a request to `host` on a listener goes: a rule's target group, or the default answer. */
  route(
    listenerArn: string,
    host: string,
  ): { group: TargetGroup | undefined; fixed: FixedResponse | undefined } | undefined {
    const listener = this.listeners.get(listenerArn);
    if (!listener) return undefined;
    const name = host.toLowerCase().replace(/:\d+$/, '');
    const rule = [...this.rules.values()]
      .filter((r) => r.listenerArn === listenerArn)
      .sort((a, b) => a.priority - b.priority)
      .find((r) => r.hosts.some((h) => hostPattern(h).test(name)));
    if (!rule) return { group: undefined, fixed: listener.defaultResponse };
    return { group: this.groups.get(rule.targetGroupArn), fixed: undefined };
  }

  targetGroups(): TargetGroup[] {
    return [...this.groups.values()];
  }

  /** ECS registers a service task's container port (here a loopback port) in its target groups. */
  registerTarget(targetGroupArn: string, id: string, port: number): void {
    this.groups.get(targetGroupArn)?.targets.set(id, { port, healthy: undefined, streak: 0 });
  }

  deregisterTarget(targetGroupArn: string, id: string): void {
    this.groups.get(targetGroupArn)?.targets.delete(id);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readLimitedBody(req, MAX_REQUEST_BYTES, () =>
      fail('ValidationError', 'Request too large'),
    );
    const form = new URLSearchParams(raw.toString('utf8'));
    const action = form.get('Action') ?? '';
    const params = parseQueryParams(form);
    const ops: Record<string, (p: Record<string, unknown>) => unknown> = {
      CreateTargetGroup: (p) => this.createTargetGroup(p),
      DescribeTargetGroups: (p) => this.describeTargetGroups(p),
      DeleteTargetGroup: (p) => this.deleteTargetGroup(p),
      CreateRule: (p) => this.createRule(p),
      DescribeRules: (p) => this.describeRules(p),
      DeleteRule: (p) => this.deleteRule(p),
    };
    const op = Object.hasOwn(ops, action) ? ops[action] : undefined;
    if (req.method !== 'POST' || !op)
      throw fail('InvalidAction', `The action ${action} is not valid for this web service.`);
    const body = queryResponse(action, NAMESPACE, op(params), randomUUID());
    res.writeHead(200, { 'content-type': 'text/xml', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  }

  private arn(resource: string): string {
    return `arn:aws:elasticloadbalancing:${this.region}:${this.accountId}:${resource}`;
  }

  private describeGroup(g: TargetGroup): Record<string, unknown> {
    return {
      TargetGroupArn: g.arn,
      TargetGroupName: g.name,
      Protocol: g.protocol,
      Port: g.port,
      VpcId: g.vpcId,
      HealthCheckProtocol: 'HTTP',
      HealthCheckPort: 'traffic-port',
      HealthCheckEnabled: true,
      HealthCheckIntervalSeconds: g.healthCheckIntervalSeconds,
      HealthCheckTimeoutSeconds: 5,
      HealthyThresholdCount: g.healthyThreshold,
      UnhealthyThresholdCount: g.unhealthyThreshold,
      HealthCheckPath: g.healthCheckPath,
      Matcher: { HttpCode: g.matcher },
      LoadBalancerArns: [
        ...new Set(
          [...this.rules.values()].filter((r) => r.targetGroupArn === g.arn).map((r) => r.listenerArn),
        ),
      ],
      TargetType: g.targetType,
      ProtocolVersion: 'HTTP1',
      IpAddressType: 'ipv4',
    };
  }

  private createTargetGroup(p: Record<string, unknown>): unknown {
    const name = String(p.Name ?? '');
    if (!/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,30}[A-Za-z0-9])?$/.test(name)) {
      throw fail(
        'ValidationError',
        `Target group name '${name}' is not valid: up to 32 alphanumeric characters or hyphens, not starting or ending with a hyphen`,
      );
    }
    const settings = {
      protocol: String(p.Protocol ?? 'HTTP'),
      port: Number(p.Port ?? 80),
      vpcId: p.VpcId === undefined ? undefined : String(p.VpcId),
      targetType: String(p.TargetType ?? 'instance'),
      healthCheckPath: String(p.HealthCheckPath ?? '/'),
      healthCheckIntervalSeconds: Number(p.HealthCheckIntervalSeconds ?? 30),
      healthyThreshold: Number(p.HealthyThresholdCount ?? 5),
      unhealthyThreshold: Number(p.UnhealthyThresholdCount ?? 2),
      matcher: String((p.Matcher as { HttpCode?: string } | undefined)?.HttpCode ?? '200'),
    };
    const existing = [...this.groups.values()].find((g) => g.name === name);
    if (existing) {
      // Idempotent for the same settings, as in AWS.
      const same = (Object.keys(settings) as (keyof typeof settings)[]).every(
        (k) => existing[k] === settings[k],
      );
      if (!same)
        throw fail(
          'DuplicateTargetGroupName',
          'A target group with the same name exists, but with different settings',
        );
      return { TargetGroups: [this.describeGroup(existing)] };
    }
    const group: TargetGroup = {
      arn: this.arn(`targetgroup/${name}/${hex(`${name}/${randomUUID()}`)}`),
      name,
      ...settings,
      targets: new Map(),
    };
    this.groups.set(group.arn, group);
    return { TargetGroups: [this.describeGroup(group)] };
  }

  private describeTargetGroups(p: Record<string, unknown>): unknown {
    const names = p.Names as string[] | undefined;
    const arns = p.TargetGroupArns as string[] | undefined;
    let found = [...this.groups.values()];
    if (names) found = found.filter((g) => names.includes(g.name));
    if (arns) found = found.filter((g) => arns.includes(g.arn));
    const asked = names?.length ?? arns?.length ?? 0;
    if (asked > 0 && found.length < asked) {
      throw fail('TargetGroupNotFound', `One or more target groups not found`);
    }
    return { TargetGroups: found.map((g) => this.describeGroup(g)) };
  }

  private deleteTargetGroup(p: Record<string, unknown>): unknown {
    const arn = String(p.TargetGroupArn ?? '');
    if ([...this.rules.values()].some((r) => r.targetGroupArn === arn)) {
      throw fail('ResourceInUse', `Target group '${arn}' is currently in use by a listener or a rule`);
    }
    this.groups.delete(arn);
    return {};
  }

  private describeRule(r: ListenerRule): Record<string, unknown> {
    return {
      RuleArn: r.arn,
      Priority: String(r.priority),
      Conditions: r.conditions,
      Actions: r.actions,
      IsDefault: false,
    };
  }

  private createRule(p: Record<string, unknown>): unknown {
    const listenerArn = String(p.ListenerArn ?? '');
    if (!this.listeners.has(listenerArn)) throw fail('ListenerNotFound', 'One or more listeners not found');
    const priority = Number(p.Priority);
    if (!Number.isInteger(priority) || priority < 1 || priority > 50_000) {
      throw fail('ValidationError', 'Priority must be between 1 and 50000');
    }
    if ([...this.rules.values()].some((r) => r.listenerArn === listenerArn && r.priority === priority)) {
      throw fail('PriorityInUse', `Priority '${priority}' is currently in use`);
    }
    const conditions = (p.Conditions as Record<string, unknown>[] | undefined) ?? [];
    const actions = (p.Actions as Record<string, unknown>[] | undefined) ?? [];
    const hosts = conditions
      .filter((c) => c.Field === 'host-header')
      .flatMap((c) => [
        ...((c.Values as string[] | undefined) ?? []),
        ...(((c.HostHeaderConfig as { Values?: string[] } | undefined)?.Values as string[] | undefined) ??
          []),
      ]);
    if (conditions.some((c) => c.Field !== 'host-header')) {
      throw fail('ValidationError', 'The emulator supports host-header conditions only');
    }
    const forward = actions.find((a) => a.Type === 'forward');
    const targetGroupArn = String(forward?.TargetGroupArn ?? '');
    if (!forward || !this.groups.has(targetGroupArn))
      throw fail('TargetGroupNotFound', 'One or more target groups not found');
    const rule: ListenerRule = {
      arn: `${listenerArn.replace(':listener/', ':listener-rule/')}/${hex(randomUUID())}`,
      listenerArn,
      priority,
      hosts,
      targetGroupArn,
      conditions: conditions.map((_c) => ({
        Field: 'host-header',
        Values: hosts,
        HostHeaderConfig: { Values: hosts },
      })),
      actions: [{ Type: 'forward', TargetGroupArn: targetGroupArn, Order: 1 }],
    };
    this.rules.set(rule.arn, rule);
    return { Rules: [this.describeRule(rule)] };
  }

  private describeRules(p: Record<string, unknown>): unknown {
    const listenerArn = p.ListenerArn === undefined ? undefined : String(p.ListenerArn);
    const arns = p.RuleArns as string[] | undefined;
    if (listenerArn !== undefined && !this.listeners.has(listenerArn)) {
      throw fail('ListenerNotFound', 'One or more listeners not found');
    }
    if (arns?.some((a) => !this.rules.has(a))) throw fail('RuleNotFound', 'One or more rules not found');
    const rules = [...this.rules.values()]
      .filter(
        (r) =>
          (listenerArn === undefined || r.listenerArn === listenerArn) && (!arns || arns.includes(r.arn)),
      )
      .sort((a, b) => a.priority - b.priority)
      .map((r) => this.describeRule(r));
    if (listenerArn !== undefined) {
      const l = this.listeners.get(listenerArn) as Listener;
      rules.push({
        RuleArn: `${listenerArn.replace(':listener/', ':listener-rule/')}/default`,
        Priority: 'default',
        Conditions: [],
        Actions: [
          {
            Type: 'fixed-response',
            FixedResponseConfig: {
              StatusCode: String(l.defaultResponse.status),
              ContentType: l.defaultResponse.contentType,
              MessageBody: l.defaultResponse.body,
            },
          },
        ],
        IsDefault: true,
      });
    }
    // One page: the runner's paging (NextMarker) is exercised only past 400 rules, which the emulator does not hold.
    return { Rules: rules };
  }

  private deleteRule(p: Record<string, unknown>): unknown {
    const arn = String(p.RuleArn ?? '');
    if (!this.rules.delete(arn)) throw fail('RuleNotFound', 'One or more rules not found');
    return {};
  }
}

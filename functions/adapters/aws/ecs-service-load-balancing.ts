/**
 * A service's way in through the shared services load balancer: its target group (the gateway's
 * port 8080, health-checked on /health) and a host-header rule on the HTTPS listener forwarding
 * to it; created on start, removed with the service.
 */
import {
  CreateRuleCommand,
  CreateTargetGroupCommand,
  DeleteRuleCommand,
  DeleteTargetGroupCommand,
  DescribeRulesCommand,
  DescribeTargetGroupsCommand,
  PriorityInUseException,
  TargetGroupNotFoundException,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { GATEWAY_PORT } from '../../containers/service-protocol.ts';
import { ecsNames } from './ecs-service-names.ts';
import type { EcsServiceRunnerOptions } from './ecs-service-options.ts';

/**
 * Removes the service's rule and target group. A group still in use (until ECS has drained the
 * service) stays; docs/services.md says how to remove a leftover.
 */
export async function removeServiceRouting(o: EcsServiceRunnerOptions, serviceId: string): Promise<void> {
  const n = ecsNames(serviceId);
  const rule = await findRule(o, serviceId);
  if (rule) await o.elb.send(new DeleteRuleCommand({ RuleArn: rule }));
  let groups: { TargetGroupArn?: string | undefined }[] = [];
  try {
    groups =
      (await o.elb.send(new DescribeTargetGroupsCommand({ Names: [n.targetGroup] })))?.TargetGroups ?? [];
  } catch (err) {
    if (!(err instanceof TargetGroupNotFoundException)) throw err;
  }
  for (const g of groups) {
    try {
      await o.elb.send(new DeleteTargetGroupCommand({ TargetGroupArn: g.TargetGroupArn }));
    } catch {
      // Still in use until ECS has drained the service; docs/services.md says how to remove a leftover.
    }
  }
}

export async function ensureTargetGroup(o: EcsServiceRunnerOptions, name: string): Promise<string> {
  // CreateTargetGroup is idempotent for the same name and settings: it answers the existing one.
  const created = await o.elb.send(
    new CreateTargetGroupCommand({
      Name: name,
      Protocol: 'HTTP',
      Port: GATEWAY_PORT,
      VpcId: o.vpcId,
      TargetType: 'ip',
      HealthCheckProtocol: 'HTTP',
      HealthCheckPath: '/health',
      HealthCheckIntervalSeconds: 10,
      HealthyThresholdCount: 2,
      UnhealthyThresholdCount: 3,
      Matcher: { HttpCode: '200' },
    }),
  );
  const arn = created.TargetGroups?.[0]?.TargetGroupArn;
  if (!arn) throw new Error('CreateTargetGroup returned no ARN');
  return arn;
}

/** The listener rule whose tag names this service, found through its host condition's value. */
export async function findRule(o: EcsServiceRunnerOptions, serviceId: string): Promise<string | undefined> {
  let marker: string | undefined;
  do {
    const page = await o.elb.send(new DescribeRulesCommand({ ListenerArn: o.listenerArn, Marker: marker }));
    for (const rule of page.Rules ?? []) {
      const forward = rule.Actions?.find((a) => a.Type === 'forward');
      if (forward?.TargetGroupArn?.includes(`/${ecsNames(serviceId).targetGroup}/`)) return rule.RuleArn;
    }
    marker = page.NextMarker;
  } while (marker);
  return undefined;
}

export async function ensureRule(
  o: EcsServiceRunnerOptions,
  host: string,
  targetGroupArn: string,
  serviceId: string,
): Promise<void> {
  if (await findRule(o, serviceId)) return;
  let priority = rulePriority(serviceId);
  for (let attempt = 0; attempt < 8; attempt++) {
    try {
      await o.elb.send(
        new CreateRuleCommand({
          ListenerArn: o.listenerArn,
          Priority: priority,
          Conditions: [{ Field: 'host-header', HostHeaderConfig: { Values: [host] } }],
          Actions: [{ Type: 'forward', TargetGroupArn: targetGroupArn }],
          Tags: [{ Key: 'agenthost:service', Value: serviceId }],
        }),
      );
      return;
    } catch (err) {
      if (!(err instanceof PriorityInUseException)) throw err;
      priority = (priority % 49_999) + 1;
    }
  }
  throw new Error('No free listener rule priority found');
}

/** A stable starting priority for a service's rule (1-49,999), probed upwards when taken. */
export function rulePriority(serviceId: string): number {
  let h = 0;
  for (const c of serviceId) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return (h % 49_999) + 1;
}

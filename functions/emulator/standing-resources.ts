import { SANDBOX_CONTAINER_NAME } from '../adapters/aws/ecs-sandbox-task.ts';
import { ENV } from '../shared/env-names.ts';
import type { StackTemplate } from './cloudformation-template.ts';

/**
 * What a deployment pays by the hour whatever its traffic, counted from its synthesized templates
 * (the cost bench prices it per idle month, for each context it synthesizes). Traffic-driven costs
 * (requests, GB-seconds, log ingestion) are metered, not counted here.
 */
export interface StandingResources {
  /** Interface VPC endpoints × the subnets (one per AZ) each sits in: billed per endpoint-AZ-hour. */
  interfaceEndpointAzHours: number;
  /** Gateway endpoints (S3, DynamoDB): free, listed so the figures show they are there. */
  gatewayEndpoints: number;
  natGateways: number;
  applicationLoadBalancers: number;
  networkLoadBalancers: number;
  /** Customer-managed KMS keys: billed per key-month. */
  kmsKeys: number;
  /** Secrets the templates create (a workspace's own secrets are its tenant's, not standing). */
  secrets: number;
  alarms: number;
  /** Idle unbound sandbox runners kept up (the warm pool's floor), each a Fargate task of this size. */
  warmPoolFloor: {
    tasks: number;
    vcpu: number;
    memoryGb: number;
    architecture: 'arm64' | 'x86_64';
    /** On Fargate Spot (`-c sandboxSpot`, on by default), priced at Spot's rate. */
    spot: boolean;
  };
}

export function standingResources(stacks: StackTemplate[]): StandingResources {
  const all = stacks.flatMap((s) => Object.values(s.template.Resources ?? {}));
  const ofType = (type: string) => all.filter((r) => r.Type === type);
  const endpoints = ofType('AWS::EC2::VPCEndpoint');
  const interfaces = endpoints.filter((e) => e.Properties?.VpcEndpointType === 'Interface');
  const balancers = ofType('AWS::ElasticLoadBalancingV2::LoadBalancer');
  const spot = ofType('AWS::Lambda::Function').some(
    (f) =>
      (f.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables?.[
        ENV.sandboxSpot
      ] === 'on',
  );
  const floor = Math.max(
    0,
    ...ofType('AWS::Lambda::Function').map((f) => {
      const vars = (f.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)
        ?.Variables;
      const min = Number(vars?.[ENV.sandboxPoolMin] ?? 0);
      return Number.isFinite(min) ? min : 0;
    }),
  );
  // The sandbox's task definition: the one whose tasks are started by RunTask (the services'
  // definitions belong to an ECS service and are not the pool's).
  const sandboxTask = ofType('AWS::ECS::TaskDefinition').find((t) =>
    ((t.Properties?.ContainerDefinitions as { Name?: unknown }[] | undefined) ?? []).some(
      (c) => c.Name === SANDBOX_CONTAINER_NAME,
    ),
  );
  const platform = (sandboxTask?.Properties?.RuntimePlatform as { CpuArchitecture?: string } | undefined)
    ?.CpuArchitecture;
  return {
    interfaceEndpointAzHours: interfaces.reduce(
      (n, e) => n + ((e.Properties?.SubnetIds as unknown[] | undefined)?.length ?? 1),
      0,
    ),
    gatewayEndpoints: endpoints.length - interfaces.length,
    natGateways: ofType('AWS::EC2::NatGateway').length,
    applicationLoadBalancers: balancers.filter((b) => (b.Properties?.Type ?? 'application') === 'application')
      .length,
    networkLoadBalancers: balancers.filter((b) => b.Properties?.Type === 'network').length,
    kmsKeys: ofType('AWS::KMS::Key').length,
    secrets: ofType('AWS::SecretsManager::Secret').length,
    alarms: ofType('AWS::CloudWatch::Alarm').length,
    warmPoolFloor: {
      tasks: sandboxTask ? floor : 0,
      vcpu: Number(sandboxTask?.Properties?.Cpu ?? 1024) / 1024,
      memoryGb: Number(sandboxTask?.Properties?.Memory ?? 2048) / 1024,
      architecture: platform === 'X86_64' ? 'x86_64' : 'arm64',
      spot,
    },
  };
}

import { AwsJsonServer } from './aws-json-server.ts';
import { AwsWireError } from './emulator-http.ts';

/**
 * Application Auto Scaling for the emulated deployment: RegisterScalableTarget and
 * DeregisterScalableTarget over awsJson1_1 (X-Amz-Target AnyScaleFrontendService.<Operation>), the
 * two calls the ECS service runner makes. A registered target's bounds are applied at once to what
 * it scales (`applyBounds`: the ECS service's desired count moves into [min, max]), as the service
 * does when a target is registered or changed. No scaling policies run: with none attached, AWS
 * would not scale between the bounds either.
 */

interface ScalableTarget {
  arn: string;
  namespace: string;
  resourceId: string;
  dimension: string;
  min: number;
  max: number;
}

export interface ApplicationAutoScalingEmulatorOptions {
  region: string;
  accountId: string;
  /** Moves the scaled resource into the bounds (ECS: `service/<cluster>/<service>`). */
  applyBounds?: (target: { namespace: string; resourceId: string; min: number; max: number }) => void;
}

const validation = (message: string) => new AwsWireError('ValidationException', 400, message);

export class ApplicationAutoScalingEmulator {
  private readonly targets = new Map<string, ScalableTarget>();
  private readonly options: ApplicationAutoScalingEmulatorOptions;
  private readonly server: AwsJsonServer;

  constructor(options: ApplicationAutoScalingEmulatorOptions) {
    this.options = options;
    this.server = new AwsJsonServer('AnyScaleFrontendService', {
      RegisterScalableTarget: (b) => this.register(b),
      DeregisterScalableTarget: (b) => this.deregister(b),
      DescribeScalableTargets: (b) => this.describe(b),
    });
  }

  listen(port: number, host: string): Promise<string> {
    return this.server.listen(port, host);
  }

  close(): Promise<void> {
    return this.server.close();
  }

  /** The target of a resource, if registered (tests). */
  target(resourceId: string): { min: number; max: number } | undefined {
    const t = [...this.targets.values()].find((x) => x.resourceId === resourceId);
    return t ? { min: t.min, max: t.max } : undefined;
  }

  private key(b: Record<string, unknown>): {
    namespace: string;
    resourceId: string;
    dimension: string;
    key: string;
  } {
    const namespace = b.ServiceNamespace;
    const resourceId = b.ResourceId;
    const dimension = b.ScalableDimension;
    if (typeof namespace !== 'string' || typeof resourceId !== 'string' || typeof dimension !== 'string') {
      throw validation('ServiceNamespace, ResourceId and ScalableDimension are required');
    }
    return { namespace, resourceId, dimension, key: `${namespace}|${resourceId}|${dimension}` };
  }

  private register(b: Record<string, unknown>): unknown {
    const k = this.key(b);
    const existing = this.targets.get(k.key);
    const min = b.MinCapacity === undefined ? existing?.min : Number(b.MinCapacity);
    const max = b.MaxCapacity === undefined ? existing?.max : Number(b.MaxCapacity);
    if (min === undefined || max === undefined) {
      throw validation('MinCapacity and MaxCapacity are required to register a new scalable target');
    }
    if (!Number.isInteger(min) || !Number.isInteger(max) || min < 0 || max < 0) {
      throw validation('MinCapacity and MaxCapacity must be non-negative integers');
    }
    if (min > max) throw validation('Minimum capacity cannot be greater than maximum capacity');
    const target: ScalableTarget = existing ?? {
      arn: `arn:aws:application-autoscaling:${this.options.region}:${this.options.accountId}:scalable-target/${crypto.randomUUID().replaceAll('-', '').slice(0, 28)}`,
      namespace: k.namespace,
      resourceId: k.resourceId,
      dimension: k.dimension,
      min,
      max,
    };
    target.min = min;
    target.max = max;
    this.targets.set(k.key, target);
    this.options.applyBounds?.({ namespace: k.namespace, resourceId: k.resourceId, min, max });
    return { ScalableTargetARN: target.arn };
  }

  private deregister(b: Record<string, unknown>): unknown {
    const k = this.key(b);
    if (!this.targets.delete(k.key)) {
      throw new AwsWireError(
        'ObjectNotFoundException',
        400,
        'No scalable target registered for service namespace',
      );
    }
    return {};
  }

  private describe(b: Record<string, unknown>): unknown {
    const ids = Array.isArray(b.ResourceIds) ? (b.ResourceIds as string[]) : undefined;
    return {
      ScalableTargets: [...this.targets.values()]
        .filter((t) => t.namespace === b.ServiceNamespace && (!ids || ids.includes(t.resourceId)))
        .map((t) => ({
          ServiceNamespace: t.namespace,
          ResourceId: t.resourceId,
          ScalableDimension: t.dimension,
          MinCapacity: t.min,
          MaxCapacity: t.max,
          ScalableTargetARN: t.arn,
        })),
    };
  }
}

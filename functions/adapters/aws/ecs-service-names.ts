/**
 * What a service's AWS resources are called: its ECS service, task definition family and target
 * group, its public host name, and the launcher's object key in the bundle bucket. Shared by the
 * runner's parts and by the stack (lib/constructs/service-hosting.ts grants the launcher prefix).
 */
import { createHash } from 'node:crypto';

/**
 * Where the platform puts the bundled service launcher in the bundle bucket, named by its content
 * (service-app-launcher-<sha256 prefix>.cjs): every start uploads it, and a task of an older
 * revision keeps reading the launcher it was started with.
 */
export const SERVICE_PROGRAMS_PREFIX = 'service-programs/';

/** The key of a launcher's object. */
export const launcherKey = (source: string) =>
  `${SERVICE_PROGRAMS_PREFIX}service-app-launcher-${createHash('sha256').update(source).digest('hex').slice(0, 16)}.cjs`;

/** ECS names of a service's resources. */
export function ecsNames(serviceId: string) {
  const compact = serviceId.replace(/-/g, '');
  return {
    service: `svc-${serviceId}`,
    family: `agenthost-svc-${serviceId}`,
    targetGroup: `svc-${compact.slice(0, 28)}`,
  };
}

/** The service's public host name: its name and the first 8 characters of its workspace id. */
export function serviceHost(name: string, workspaceId: string, domain: string): string {
  return `${name}-${workspaceId.replace(/-/g, '').slice(0, 8)}.${domain}`;
}

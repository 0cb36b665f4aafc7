/**
 * The task definition of one start of a service on ECS Fargate (docs/services.md): the gateway
 * container inline (`node -e <gateway>`) and the app container whose bootstrap downloads the
 * launcher, secrets by reference to Secrets Manager, no task role, awslogs to the services' group.
 */
import type { RegisterTaskDefinitionCommandInput } from '@aws-sdk/client-ecs';
import {
  APP_PORT,
  BUNDLE_FORMAT_ENV,
  BUNDLE_URL_ENV,
  COMMAND_ENV,
  GATEWAY_PORT,
  HTTP_ENV,
  LAUNCHER_URL_ENV,
  SECRET_NAMES_ENV,
  SERVICE_APP_BOOTSTRAP,
} from '../../containers/service-protocol.ts';
import type { ServiceLaunch } from '../../ports/service-runner.ts';
import { ecsNames } from './ecs-service-names.ts';
import type { EcsServiceRunnerOptions } from './ecs-service-options.ts';

/** The task definition of one start; `launcherUrl` is the launcher's presigned GET URL. */
export function serviceTaskDefinition(
  o: EcsServiceRunnerOptions,
  launch: ServiceLaunch,
  launcherUrl: string,
): RegisterTaskDefinitionCommandInput {
  const n = ecsNames(launch.serviceId);
  const partition = o.partition ?? 'aws';
  const secretNames = [...launch.secretNames].sort();
  const plain = Object.entries(launch.env)
    .filter(([k]) => !secretNames.includes(k))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, value]) => ({ name, value }));
  const logs = (prefix: string) => ({
    logDriver: 'awslogs' as const,
    options: {
      'awslogs-group': o.logGroup,
      'awslogs-region': o.region,
      'awslogs-stream-prefix': `${prefix}/${launch.serviceId}`,
    },
  });
  return {
    family: n.family,
    requiresCompatibilities: ['FARGATE'],
    networkMode: 'awsvpc',
    cpu: '512',
    memory: '1024',
    runtimePlatform: { cpuArchitecture: 'ARM64', operatingSystemFamily: 'LINUX' },
    executionRoleArn: o.executionRoleArn,
    containerDefinitions: [
      {
        name: 'gateway',
        image: o.image,
        essential: true,
        command: ['node', '-e', o.gatewaySource],
        portMappings: [{ containerPort: GATEWAY_PORT, protocol: 'tcp' }],
        environment: [
          { name: 'PLATFORM_HTTP_PORT', value: String(APP_PORT) },
          { name: HTTP_ENV, value: String(launch.http) },
        ],
        healthCheck: {
          command: [
            'CMD-SHELL',
            `node -e "fetch('http://127.0.0.1:${GATEWAY_PORT}/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"`,
          ],
          interval: 10,
          timeout: 5,
          retries: 3,
          startPeriod: 60,
        },
        readonlyRootFilesystem: true,
        user: '1000',
        logConfiguration: logs('gateway'),
      },
      {
        name: 'app',
        image: o.image,
        essential: true,
        command: ['node', '-e', SERVICE_APP_BOOTSTRAP],
        dependsOn: [{ containerName: 'gateway', condition: 'START' }],
        environment: [
          ...plain,
          { name: 'PORT', value: String(APP_PORT) },
          { name: 'PLATFORM_HTTP_PORT', value: String(APP_PORT) },
          { name: LAUNCHER_URL_ENV, value: launcherUrl },
          { name: BUNDLE_URL_ENV, value: launch.bundleUrl ?? '' },
          { name: BUNDLE_FORMAT_ENV, value: launch.bundle?.format ?? 'tar.gz' },
          { name: COMMAND_ENV, value: launch.command ?? '' },
          { name: SECRET_NAMES_ENV, value: secretNames.join(',') },
        ],
        secrets: secretNames.map((name) => ({
          name,
          valueFrom: `arn:${partition}:secretsmanager:${o.region}:${o.account}:secret:${o.secretsPrefix}/${launch.workspaceId}/${name}`,
        })),
        user: '1000',
        logConfiguration: logs('app'),
      },
    ],
    tags: [
      { key: 'agenthost:service', value: launch.serviceId },
      { key: 'agenthost:workspace', value: launch.workspaceId },
    ],
  };
}

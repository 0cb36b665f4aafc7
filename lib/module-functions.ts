import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Duration } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type { Construct } from 'constructs';
import { MAX_CALL_SECONDS } from '../functions/core/calls/deadline.ts';
import { MODULES, type ResourceModule } from '../functions/platform/routes.ts';
import { ENV } from '../functions/shared/env-names.ts';
import { acknowledge } from './acknowledge.ts';
import { AGENT_RUNNER_MEMORY_MB, PlatformFunction, PROJECT_ROOT } from './constructs/platform-function.ts';
import { moduleAccess } from './module-access.ts';

/**
 * The API's functions, one per resource module (functions/http/<module>.ts), each with its API
 * Gateway integration: the modules that run agents get the call timeout, and the call route and
 * POST /mcp stream. Created in the stack's own scope, under the same ids as ever, so a deployed
 * stack's functions are not replaced.
 */
export interface ModuleFunctionsProps {
  table: { name: string; arn: string };
  bundleBucket: { name: string; arn: string };
  secretsPrefix: string;
  publicUrl: string;
  corsOrigins?: string | undefined;
  allowedHosts?: string | undefined;
  /** API Gateway's integration timeout for the agent-call routes, seconds (StatelessStackProps). */
  callTimeout: number;
}

export function moduleFunctions(
  scope: Construct,
  props: ModuleFunctionsProps,
): {
  functions: Record<ResourceModule, PlatformFunction>;
  integrations: Record<ResourceModule, apigateway.LambdaIntegration>;
} {
  const functions = {} as Record<ResourceModule, PlatformFunction>;
  const integrations = {} as Record<ResourceModule, apigateway.LambdaIntegration>;
  for (const module of MODULES) {
    const entry = join(PROJECT_ROOT, 'functions', 'http', `${module}.ts`);
    if (!existsSync(entry)) throw new Error(`Module "${module}" is in MODULES but ${entry} does not exist`);
    const fn = new PlatformFunction(scope, `${pascal(module)}Function`, {
      entry,
      access: moduleAccess(module),
      countsAddresses: true,
      table: props.table,
      bundleBucket: props.bundleBucket,
      secretsPrefix: props.secretsPrefix,
      environment: {
        [ENV.publicUrl]: props.publicUrl,
        ...(props.corsOrigins ? { [ENV.corsOrigins]: props.corsOrigins } : {}),
        ...(module === 'mcp' && props.allowedHosts ? { [ENV.allowedHosts]: props.allowedHosts } : {}),
        ...(runsAgents(module) ? { [ENV.maxCallSeconds]: String(Math.max(1, props.callTimeout - 1)) } : {}),
        ...(streams(module) ? { [ENV.maxStreamedCallSeconds]: String(MAX_CALL_SECONDS) } : {}),
      },
      ...(runsAgents(module)
        ? {
            functionProps: {
              timeout: Duration.seconds(
                // The call and MCP routes stream: a streamed call may run MAX_CALL_SECONDS.
                (streams(module) ? Math.max(props.callTimeout, MAX_CALL_SECONDS) : props.callTimeout) + 5,
              ),
              memorySize: AGENT_RUNNER_MEMORY_MB,
            },
          }
        : {}),
    });
    functions[module] = fn;
    acknowledge(fn.function, [
      {
        id: 'Serverless-LambdaDLQ',
        reason:
          'API Gateway invokes it synchronously: the caller gets the error (5xx, its request id), and there is no event to keep in a queue.',
      },
    ]);
    // One invoke permission per function for the whole API (not one per method): a permission per
    // method would add a resource for each of the API's methods to the stack. The function still
    // serves only the methods routed to it.
    integrations[module] = new apigateway.LambdaIntegration(fn.function, {
      proxy: true,
      scopePermissionToMethod: false,
      ...(runsAgents(module) ? { timeout: Duration.seconds(props.callTimeout) } : {}),
      // The call route streams its answer (docs/calls.md, "Streamed calls"): a call asked for as
      // Server-Sent Events may run the agent's timeout, up to MAX_CALL_SECONDS; a buffered one is
      // still held to props.callTimeout (PLATFORM_MAX_CALL_SECONDS) by the platform itself. So does
      // POST /mcp, whose tool call with a progress token is a streamed call (docs/mcp.md).
      ...(streams(module)
        ? {
            responseTransferMode: apigateway.ResponseTransferMode.STREAM,
            timeout: Duration.seconds(Math.max(props.callTimeout, MAX_CALL_SECONDS) + 1),
          }
        : {}),
    });
  }
  return { functions, integrations };
}

/** Modules that run agents synchronously behind the API: their integration timeout is the call timeout. */
function runsAgents(module: ResourceModule): boolean {
  return module === 'calls' || module === 'schedule-runs' || module === 'mcp';
}

/**
 * Modules whose integration streams (ResponseTransferMode STREAM): the call route and POST /mcp,
 * whose streamed calls may run MAX_CALL_SECONDS. A streamed call behind a buffered integration
 * would be cut by API Gateway at callTimeout while it ran on, holding its slot.
 */
function streams(module: ResourceModule): boolean {
  return module === 'calls' || module === 'mcp';
}

function pascal(module: string): string {
  return module.replace(/(^|-)([a-z])/g, (_m, _d, c: string) => c.toUpperCase());
}

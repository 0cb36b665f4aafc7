import * as z from 'zod';
import { arn, csv, int, portList, text } from './setting-types.ts';

/**
 * The sandbox's settings, part of the platform's one settings schema (config.ts, as
 * trace-settings.ts is): where user code runs, the host ports it may reach, and the ECS sandbox's
 * cluster, warm runners and timing, which the stack sets on the functions that run sandboxes.
 */
export const sandboxSettings = {
  // Where user code runs: bubblewrap locally (default), ECS Fargate in AWS (default), or, only
  // when the operator says so explicitly, without isolation.
  sandbox: z.enum(['bubblewrap', 'unisolated', 'ecs']).optional(),
  // Host loopback TCP ports that sandboxes with outbound network (always-on services,
  // orchestrators) may reach at the same port on their own 127.0.0.1 (docs/sandbox.md). Nothing
  // else on the host's loopback is reachable from a sandbox.
  sandboxHostPorts: portList(),
  // The ECS sandbox (set by the stack on the calls function).
  sandboxCluster: text(),
  sandboxTaskDefinition: text(),
  sandboxSubnets: text().transform(csv),
  sandboxSecurityGroups: text().transform(csv),
  /** The ECS sandbox's bundled runner (in the function's asset; set by the stack). */
  sandboxRunnerFile: text(),
  /**
   * The ECS sandbox's customer-managed KMS key (its ARN; set by the stack): run manifests, claims
   * and commands, which carry a run's secret values, are written under it (docs/sandbox-aws.md,
   * "Who can read a run's secrets").
   */
  sandboxInputsKey: arn(),
  // The ECS sandbox's warm runners (docs/sandbox-aws.md, "Warm runners"; set by the stack from CDK
  // context): idle unbound runners kept ready, and the most runners in all. Without a maximum every
  // run starts its own task.
  sandboxPoolMin: int(0, 100).optional(),
  sandboxPoolMax: int(1, 1000).optional(),
  // A bound runner's shortest wait for its pair's next run (docs/sandbox-aws.md, "How long a bound
  // runner waits"): 60 s unless the stack says otherwise (`-c sandboxIdleMinSeconds`); the
  // emulated deployment passes its own through, so tests need not wait a minute.
  sandboxIdleMinMs: int(1000, 600_000).optional(),
  // How long a sandbox task takes to start, as the platform counts it when deciding whether a run
  // that must start one still has time (docs/sandbox-aws.md, "When no runner can start"):
  // Fargate's quickest, 20 s, unless told; the emulated deployment passes its own task start.
  sandboxTaskStartMs: int(0, 600_000).optional(),
  // The unbound runners on Fargate Spot, on-demand when Spot has none (`-c sandboxSpot=on`).
  sandboxSpot: z
    .enum(['on', 'off'])
    .optional()
    .transform((v) => v === 'on'),
};

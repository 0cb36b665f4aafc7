import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { assemblyNestedTemplates, foldNestedStacks } from '../functions/emulator/nested-stacks.ts';
import { type StandingResources, standingResources } from '../functions/emulator/standing-resources.ts';
import { addAgenthostStacks } from '../lib/agenthost-app.ts';

/**
 * The standing resources of the stacks synthesized with `context` (bundling skipped: templates
 * only), their nested stacks folded in as deployed: the sandbox's endpoints and key live in one
 * (docs/deploy.md, "Stacks"). What the cost bench prices as an idle month (bench/aws-cost.ts).
 */
export function standingResourcesOf(context: { stage?: string }): StandingResources {
  const outdir = mkdtempSync(join(tmpdir(), 'agenthost-cost-synth-'));
  const validation = process.env.CDK_VALIDATION;
  try {
    process.env.CDK_VALIDATION = 'false';
    const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
    const { stateful, stateless } = addAgenthostStacks(app, context);
    const assembly = app.synth();
    const nested = assemblyNestedTemplates(assembly.directory);
    return standingResources(
      [stateful, stateless].map((s) => ({
        stackName: s.stackName,
        template: foldNestedStacks(assembly.getStackArtifact(s.artifactId).template, nested),
      })),
    );
  } finally {
    if (validation === undefined) delete process.env.CDK_VALIDATION;
    else process.env.CDK_VALIDATION = validation;
    rmSync(outdir, { recursive: true, force: true });
  }
}

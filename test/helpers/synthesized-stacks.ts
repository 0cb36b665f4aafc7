/**
 * The stacks `cdk synth` makes, with always-on services on (a domain and a certificate), synthesized
 * in a temporary directory with bundling skipped (templates only), for the tests of what the CDK
 * app defines (test/cdk/cdk*.test.ts): the stacks, their templates (the stateless one with its
 * nested stacks folded in, folded-template.ts) and lookups into them. CDK's CloudFormation
 * validation (about 4 s of CPU a synthesis) runs only when asked for: test/cdk/cdk.test.ts asks, the
 * others need the templates only.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import type { IConstruct } from 'constructs';
import type { ResourceModule } from '../../functions/platform/routes.ts';
import { addAgenthostStacks } from '../../lib/agenthost-app.ts';
import { foldedTemplate } from './folded-template.ts';

export const SERVICES = {
  domain: 'services.example.com',
  certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b',
};

export interface CfnResourceJson {
  Type: string;
  Properties: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}

/** An app for templates: bundling skipped, and CloudFormation's validation off unless asked for. */
export function templatesApp(outdir: string, { validation = false }: { validation?: boolean } = {}): App {
  return new App({
    outdir,
    context: { 'aws:cdk:bundling-stacks': [] },
    builtinCloudFormationValidation: validation,
  });
}

/**
 * The stacks synthesized once a process: the test files of test/cdk/ share processes under npm test
 * (test/setup/shared-processes.ts), and those that read the default stacks read the same synthesis.
 * Nothing may change what it returns. Each caller removes `outdir` when its tests are done (the
 * first removal ends it; rmSync with force minds no later one).
 */
export function synthesizeStacks(options: { validation?: boolean } = {}) {
  const key = options.validation === true;
  const made = synthesized.get(key) ?? synthesizeNow(options);
  synthesized.set(key, made);
  return made;
}

const synthesized = new Map<boolean, ReturnType<typeof synthesizeNow>>();

function synthesizeNow(options: { validation?: boolean }) {
  const outdir = mkdtempSync(join(tmpdir(), 'agenthost-cdk-'));
  const app = templatesApp(outdir, options);
  const { stateful, stateless } = addAgenthostStacks(app, { services: SERVICES });
  const statefulTemplate = Template.fromStack(stateful);
  const statelessTemplate = foldedTemplate(stateless);
  const statelessJson = statelessTemplate.toJSON() as { Resources: Record<string, CfnResourceJson> };
  const resourcesOfType = (type: string) =>
    Object.entries(statelessJson.Resources).filter(([, r]) => r.Type === type) as [string, CfnResourceJson][];
  /**
   * The platform's Lambdas: every function but CDK's BucketDeployment handler, a Python function of
   * aws-cdk-lib's that copies the dashboard's build to S3 during a deploy (lib/constructs/dashboard-site.ts).
   */
  const deploymentHandlerId = stateless.getLogicalId(
    stateless.dashboard.deploymentHandler.node.defaultChild as never,
  );
  const platformFunctions = () =>
    resourcesOfType('AWS::Lambda::Function').filter(([id]) => id !== deploymentHandlerId);
  const logicalIdOf = (c: IConstruct) => stateless.getLogicalId(c.node.defaultChild as never);
  const functionLogicalId = (module: ResourceModule) =>
    stateless.getLogicalId(stateless.functions[module].function.node.defaultChild as CfnFunction);
  return {
    outdir,
    app,
    stateful,
    stateless,
    statefulTemplate,
    statelessTemplate,
    statelessJson,
    resourcesOfType,
    platformFunctions,
    logicalIdOf,
    functionLogicalId,
  };
}

#!/usr/bin/env node
/**
 * The CDK app: `cdk deploy` runs it through cdk.json, `npm run synth` runs it directly (no CLI, so
 * no network: no notices, no version check, no account lookup) and writes the assembly to cdk.out.
 * Stage: `-c stage=dev` with the CLI, CDK_CONTEXT_JSON='{"stage":"dev"}' without it.
 */
import { App } from 'aws-cdk-lib';
import { addAgenthostStacks } from '../lib/agenthost-app.ts';

const underCli = process.env.CDK_OUTDIR !== undefined;
const app = new App(underCli ? {} : { outdir: 'cdk.out' });
const stage = app.node.tryGetContext('stage') as string | undefined;
const callTimeout = app.node.tryGetContext('callTimeoutSeconds') as string | number | undefined;
const servicesDomain = app.node.tryGetContext('servicesDomain') as string | undefined;
const servicesCertificateArn = app.node.tryGetContext('servicesCertificateArn') as string | undefined;
const corsOrigins = app.node.tryGetContext('corsOrigins') as string | undefined;
const allowedHosts = app.node.tryGetContext('allowedHosts') as string | undefined;
const sandboxPoolMin = app.node.tryGetContext('sandboxPoolMin') as string | number | undefined;
const sandboxPoolMax = app.node.tryGetContext('sandboxPoolMax') as string | number | undefined;
const sandboxSpot = app.node.tryGetContext('sandboxSpot') as string | boolean | undefined;
const sandboxIdleMin = app.node.tryGetContext('sandboxIdleMinSeconds') as string | number | undefined;
const tracing = app.node.tryGetContext('tracing') as string | undefined;
const sandboxAzs = app.node.tryGetContext('sandboxAzs') as string | number | undefined;
const functionAlarms = app.node.tryGetContext('functionAlarms') as string | boolean | undefined;
const sandboxDnsFirewall = app.node.tryGetContext('sandboxDnsFirewall') as string | boolean | undefined;
const waf = app.node.tryGetContext('waf') as string | boolean | undefined;
/** A whole-number context value, or undefined when not given. */
const numberOf = (name: string) => {
  const v = app.node.tryGetContext(name) as string | number | undefined;
  return v === undefined ? undefined : Number(v);
};
const apiThrottleRps = app.node.tryGetContext('apiThrottleRps') as string | number | undefined;
const apiThrottleBurst = app.node.tryGetContext('apiThrottleBurst') as string | number | undefined;
if (Boolean(servicesDomain) !== Boolean(servicesCertificateArn)) {
  throw new Error('Always-on services need both -c servicesDomain=… and -c servicesCertificateArn=…');
}
const { stateful, stateless } = addAgenthostStacks(app, {
  stage: stage || undefined,
  callTimeoutSeconds: callTimeout === undefined ? undefined : Number(callTimeout),
  services:
    servicesDomain && servicesCertificateArn
      ? { domain: servicesDomain, certificateArn: servicesCertificateArn }
      : undefined,
  corsOrigins: corsOrigins || undefined,
  allowedHosts: allowedHosts || undefined,
  sandboxPool: {
    min: sandboxPoolMin === undefined ? undefined : Number(sandboxPoolMin),
    max: sandboxPoolMax === undefined ? undefined : Number(sandboxPoolMax),
  },
  sandboxSpot: sandboxSpot === undefined ? undefined : String(sandboxSpot),
  sandboxIdleMinSeconds: sandboxIdleMin === undefined ? undefined : Number(sandboxIdleMin),
  tracing: tracing === undefined ? undefined : String(tracing),
  sandboxAzs: sandboxAzs === undefined ? undefined : Number(sandboxAzs),
  functionAlarms: functionAlarms === undefined ? undefined : String(functionAlarms),
  sandboxDnsFirewall: sandboxDnsFirewall === undefined ? undefined : String(sandboxDnsFirewall),
  waf: waf === undefined ? undefined : String(waf),
  reservedConcurrency: {
    calls: numberOf('callsConcurrency'),
    mcp: numberOf('mcpConcurrency'),
    scheduleFire: numberOf('scheduleFireConcurrency'),
  },
  apiThrottle: {
    rps: apiThrottleRps === undefined ? undefined : Number(apiThrottleRps),
    burst: apiThrottleBurst === undefined ? undefined : Number(apiThrottleBurst),
  },
});
const assembly = app.synth();
if (!underCli) {
  process.stdout.write(
    `Synthesized ${stateful.stackName} and ${stateless.stackName} to ${assembly.directory}\n`,
  );
}

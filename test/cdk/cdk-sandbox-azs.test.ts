import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { App } from 'aws-cdk-lib';
import { addAgenthostStacks } from '../../lib/agenthost-app.ts';
import { foldedTemplate } from '../helpers/folded-template.ts';
import { templatesApp } from '../helpers/synthesized-stacks.ts';

/**
 * The sandbox VPC's availability zones (`-c sandboxAzs=…`; docs/deploy.md, "Context values"): each
 * zone holds the three interface endpoints Fargate needs (ECR's two and CloudWatch Logs), billed
 * per endpoint and zone-hour whatever the traffic ($7.30 a month each). A named stage (`-c
 * stage=dev`) is a second copy, not the production one: one zone by default, so its idle month
 * pays three endpoint-zones, not six. Production keeps two zones (runs go on while one is
 * impaired). Bundling is skipped: only the templates matter.
 */

const outdir = mkdtempSync(join(tmpdir(), 'agenthost-cdk-azs-'));
after(() => rmSync(outdir, { recursive: true, force: true }));

interface Endpoint {
  Properties: { VpcEndpointType?: string; SubnetIds?: unknown[]; ServiceName?: unknown };
}

function sandboxNetwork(options: Parameters<typeof addAgenthostStacks>[1]) {
  const app = templatesApp(outdir);
  const { stateless } = addAgenthostStacks(app, options);
  const template = foldedTemplate(stateless);
  const endpoints = Object.values(template.findResources('AWS::EC2::VPCEndpoint')) as Endpoint[];
  const interfaces = endpoints.filter((e) => e.Properties.VpcEndpointType === 'Interface');
  return {
    interfaceEndpoints: interfaces.length,
    endpointZones: interfaces.map((e) => e.Properties.SubnetIds?.length ?? 0),
    gatewayEndpoints: endpoints.length - interfaces.length,
    subnets: Object.keys(template.findResources('AWS::EC2::Subnet')).length,
    natGateways: Object.keys(template.findResources('AWS::EC2::NatGateway')).length,
  };
}

describe('stateless stack: the sandbox VPC’s zones, and what they cost standing', () => {
  test('production defaults: two zones, each with the three interface endpoints', () => {
    assert.deepEqual(sandboxNetwork({}), {
      interfaceEndpoints: 3,
      endpointZones: [2, 2, 2],
      gatewayEndpoints: 1,
      subnets: 2,
      natGateways: 0,
    });
  });

  test('a named stage: one zone, its endpoints in it alone', () => {
    assert.deepEqual(sandboxNetwork({ stage: 'dev' }), {
      interfaceEndpoints: 3,
      endpointZones: [1, 1, 1],
      gatewayEndpoints: 1,
      subnets: 1,
      natGateways: 0,
    });
  });

  test('-c sandboxAzs chooses either way, and refuses what is not 1 to 3', () => {
    assert.deepEqual(sandboxNetwork({ stage: 'dev', sandboxAzs: 2 }).endpointZones, [2, 2, 2]);
    assert.deepEqual(sandboxNetwork({ sandboxAzs: 1 }).endpointZones, [1, 1, 1]);
    for (const sandboxAzs of [0, 4, 1.5, Number.NaN]) {
      assert.throws(
        () => addAgenthostStacks(new App({ outdir }), { sandboxAzs }),
        /sandboxAzs must be 1, 2 or 3/,
        String(sandboxAzs),
      );
    }
  });
});

/**
 * The cost bench's arithmetic (bench/aws-cost-pricing.ts) on a hand-made meter snapshot: each
 * service priced from the dated table, a shape's cost per million calls over the idle baseline,
 * and an idle month from the standing resources.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  idleMonth,
  perMillionCalls,
  priceDurable,
  priceSnapshot,
  standingMonth,
} from '../../bench/aws-cost-pricing.ts';
import { AWS_PRICES } from '../../bench/aws-prices.ts';
import { standingResourcesOf } from '../../bench/synthesized-standing.ts';
import type { MeterSnapshot } from '../../functions/emulator/deployment-meter.ts';
import type { StandingResources } from '../../functions/emulator/standing-resources.ts';

const close = (actual: number, expected: number, what: string) =>
  assert.ok(Math.abs(actual - expected) < 1e-9, `${what}: ${actual} ≠ ${expected}`);

const standing: StandingResources = {
  interfaceEndpointAzHours: 6,
  gatewayEndpoints: 1,
  natGateways: 1,
  applicationLoadBalancers: 1,
  networkLoadBalancers: 0,
  kmsKeys: 2,
  secrets: 5,
  alarms: 10,
  warmPoolFloor: { tasks: 2, vcpu: 1, memoryGb: 2, architecture: 'arm64', spot: false },
};

const snapshot: MeterSnapshot = {
  since: 0,
  at: 3_600_000,
  windowSeconds: 3600,
  lambda: {
    Calls: {
      memoryMb: 1024,
      architecture: 'arm64',
      requests: 1000,
      billedMs: 1_000_000,
      gbSeconds: 1000,
      coldStarts: 1,
      maxMemoryUsedMb: 200,
    },
    Old: {
      memoryMb: 512,
      architecture: 'x86_64',
      requests: 10,
      billedMs: 4000,
      gbSeconds: 2,
      coldStarts: 0,
      maxMemoryUsedMb: 90,
    },
  },
  durable: {
    executionsStarted: 10,
    executionsEnded: 10,
    operations: 50,
    bytesWritten: 1024 ** 3,
    // A GB for a month.
    retainedByteSeconds: 1024 ** 3 * 730 * 3600,
  },
  apiGateway: { requests: 1000, streamedRequests: 10 },
  dynamodb: {
    readRequestUnits: 4000,
    writeRequestUnits: 8000,
    requests: 9000,
    unmeteredRequests: { Query: 10, UpdateItem: 20 },
    conditionFailures: 100,
    byOperation: {},
  },
  s3: { tier1Requests: 2000, tier2Requests: 10_000, freeRequests: 5, storedBytes: 1024 ** 3 },
  fargate: {
    FARGATE: { tasks: 1, vcpuSeconds: 3600, gbSeconds: 7200 },
    FARGATE_SPOT: { tasks: 1, vcpuSeconds: 3600, gbSeconds: 7200 },
  },
  fargateOpenTasks: 0,
  standing,
};

describe('the cost bench’s arithmetic', () => {
  it('prices each service of a snapshot from the table', () => {
    const c = priceSnapshot(snapshot);
    const durable = priceDurable(snapshot);
    close(durable.operations, 50 * 8e-6, 'durable operations');
    close(durable.written, 0.25, 'a GB written');
    close(durable.retained, 0.15, 'a GB retained a month');
    close(
      c.lambda,
      1010 * 0.2e-6 + 1000 * 0.0000133334 + 2 * 0.0000166667 + durable.total,
      'Lambda, by architecture, its durable functions included',
    );
    close(c.apiGateway, 1000 * 3.5e-6, 'API Gateway');
    close(
      c.dynamodb,
      4010 * 0.125e-6 + 8120 * 0.625e-6,
      'DynamoDB, refused conditions and requests that did not ask as 1 unit',
    );
    const hour = 0.03238 + 2 * 0.00356;
    close(c.fargate, hour + hour * 0.3, 'Fargate, on-demand and Spot');
    close(c.s3, 2000 * 0.005e-3 + 10_000 * 0.0004e-3 + 0.023 / 730, 'S3 requests and an hour of 1 GB');
  });

  it('a shape’s cost per million calls is over the idle baseline for as long', () => {
    const window = { lambda: 2, apiGateway: 1, dynamodb: 0.5, fargate: 3, s3: 0.1 };
    const idle = { lambda: 0.001, apiGateway: 0, dynamodb: 0.0001, fargate: 0.002, s3: 0.01 };
    const c = perMillionCalls(window, 1000, 100_000, idle);
    close(c.lambda, (2 - 1) * 10, 'Lambda');
    close(c.apiGateway, 10, 'API Gateway');
    close(c.dynamodb, (0.5 - 0.1) * 10, 'DynamoDB');
    close(c.fargate, (3 - 2) * 10, 'Fargate');
    close(c.s3, 0, 'S3 never below zero');
    close(c.total, 10 + 10 + 4 + 10, 'total');
  });

  it('an idle month is the standing resources for 730 hours and the idle baseline’s metering', () => {
    const items = standingMonth(standing);
    close(items.interfaceEndpoints ?? 0, 6 * 0.01 * 730, 'six endpoint-AZs');
    close(items.natGateways ?? 0, 0.045 * 730, 'a NAT gateway');
    close(items.loadBalancers ?? 0, 0.0225 * 730, 'an ALB');
    close(items.warmPoolFloor ?? 0, 2 * (0.03238 + 2 * 0.00356) * 730, 'two floor runners');
    close(items.secrets ?? 0, 2, 'five secrets');
    close(items.kmsKeys ?? 0, 2, 'two keys');
    close(items.alarms ?? 0, 1, 'ten alarms');
    const perSecond = { lambda: 1e-6, apiGateway: 0, dynamodb: 0, fargate: 1, s3: 0 };
    const month = idleMonth(standing, perSecond);
    close(month.items['metered lambda'] ?? 0, 1e-6 * 730 * 3600, 'metered Lambda');
    assert.equal(month.items['metered fargate'], undefined, 'the floor is counted once, from the template');
    const sum = Object.values(items).reduce((a, b) => a + b, 0) + 1e-6 * 730 * 3600;
    close(month.total, sum, 'total');
    assert.equal(AWS_PRICES.dynamodb.perWriteRequestUnit, 0.625e-6, 'the Nov 2024 on-demand price');
  });

  it('a floor on Spot is priced at Spot’s rate, and a context without a floor pays none of its metering', () => {
    const onDemand = standingMonth(standing).warmPoolFloor ?? 0;
    const spot = standingMonth({ ...standing, warmPoolFloor: { ...standing.warmPoolFloor, spot: true } });
    close(spot.warmPoolFloor ?? 0, onDemand * (1 - AWS_PRICES.fargate.spotDiscount), 'Spot');
    const idle = { lambda: 3e-6, apiGateway: 0, dynamodb: 2e-6, fargate: 1, s3: 5e-6 };
    const pool = {
      perSecond: { lambda: 1e-6, apiGateway: 0, dynamodb: 2e-6, fargate: 0, s3: 4e-6 },
      measuredFloor: 2,
    };
    const seconds = 730 * 3600;
    const none = idleMonth(
      { ...standing, warmPoolFloor: { ...standing.warmPoolFloor, tasks: 0 } },
      idle,
      AWS_PRICES,
      pool,
    );
    close(none.items['metered lambda'] ?? 0, 2e-6 * seconds, 'the refill’s Lambda gone');
    close(none.items['metered s3'] ?? 0, 1e-6 * seconds, 'the runners’ reads gone');
    close(none.items['metered dynamodb'] ?? 0, 0, 'the pool’s items gone');
    close(none.items.warmPoolFloor ?? 0, 0, 'no floor');
    const one = idleMonth(
      { ...standing, warmPoolFloor: { ...standing.warmPoolFloor, tasks: 1 } },
      idle,
      AWS_PRICES,
      pool,
    );
    close(one.items['metered s3'] ?? 0, (1e-6 + 2e-6) * seconds, 'half the runners’ reads');
  });
});

describe('the standing resources the idle month prices, as synthesized', () => {
  it('counts the nested stacks’ resources too: the sandbox’s endpoints and key are in one', () => {
    const production = standingResourcesOf({});
    // Three interface endpoints (ECR API, ECR Docker, Logs) in each of two zones; one in a stage.
    assert.equal(production.interfaceEndpointAzHours, 6);
    assert.equal(production.kmsKeys, 1, 'the run inputs’ key');
    assert.ok(production.alarms > 20, 'the operations’ alarms');
    assert.equal(standingResourcesOf({ stage: 'dev' }).interfaceEndpointAzHours, 3);
  });
});

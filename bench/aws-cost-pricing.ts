import type { MeterSnapshot } from '../functions/emulator/deployment-meter.ts';
import type { StandingResources } from '../functions/emulator/standing-resources.ts';
import { AWS_PRICES, HOURS_PER_MONTH } from './aws-prices.ts';

/**
 * The arithmetic of the cost bench: a meter snapshot priced with AWS_PRICES, service by service;
 * a shape's cost per million calls over what the idle deployment costs in the same time; and a
 * month of the idle deployment (its templates' standing resources plus what it meters at rest).
 */

export const SERVICES = ['lambda', 'apiGateway', 'dynamodb', 'fargate', 's3'] as const;
export type Service = (typeof SERVICES)[number];
export type ServiceCosts = Record<Service, number>;

type Prices = typeof AWS_PRICES;

const READ_OPERATIONS = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem', 'TransactGetItems']);

/**
 * What a window's durable executions cost, by item: their durable operations, the data their
 * checkpoints wrote, and the data retained (GB-months; an execution's retention counted when it
 * ended). Part of Lambda's bill, so `priceSnapshot` adds it to Lambda.
 */
export function priceDurable(
  s: Pick<MeterSnapshot, 'durable'>,
  prices: Prices = AWS_PRICES,
): { operations: number; written: number; retained: number; total: number } {
  const d = s.durable;
  const p = prices.lambda.durable;
  const operations = d.operations * p.perOperation;
  const written = (d.bytesWritten / 1024 ** 3) * p.perGbWritten;
  const retained = (d.retainedByteSeconds / 1024 ** 3 / (HOURS_PER_MONTH * 3600)) * p.perGbMonthRetained;
  return { operations, written, retained, total: operations + written + retained };
}

/**
 * What a snapshot's window cost, per service (S3 storage for the window's share of a month).
 * Lambda includes its durable functions' charges (priceDurable).
 */
export function priceSnapshot(s: MeterSnapshot, prices: Prices = AWS_PRICES): ServiceCosts {
  let lambda = priceDurable(s, prices).total;
  for (const u of Object.values(s.lambda)) {
    lambda += u.requests * prices.lambda.perRequest + u.gbSeconds * prices.lambda.perGbSecond[u.architecture];
  }
  const d = s.dynamodb;
  // A request that did not ask what it consumed (a client other than the store adapter's) is
  // priced at the least it can cost: one unit.
  let unmeteredReads = 0;
  let unmeteredWrites = 0;
  for (const [op, n] of Object.entries(d.unmeteredRequests)) {
    if (READ_OPERATIONS.has(op)) unmeteredReads += n;
    else unmeteredWrites += n;
  }
  const dynamodb =
    (d.readRequestUnits + unmeteredReads) * prices.dynamodb.perReadRequestUnit +
    (d.writeRequestUnits + d.conditionFailures + unmeteredWrites) * prices.dynamodb.perWriteRequestUnit;
  const arch = s.standing.warmPoolFloor.architecture;
  let fargate = 0;
  for (const [provider, f] of Object.entries(s.fargate)) {
    const rate = prices.fargate.onDemand[arch];
    const factor = provider === 'FARGATE_SPOT' ? 1 - prices.fargate.spotDiscount : 1;
    fargate += ((f.vcpuSeconds * rate.perVcpuHour + f.gbSeconds * rate.perGbHour) / 3600) * factor;
  }
  const monthShare = s.windowSeconds / (HOURS_PER_MONTH * 3600);
  const s3 =
    s.s3.tier1Requests * prices.s3.perTier1Request +
    s.s3.tier2Requests * prices.s3.perTier2Request +
    (s.s3.storedBytes / 1024 ** 3) * prices.s3.perGbMonth * monthShare;
  return {
    lambda,
    apiGateway: s.apiGateway.requests * prices.apiGateway.perRestRequest,
    dynamodb,
    fargate,
    s3,
  };
}

/**
 * A shape's cost per million calls: its window's cost less the idle deployment's for as long
 * (`idlePerSecond`, from the idle shape), over its calls. Never below zero per service.
 */
export function perMillionCalls(
  window: ServiceCosts,
  windowSeconds: number,
  calls: number,
  idlePerSecond: ServiceCosts,
): ServiceCosts & { total: number } {
  const out = {} as ServiceCosts & { total: number };
  let total = 0;
  for (const k of SERVICES) {
    const v = (Math.max(0, window[k] - idlePerSecond[k] * windowSeconds) / calls) * 1e6;
    out[k] = v;
    total += v;
  }
  out.total = total;
  return out;
}

export function perSecond(window: ServiceCosts, windowSeconds: number): ServiceCosts {
  return Object.fromEntries(SERVICES.map((k) => [k, window[k] / windowSeconds])) as ServiceCosts;
}

/** A month of what the templates keep up whatever the traffic, by item. */
export function standingMonth(r: StandingResources, prices: Prices = AWS_PRICES): Record<string, number> {
  const h = HOURS_PER_MONTH;
  const floor = r.warmPoolFloor;
  const rate = prices.fargate.onDemand[floor.architecture];
  const spotFactor = floor.spot ? 1 - prices.fargate.spotDiscount : 1;
  return {
    interfaceEndpoints: r.interfaceEndpointAzHours * prices.vpc.interfaceEndpointPerAzHour * h,
    natGateways: r.natGateways * prices.vpc.natGatewayPerHour * h,
    loadBalancers:
      (r.applicationLoadBalancers * prices.elb.albPerHour + r.networkLoadBalancers * prices.elb.nlbPerHour) *
      h,
    warmPoolFloor:
      floor.tasks * (floor.vcpu * rate.perVcpuHour + floor.memoryGb * rate.perGbHour) * spotFactor * h,
    secrets: r.secrets * prices.secretsManager.perSecretMonth,
    kmsKeys: r.kmsKeys * prices.kms.perKeyMonth,
    alarms: r.alarms * prices.cloudwatch.perStandardAlarmMonth,
  };
}

/**
 * The idle month: the standing resources, and what the idle deployment metered per second (its
 * timers' functions, the pool's refills and reads) for a month. The floor's Fargate tasks are
 * metered at rest too, so the metered Fargate is left out here (it is `warmPoolFloor`).
 *
 * `pool` is the part of `idlePerSecond` the measured deployment's floor made (the refill function,
 * the idle runners' reads of their claim slots, the pool's table items) and how many runners that
 * floor had: a context whose templates keep another floor gets it in proportion (none without one).
 */
export function idleMonth(
  standing: StandingResources,
  idlePerSecond: ServiceCosts,
  prices: Prices = AWS_PRICES,
  pool?: { perSecond: ServiceCosts; measuredFloor: number },
): { items: Record<string, number>; total: number } {
  const seconds = HOURS_PER_MONTH * 3600;
  const items: Record<string, number> = { ...standingMonth(standing, prices) };
  const share = pool && pool.measuredFloor > 0 ? standing.warmPoolFloor.tasks / pool.measuredFloor : 1;
  for (const k of SERVICES) {
    if (k === 'fargate') continue;
    const ofPool = pool ? pool.perSecond[k] : 0;
    items[`metered ${k}`] = (idlePerSecond[k] - ofPool + ofPool * share) * seconds;
  }
  return { items, total: Object.values(items).reduce((a, b) => a + b, 0) };
}

/**
 * What of an idle window the warm pool's floor made, per second: the refill function's Lambda, the
 * S3 requests (idle runners reading their claim slots, the refill writing them) and DynamoDB (the
 * pool's items). Nothing else runs on S3 or the table while no one calls.
 */
export function poolPerSecond(s: MeterSnapshot, prices: Prices = AWS_PRICES): ServiceCosts {
  const refill = Object.fromEntries(Object.entries(s.lambda).filter(([name]) => /WarmPool/.test(name)));
  const costs = priceSnapshot(
    {
      ...s,
      lambda: refill,
      durable: {
        executionsStarted: 0,
        executionsEnded: 0,
        operations: 0,
        bytesWritten: 0,
        retainedByteSeconds: 0,
      },
      apiGateway: { requests: 0, streamedRequests: 0 },
      s3: { ...s.s3, storedBytes: 0 },
      fargate: {},
    },
    prices,
  );
  return perSecond(costs, s.windowSeconds);
}

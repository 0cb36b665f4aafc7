/**
 * AWS list prices, us-east-1, in US dollars: the one table the cost bench (npm run bench:aws-cost)
 * prices the emulated deployment's meter with. Checked 2026-11-27 against the pricing pages below
 * and summaries of them (the pages render their rate tables from a price list the search tool does
 * not read; figures from third-party copies dated 2026 where the page's own text gave none). Free
 * tiers are left out: the figures are what a deployment pays past them. Fargate Spot varies with
 * supply and demand (the page shows its current figure); the table takes 70% off on-demand, the
 * discount AWS advertises as "up to", so a Spot figure here is a floor, not a promise.
 */
export const PRICES_CHECKED = '2026-11-27';

export const AWS_PRICES = {
  lambda: {
    source: 'https://aws.amazon.com/lambda/pricing/',
    perRequest: 0.2 / 1e6,
    /** Per GB-second (first tier, 6 billion GB-s a month). INIT is billed too since 2025-08-01. */
    perGbSecond: { arm64: 0.0000133334, x86_64: 0.0000166667 },
    /**
     * Durable functions (the run worker), on top of its requests and GB-seconds: durable operations
     * (an execution's start, a step's attempt, a wait…), the checkpoints' data written, and the
     * data retained during the execution and its retention period after it. No free tier. Checked
     * 2026-11-29: the page renders these from its price list too; the figures are the ones quoted
     * from it by a summary of the page (api-evangelist/aws-lambda's transcription, "$8.00/M"
     * operations) and by The Candid Startup's "AWS Lambda Durable Functions" (2026-01-12: $8.00 a
     * million operations, $0.25 a GB written, $0.15 a GB-month retained).
     */
    durable: {
      checked: '2026-11-29',
      source: 'https://aws.amazon.com/lambda/pricing/',
      perOperation: 8 / 1e6,
      perGbWritten: 0.25,
      perGbMonthRetained: 0.15,
    },
  },
  apiGateway: {
    source: 'https://aws.amazon.com/api-gateway/pricing/',
    /** REST API, first 333 million requests a month. */
    perRestRequest: 3.5 / 1e6,
  },
  dynamodb: {
    source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
    /** On-demand, after the 2024-11-01 halving. */
    perWriteRequestUnit: 0.625 / 1e6,
    perReadRequestUnit: 0.125 / 1e6,
    perGbMonth: 0.25,
  },
  fargate: {
    source: 'https://aws.amazon.com/fargate/pricing/',
    /** Linux, per hour. */
    onDemand: {
      arm64: { perVcpuHour: 0.03238, perGbHour: 0.00356 },
      x86_64: { perVcpuHour: 0.04048, perGbHour: 0.004445 },
    },
    /** Spot: varies; 70% off on-demand (see above). */
    spotDiscount: 0.7,
  },
  s3: {
    source: 'https://aws.amazon.com/s3/pricing/',
    /** S3 Standard. Tier 1: PUT, COPY, POST, LIST; tier 2: GET, SELECT and the rest; DELETE free. */
    perTier1Request: 0.005 / 1000,
    perTier2Request: 0.0004 / 1000,
    perGbMonth: 0.023,
  },
  vpc: {
    source: 'https://aws.amazon.com/privatelink/pricing/ and https://aws.amazon.com/vpc/pricing/',
    /** An interface endpoint in one AZ, per hour (plus $0.01/GB processed, traffic-driven). */
    interfaceEndpointPerAzHour: 0.01,
    /** Gateway endpoints (S3, DynamoDB) cost nothing. */
    gatewayEndpointPerHour: 0,
    natGatewayPerHour: 0.045,
  },
  elb: {
    source: 'https://aws.amazon.com/elasticloadbalancing/pricing/',
    /** Per load balancer-hour (LCUs are traffic-driven and left out). */
    albPerHour: 0.0225,
    nlbPerHour: 0.0225,
  },
  secretsManager: {
    source: 'https://aws.amazon.com/secrets-manager/pricing/',
    perSecretMonth: 0.4,
  },
  kms: {
    source: 'https://aws.amazon.com/kms/pricing/',
    perKeyMonth: 1,
  },
  cloudwatch: {
    source: 'https://aws.amazon.com/cloudwatch/pricing/',
    perStandardAlarmMonth: 0.1,
  },
} as const;

/** Hours in the month AWS's examples use (365 × 24 / 12). */
export const HOURS_PER_MONTH = 730;

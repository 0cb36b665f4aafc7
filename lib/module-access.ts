import type { ResourceModule } from '../functions/platform/routes.ts';

/**
 * What each resource module's Lambda may touch. One declaration drives both the IAM grants
 * (stateless-stack.ts) and what the bundle leaves out (lambda-bundling.ts), so a module cannot get
 * a permission without the code, or the code without the permission. Typed by ResourceModule: a new
 * entry in MODULES does not type-check until its access is decided here.
 */
export interface ModuleAccess {
  /** The single table and its indexes: TABLE_READ_ACTIONS, or TABLE_ACTIONS for `read-write`. */
  table: 'none' | 'read' | 'read-write';
  /**
   * Secrets Manager under the stage's prefix. `write` creates, replaces and deletes values but
   * cannot read them back (the HTTP API never returns a secret value); `read` is for the run
   * paths that inject secrets, and cannot change them.
   */
  secrets: 'none' | 'read' | 'write' | 'read-write';
  /**
   * The agents' code bundles: the `bundles/` prefix of the bucket, never the rest of it (the
   * sandbox's run objects under `sandbox-inputs/`, which hold a run's secret values, are granted
   * to the run paths alone, by the sandbox cluster). `read` gets them or signs download URLs (which
   * act with this role's s3:GetObject; signing needs no S3 client). `read-write` also puts and
   * deletes them. The prefix also holds large outputs (`bundles/payloads/`, core/payloads/).
   */
  bundles: 'none' | 'read' | 'read-write';
  /**
   * Whether the module calls LLM providers (the Vercel AI SDK and its provider packages). Modules
   * that do not leave the SDK out of their bundles; deps.ts builds the gateway on first use.
   */
  llm?: boolean;
  /**
   * Whether the module runs user code in the sandbox (ECS RunTask in AWS; its adapter also moves
   * run inputs and results through S3). Modules that do not leave the ECS client out.
   */
  sandbox?: boolean;
  /**
   * EventBridge Scheduler: `manage` creates, updates and deletes the schedules of the agenthost
   * group (and may pass the scheduler's invoke role, to that service only); `remove` only deletes
   * them (an auto-disable after a failed run). Modules without it leave the Scheduler client out.
   */
  scheduler?: 'remove' | 'manage';
  /**
   * Alerts to users' webhooks: `send` posts from this function (test alerts); `queue` also hands
   * deliveries to the alert-delivery Lambda (an asynchronous invoke). Modules without it leave the
   * delivery code and the Lambda client out.
   */
  alerts?: 'send' | 'queue';
  /**
   * Whether the module manages always-on services in AWS (ECS services, load balancer rules,
   * scaling targets, CloudWatch log reads). Modules without it leave those clients out.
   */
  services?: boolean;
  /** Whether the module takes payments (Stripe's SDK). Modules without it leave the SDK out. */
  payments?: boolean;
  /**
   * `sweep`: deletes the ECS sandbox's run objects that sessions which never closed left (list
   * their versions, delete them, read none: SandboxCluster.grantSweep). Housekeeping only.
   */
  runObjects?: 'sweep';
  /**
   * Runs (docs/runs.md, "Long runs"): `hand-over` starts runs and hands them to the run worker (an
   * asynchronous invoke of its alias, after recording the run's first steps in the table);
   * `carry` is the run worker itself, a durable function that checkpoints its own executions.
   * Modules without it leave the recorder and the worker's client out.
   */
  runs?: 'hand-over' | 'carry';
}

/**
 * The call path's access, where a call runs and a run ends (the calls function, the run worker):
 * records, counters, leases; models; the sandbox and the declared secrets; bundles and stored
 * outputs; a run's completion webhook queued to the alert-delivery Lambda.
 */
const CALL_ACCESS = {
  table: 'read-write',
  secrets: 'read',
  bundles: 'read-write',
  llm: true,
  sandbox: true,
  alerts: 'queue',
} as const satisfies ModuleAccess;

/** What a path that runs schedules needs: the call path's access, plus the streak's consequences. */
const SCHEDULED_RUN_ACCESS = {
  table: 'read-write',
  secrets: 'read',
  // A code agent's run reads its own bundle (and, on ECS, copies it into the run's inputs); a run's
  // output over 64 KiB is stored apart, under bundles/payloads/ (core/payloads/).
  bundles: 'read-write',
  llm: true,
  sandbox: true,
  scheduler: 'remove',
  alerts: 'queue',
} as const satisfies ModuleAccess;

export const MODULE_ACCESS: Record<ResourceModule, ModuleAccess> = {
  // Answers from constants; its Store is built (config is parsed) but never called.
  health: { table: 'none', secrets: 'none', bundles: 'none' },
  // Builds the document from the route table alone.
  openapi: { table: 'none', secrets: 'none', bundles: 'none' },
  // Keys live in the table; the runs' webhook signing secret in Secrets Manager (made, never read).
  'api-keys': { table: 'read-write', secrets: 'write', bundles: 'none' },
  tasks: { table: 'read-write', secrets: 'none', bundles: 'none' },
  workspaces: { table: 'read-write', secrets: 'none', bundles: 'none' },
  // Listings live in the table, values in Secrets Manager (putSecret, deleteSecret).
  secrets: { table: 'read-write', secrets: 'write', bundles: 'none' },
  // Reads, listings, delete-check, logs and soft deletion: records only.
  agents: { table: 'read-write', secrets: 'none', bundles: 'none' },
  // Publishing, patching, uploading (stores a bundle) and forking (copies one).
  'agent-authoring': { table: 'read-write', secrets: 'none', bundles: 'read-write' },
  // Unauthenticated: reads published records and signs download URLs (which act with this role's
  // s3:GetObject), and can write nothing.
  public: { table: 'read', secrets: 'none', bundles: 'read' },
  // Agent calls: records, quota counters and leases, usage records and log lines; the model
  // call goes to the LLM providers over HTTPS; the sandbox engines read the declared secrets.
  // A code agent's run reads its own bundle; an output too large to answer inline is stored
  // under bundles/payloads/ and answered with a signed URL (core/payloads/output-answer.ts).
  // A run's completion webhook is signed here (the account's signing secret, read) and queued to
  // the alert-delivery Lambda, which sends it.
  calls: { ...CALL_ACCESS, runs: 'hand-over' },
  // Schedule records, timelines, run history, test alerts (sent from here); keeps the
  // EventBridge schedules in step with each record. Reads runs' outputs stored apart (over 64 KiB).
  schedules: { table: 'read-write', secrets: 'none', bundles: 'read', scheduler: 'manage', alerts: 'send' },
  // Runs a schedule now (trigger) or on its webhook: the whole call path, plus the failure streak
  // (an auto-disable removes the EventBridge schedules; alerts are queued).
  'schedule-runs': SCHEDULED_RUN_ACCESS,
  // Always-on services: records, timelines, logs; a deploy checks the secrets' listing records
  // (never a value) and, in AWS, starts ECS services with a signed URL of the bundle.
  services: { table: 'read-write', secrets: 'none', bundles: 'read', services: true },
  // Billing: the ledger, checkouts, Stripe's webhook (and its keys, from one Secrets Manager
  // secret the stack grants read access to separately).
  billing: { table: 'read-write', secrets: 'none', bundles: 'none', payments: true },
  // Usage reports: Queries over call records, reads of memberships and the quota counter.
  usage: { table: 'read', secrets: 'none', bundles: 'none' },
  // The other methods of every path: reads the caller's key, counts keyless requests per address.
  edge: { table: 'read-write', secrets: 'none', bundles: 'none' },
  // MCP: tools/list reads memberships and agent records; tools/call is an agent call, so it needs
  // exactly what `calls` does.
  // Its tasks are runs, handed to the run worker like the calls module's.
  mcp: {
    table: 'read-write',
    secrets: 'read',
    bundles: 'read-write',
    llm: true,
    sandbox: true,
    runs: 'hand-over',
  },
};

/**
 * The non-HTTP functions (functions/jobs/). The fire function runs scheduled slots (the whole call
 * path, the failure streak); alert delivery only POSTs to users' alert URLs.
 */
export const JOB_ACCESS = {
  'schedule-fire': SCHEDULED_RUN_ACCESS,
  'alert-delivery': { table: 'none', secrets: 'none', bundles: 'none', alerts: 'send' },
  // ECS task state changes of the services cluster: the supervision decisions, a pause (desired
  // count 0), and crash-loop alerts.
  // Housekeeping: refunds charges whose calls never completed (the ledger), deletes the bundles of
  // purged agent versions, and the run objects sessions that never closed left.
  housekeeping: { table: 'read-write', secrets: 'none', bundles: 'read-write', runObjects: 'sweep' },
  // The warm runner pool's refill: the pool's records, and sandbox tasks started with the runner
  // (the sandbox cluster grants it RunTask and the pool's prefix only: grantPoolRefill).
  'sandbox-pool': { table: 'read-write', secrets: 'none', bundles: 'none', sandbox: true },
  // The run worker: the whole call path (from a run's recorded steps), a run's completion webhook
  // queued to the alert-delivery Lambda, and its own durable executions' checkpoints.
  'run-worker': { ...CALL_ACCESS, runs: 'carry' },
  'service-events': {
    table: 'read-write',
    secrets: 'none',
    bundles: 'none',
    services: true,
    alerts: 'queue',
  },
} as const satisfies Record<string, ModuleAccess>;

export function moduleAccess(module: string): ModuleAccess {
  const access = (MODULE_ACCESS as Record<string, ModuleAccess | undefined>)[module];
  if (!access) {
    throw new Error(
      `No access declared for module "${module}": add it to MODULE_ACCESS in lib/module-access.ts`,
    );
  }
  return access;
}

/**
 * The DynamoDB actions the Store adapter (functions/adapters/aws/dynamodb-store.ts) needs: Get,
 * Put, Update, Delete, Query, and TransactWriteItems, which IAM authorises per item as
 * Put/Update/Delete/ConditionCheckItem. No Scan (listing is always a Query), no Batch*, no streams.
 * test/cdk/cdk-least-privilege.test.ts checks this list against the commands the adapter sends.
 */
export const TABLE_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:Query',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:ConditionCheckItem',
] as const;

/** Reads only: Get and Query (no write, no ConditionCheckItem). */
export const TABLE_READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:Query'] as const;

/**
 * The Secrets Manager vault (functions/adapters/aws/secrets-manager-vault.ts): putValue is
 * PutSecretValue, or CreateSecret with tags (which needs TagResource); deleteValue is DeleteSecret.
 */
export const SECRETS_WRITE_ACTIONS = [
  'secretsmanager:CreateSecret',
  'secretsmanager:PutSecretValue',
  'secretsmanager:DeleteSecret',
  'secretsmanager:TagResource',
] as const;

/** resolve() is BatchGetSecretValue, which IAM checks as GetSecretValue on every secret it returns. */
export const SECRETS_READ_ACTIONS = ['secretsmanager:GetSecretValue'] as const;

/** The S3 bundle store (functions/adapters/aws/s3-bundle-store.ts): GetObject (also behind signed URLs). */
export const BUNDLE_READ_ACTIONS = ['s3:GetObject'] as const;
/** put and delete: PutObject, DeleteObject. */
export const BUNDLE_WRITE_ACTIONS = ['s3:PutObject', 's3:DeleteObject'] as const;

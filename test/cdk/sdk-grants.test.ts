import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { MODULES } from '../../functions/platform/routes.ts';
import { addAgenthostStacks } from '../../lib/agenthost-app.ts';
import { type PlatformFunction, PROJECT_ROOT } from '../../lib/constructs/platform-function.ts';
import { cachedBuildSync } from '../../lib/esbuild-cache.ts';
import { esbuildBuildOptions } from '../../lib/lambda-bundling.ts';
import { JOB_ACCESS, MODULE_ACCESS, type ModuleAccess } from '../../lib/module-access.ts';
import { foldedTemplate } from '../helpers/folded-template.ts';
import { templatesApp } from '../helpers/synthesized-stacks.ts';

/**
 * Every AWS SDK command a function can send has an IAM grant in the synthesized template. For each
 * Lambda, the files of its bundle (esbuild's metafile, lazily loaded chunks included: what the
 * function can run) are scanned for `new <Name>Command(` with the client package each name is
 * imported from, and each command's IAM actions must be among the actions its role is granted.
 * A command added to an adapter without its grant fails here instead of on the first deploy.
 *
 * Resource scoping (which table, prefix or secret) is checked by test/cdk/cdk-least-privilege.test.ts; this test is
 * about actions. The DynamoDB store is built by every Lambda, so what a module may send to it
 * follows its declared table access (`none`: the module never calls it).
 */

/** IAM's service prefix for each SDK package. */
const PREFIX: Record<string, string> = {
  '@aws-sdk/client-dynamodb': 'dynamodb',
  '@aws-sdk/lib-dynamodb': 'dynamodb',
  '@aws-sdk/client-s3': 's3',
  '@aws-sdk/client-secrets-manager': 'secretsmanager',
  '@aws-sdk/client-ecs': 'ecs',
  '@aws-sdk/client-elastic-load-balancing-v2': 'elasticloadbalancing',
  '@aws-sdk/client-application-auto-scaling': 'application-autoscaling',
  '@aws-sdk/client-cloudwatch-logs': 'logs',
  '@aws-sdk/client-scheduler': 'scheduler',
  '@aws-sdk/client-lambda': 'lambda',
};

/** Commands whose IAM actions are not simply `<prefix>:<Name>` (the Service Authorization Reference). */
const ACTIONS: Record<string, string[]> = {
  // The document client's commands are the table's item actions.
  'dynamodb:Get': ['dynamodb:GetItem'],
  'dynamodb:Put': ['dynamodb:PutItem'],
  'dynamodb:Update': ['dynamodb:UpdateItem'],
  'dynamodb:Delete': ['dynamodb:DeleteItem'],
  'dynamodb:Query': ['dynamodb:Query'],
  // Authorised per item, as the item's own action.
  'dynamodb:TransactWrite': [
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:DeleteItem',
    'dynamodb:ConditionCheckItem',
  ],
  // Authorised per key as DeleteObject (DeleteObjectVersion for a version, which the sandbox deletes).
  's3:DeleteObjects': ['s3:DeleteObject', 's3:DeleteObjectVersion'],
  // Listing a bucket's versions is the bucket's s3:ListBucketVersions.
  's3:ListObjectVersions': ['s3:ListBucketVersions'],
  // Each returned secret is also checked against GetSecretValue.
  'secretsmanager:BatchGetSecretValue': [
    'secretsmanager:BatchGetSecretValue',
    'secretsmanager:GetSecretValue',
  ],
  'lambda:Invoke': ['lambda:InvokeFunction'],
};

/**
 * Adapters every module of a kind builds, whose commands a module may send only as its declared
 * access allows: the store (every Lambda), the vault (every module with Secrets Manager access;
 * `secrets` only writes values, the run paths only read them) and the scheduler.
 */
const STORE_FILE = 'functions/adapters/aws/dynamodb-store.ts';
const STORE_READS = new Set(['dynamodb:GetItem', 'dynamodb:Query']);
const VAULT_FILE = 'functions/adapters/aws/secrets-manager-vault.ts';
const VAULT_READS = new Set(['secretsmanager:BatchGetSecretValue', 'secretsmanager:GetSecretValue']);
/** The run paths only delete schedules (an auto-disable): `scheduler: 'remove'`. */
const SCHEDULER_FILE = 'functions/adapters/aws/eventbridge-scheduler.ts';

/** The IAM actions of the SDK commands constructed in one of our source files. */
function commandActions(file: string): string[] {
  const text = readFileSync(join(PROJECT_ROOT, file), 'utf8');
  const packageOf = new Map<string, string>();
  const bind = (names: string, pkg: string) => {
    for (const name of names.split(',')) {
      const local = name
        .replace(/\btype\b/, '')
        .trim()
        .split(/\s+as\s+|\s*:\s*/)
        .pop();
      if (local) packageOf.set(local, pkg);
    }
  };
  // Static imports, and the adapters' lazy ones: `const { X } = await import('pkg')`, or through
  // a loader `const sdk = () => import('pkg')` … `const { X } = await sdk()`.
  for (const m of text.matchAll(/import\s*\{([^}]*)\}\s*from\s*'(@aws-sdk\/[^']+)'/g)) {
    bind(m[1] as string, m[2] as string);
  }
  const loaders = new Map<string, string>();
  for (const m of text.matchAll(/const\s+(\w+)\s*=\s*\(\)\s*=>\s*import\(\s*'(@aws-sdk\/[^']+)'\s*\)/g)) {
    loaders.set(m[1] as string, m[2] as string);
  }
  for (const m of text.matchAll(
    /const\s*\{([^}]*)\}\s*=\s*await\s+(?:import\(\s*'(@aws-sdk\/[^']+)'\s*\)|(\w+)\(\))/g,
  )) {
    const pkg = m[2] ?? loaders.get(m[3] as string);
    if (pkg) bind(m[1] as string, pkg);
  }
  const actions: string[] = [];
  for (const m of text.matchAll(/new\s+([A-Za-z0-9]+)Command\s*\(/g)) {
    const pkg = packageOf.get(`${m[1]}Command`);
    assert.ok(pkg, `${file}: ${m[1]}Command is not imported from an @aws-sdk package`);
    const prefix = PREFIX[pkg];
    assert.ok(prefix, `${file}: add the IAM prefix of ${pkg} to this test`);
    const key = `${prefix}:${m[1]}`;
    actions.push(...(ACTIONS[key] ?? [key]));
  }
  return [...new Set(actions)];
}

/** Our source files in the function's bundle as deployed (lib/esbuild-cache.ts), every chunk included. */
async function bundledSources(entry: string, access: ModuleAccess): Promise<string[]> {
  const result = cachedBuildSync({
    ...esbuildBuildOptions(access, join(PROJECT_ROOT, entry), 'out'),
    logLevel: 'silent',
    absWorkingDir: PROJECT_ROOT,
  });
  return Object.keys(result.metafile.inputs).filter((f) => f.startsWith('functions/'));
}

const outdir = mkdtempSync(join(tmpdir(), 'agenthost-sdk-grants-'));
after(() => rmSync(outdir, { recursive: true, force: true }));

describe('every AWS SDK command a function can send is granted to its role', () => {
  // Grants only: no bundling needed to read the template.
  const app = templatesApp(outdir);
  const { stateless } = addAgenthostStacks(app, {
    services: {
      domain: 'services.example.com',
      certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b',
    },
  });
  // The sandbox's and the operations' nested stacks folded in (the refill and housekeeping are there).
  const template = foldedTemplate(stateless).toJSON() as {
    Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
  };

  /** Every action granted to the role (wildcards kept as patterns). */
  const grantedTo = (fn: PlatformFunction): string[] => {
    const role = stateless.getLogicalId(fn.role.node.defaultChild as never);
    return Object.values(template.Resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .filter((r) => (r.Properties.Roles as { Ref: string }[]).some((x) => x.Ref === role))
      .flatMap(
        (r) => (r.Properties.PolicyDocument as { Statement: { Action: string | string[] }[] }).Statement,
      )
      .flatMap((st) => (Array.isArray(st.Action) ? st.Action : [st.Action]));
  };
  const allows = (granted: string[], action: string) =>
    granted.some((g) =>
      new RegExp(`^${g.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`).test(action),
    );

  const services = stateless.services;
  assert.ok(services, 'synthesized with always-on services');
  const functions: [string, PlatformFunction, string, ModuleAccess][] = [
    ...MODULES.map((m): [string, PlatformFunction, string, ModuleAccess] => [
      m,
      stateless.functions[m],
      `functions/http/${m}.ts`,
      MODULE_ACCESS[m],
    ]),
    [
      'schedule-fire',
      stateless.schedules.fireFunction,
      'functions/jobs/schedule-fire.ts',
      JOB_ACCESS['schedule-fire'],
    ],
    [
      'alert-delivery',
      stateless.schedules.alertsFunction,
      'functions/jobs/alert-delivery.ts',
      JOB_ACCESS['alert-delivery'],
    ],
    [
      'housekeeping',
      stateless.billing.housekeepingFunction,
      'functions/jobs/housekeeping.ts',
      JOB_ACCESS.housekeeping,
    ],
    [
      'service-events',
      services.eventsFunction,
      'functions/jobs/service-events.ts',
      JOB_ACCESS['service-events'],
    ],
  ];

  test('the scan finds the commands (the adapters’ own lists)', () => {
    assert.deepEqual(commandActions('functions/adapters/aws/lambda-notifier.ts'), ['lambda:InvokeFunction']);
    assert.ok(commandActions(STORE_FILE).includes('dynamodb:ConditionCheckItem'));
    assert.ok(commandActions('functions/adapters/aws/ecs-sandbox-task.ts').includes('ecs:RunTask'));
  });

  for (const [name, fn, entry, access] of functions) {
    test(name, async (t) => {
      const granted = grantedTo(fn);
      const missing: string[] = [];
      const sources = await bundledSources(entry, access);
      for (const file of sources) {
        let actions = commandActions(file);
        if (file === STORE_FILE) {
          if (access.table === 'none') continue;
          if (access.table === 'read') actions = actions.filter((a) => STORE_READS.has(a));
        }
        if (file === VAULT_FILE) {
          if (access.secrets === 'read') actions = actions.filter((a) => VAULT_READS.has(a));
          if (access.secrets === 'write') actions = actions.filter((a) => !VAULT_READS.has(a));
        }
        if (file === SCHEDULER_FILE && access.scheduler === 'remove') {
          actions = actions.filter((a) => a === 'scheduler:DeleteSchedule');
        }
        for (const action of actions) if (!allows(granted, action)) missing.push(`${action} (${file})`);
      }
      t.diagnostic(
        `${sources.filter((f) => f.startsWith('functions/adapters/aws/')).length} AWS adapter files in its bundle`,
      );
      assert.deepEqual(missing, [], `${name} can send commands its role is not granted`);
    });
  }
});

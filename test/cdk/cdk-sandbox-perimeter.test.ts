/**
 * The sandbox reaches only its own objects. Tried from the other side, on the
 * synthesized templates: a sandboxed command that brought keys of another account sends what it
 * holds through each interface endpoint of the sandbox VPC, to its own account's log groups and
 * registries, and the endpoint's policy (as AWS would evaluate it: @cloud-copilot/iam-simulate, an
 * outside IAM simulator) refuses it, while Fargate's agent pulling the image and shipping the
 * runner's lines with the execution role is let through. The DNS Firewall resolves the names the
 * real SDK and ECR put in the task's requests and answers any other NXDOMAIN; `-c
 * sandboxDnsFirewall=off` leaves it out. No AWS account reaches these templates here, so the
 * policies are judged by the simulator, the names by DNS Firewall's documented matching.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { runSimulation } from '@cloud-copilot/iam-simulate';
import { Template } from 'aws-cdk-lib/assertions';
import { addAgenthostStacks } from '../../lib/agenthost-app.ts';
import { SANDBOX_ENDPOINT_ACTIONS } from '../../lib/constructs/sandbox-endpoint-policy.ts';
import { foldedTemplate } from '../helpers/folded-template.ts';
import { templatesApp } from '../helpers/synthesized-stacks.ts';

const outdir = mkdtempSync(join(tmpdir(), 'agenthost-cdk-perimeter-'));
after(() => rmSync(outdir, { recursive: true, force: true }));

const OURS = '111122223333';
const THEIRS = '999988887777';
const REGION = 'us-east-1';

/** A template value with the pseudo parameters of a deployment in OURS and REGION put in. */
function resolve(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(resolve);
  if (value && typeof value === 'object') {
    const v = value as Record<string, unknown>;
    if (v.Ref === 'AWS::AccountId') return OURS;
    if (v.Ref === 'AWS::Region') return REGION;
    if (v.Ref === 'AWS::Partition') return 'aws';
    if (v.Ref === 'AWS::URLSuffix') return 'amazonaws.com';
    if (Array.isArray(v['Fn::Join'])) {
      const [sep, parts] = v['Fn::Join'] as [string, unknown[]];
      return (parts.map(resolve) as string[]).join(sep);
    }
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolve(x)]));
  }
  return value;
}

function stateless(context: Record<string, string> = {}) {
  const app = templatesApp(outdir);
  const { stateless } = addAgenthostStacks(app, context);
  return foldedTemplate(stateless);
}

type Resource = { Properties: Record<string, unknown> };

function interfaceEndpointPolicies(template: Template): Map<string, unknown> {
  const endpoints = template.findResources('AWS::EC2::VPCEndpoint') as Record<string, Resource>;
  const policies = new Map<string, unknown>();
  for (const [id, e] of Object.entries(endpoints)) {
    if (e.Properties.VpcEndpointType !== 'Interface') continue;
    policies.set(id, resolve(e.Properties.PolicyDocument));
  }
  return policies;
}

/** What IAM decides for `principal` doing `action` on `resource` through the endpoint with `policy`. */
async function decide(
  policy: unknown,
  principal: string,
  action: string,
  resource: string,
  resourceAccount: string,
) {
  const result = await runSimulation(
    {
      request: {
        principal,
        action,
        resource: { resource, accountId: resourceAccount },
        // What AWS puts in every such request's context (the simulator takes it as given): the
        // caller's account, and the resource's, for an action on a resource.
        contextVariables: {
          'aws:PrincipalAccount': principal.split(':')[4] as string,
          ...(resource === '*' ? {} : { 'aws:ResourceAccount': resourceAccount }),
        },
      },
      // The principal's own policies allow it everything: only the endpoint can stop it.
      identityPolicies: [
        {
          name: 'everything',
          policy: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: '*', Resource: '*' }] },
        },
      ],
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      resourcePolicy: undefined,
      vpcEndpointPolicies: [{ name: 'endpoint', policy }],
    },
    {},
  );
  if (result.resultType === 'error') assert.fail(JSON.stringify(result.errors));
  assert.equal(result.resultType, 'single', 'one resource, one evaluation');
  if (result.resultType !== 'single') return undefined;
  assert.deepEqual(result.result.ignoredContextKeys, [], 'every key given applies to the request');
  return result.overallResult;
}

const logGroup = (account: string) => `arn:aws:logs:${REGION}:${account}:log-group:exfil:log-stream:x`;
const repository = (account: string) => `arn:aws:ecr:${REGION}:${account}:repository/exfil`;

describe('the sandbox VPC’s interface endpoints: this account’s principals on this account’s resources', () => {
  const policies = interfaceEndpointPolicies(stateless());

  test('every interface endpoint has a policy', () => {
    assert.equal(policies.size, 3);
    for (const [id, policy] of policies) assert.ok(policy, `${id} has a policy document`);
  });

  test('keys of another account reach neither that account’s nor ours through any endpoint', async () => {
    const theirs = `arn:aws:iam::${THEIRS}:user/author`;
    for (const [id, policy] of policies) {
      for (const [action, resource] of [
        ['logs:PutLogEvents', logGroup],
        ['logs:CreateLogStream', logGroup],
        ['ecr:InitiateLayerUpload', repository],
        ['ecr:PutImage', repository],
        ['ecr:BatchGetImage', repository],
      ] as const) {
        for (const account of [THEIRS, OURS]) {
          assert.notEqual(
            await decide(policy, theirs, action, resource(account), account),
            'Allowed',
            `${id}: ${action} by ${THEIRS} on ${account}'s`,
          );
        }
      }
    }
  });

  test('the deployment’s own role reaches no other account’s resources through them', async () => {
    const ours = `arn:aws:iam::${OURS}:role/execution`;
    for (const [id, policy] of policies) {
      assert.notEqual(
        await decide(policy, ours, 'logs:PutLogEvents', logGroup(THEIRS), THEIRS),
        'Allowed',
        id,
      );
      assert.notEqual(
        await decide(policy, ours, 'ecr:BatchGetImage', repository(THEIRS), THEIRS),
        'Allowed',
        id,
      );
    }
  });

  test('Fargate’s agent, with the execution role, pulls the image and ships the runner’s lines', async () => {
    const ours = `arn:aws:iam::${OURS}:role/execution`;
    const allowedSomewhere = async (action: string, resource: string) => {
      const decisions = await Promise.all(
        [...policies.values()].map((p) => decide(p, ours, action, resource, OURS)),
      );
      return decisions.includes('Allowed');
    };
    // GetAuthorizationToken names no resource: IAM takes only "*" for it (in the caller's account).
    for (const action of SANDBOX_ENDPOINT_ACTIONS.ecr)
      assert.ok(
        await allowedSomewhere(action, action === 'ecr:GetAuthorizationToken' ? '*' : repository(OURS)),
        action,
      );
    for (const action of SANDBOX_ENDPOINT_ACTIONS.logs)
      assert.ok(await allowedSomewhere(action, logGroup(OURS)), action);
    // Only what the agent does: no push to our registry, no reading our logs back.
    for (const [id, policy] of policies) {
      assert.notEqual(await decide(policy, ours, 'ecr:PutImage', repository(OURS), OURS), 'Allowed', id);
      assert.notEqual(await decide(policy, ours, 'logs:GetLogEvents', logGroup(OURS), OURS), 'Allowed', id);
    }
  });
});

/** DNS Firewall's matching: `*.example.com` is any name under example.com; else the name itself. */
function matches(list: string[], name: string): boolean {
  const n = name.toLowerCase().replace(/\.$/, '');
  return list.some((d) => (d.startsWith('*.') ? n.endsWith(d.slice(1)) : n === d));
}

type Rule = { Priority: number; Action: string; BlockResponse?: string; FirewallDomainListId: unknown };

/** The firewall of a template: its rules by priority, each with its list's names, and its associations. */
function firewallOf(template: Template) {
  const lists = template.findResources('AWS::Route53Resolver::FirewallDomainList') as Record<
    string,
    Resource
  >;
  const groups = Object.values(
    template.findResources('AWS::Route53Resolver::FirewallRuleGroup'),
  ) as Resource[];
  const associations = Object.values(
    template.findResources('AWS::Route53Resolver::FirewallRuleGroupAssociation'),
  ) as Resource[];
  const rules = groups
    .flatMap((g) => (g.Properties.FirewallRules ?? []) as Rule[])
    .sort((a, b) => a.Priority - b.Priority)
    .map((rule) => {
      const [listId] = (rule.FirewallDomainListId as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'];
      return { ...rule, domains: resolve(lists[listId]?.Properties.Domains) as string[] };
    });
  return { lists: Object.keys(lists).length, groups: groups.length, associations, rules };
}

describe('the sandbox VPC’s DNS Firewall: the names a task needs, NXDOMAIN for any other', () => {
  test('allows the listed names first, blocks every other, on the sandbox VPC', () => {
    const template = stateless();
    const { groups, associations, rules } = firewallOf(template);
    assert.equal(groups, 1);
    assert.equal(associations.length, 1);
    const vpcs = Object.keys(template.findResources('AWS::EC2::VPC'));
    assert.deepEqual(associations[0]?.Properties.VpcId, { Ref: vpcs[0] }, 'associated with the sandbox VPC');
    assert.deepEqual(
      rules.map((r) => [r.Action, r.BlockResponse]),
      [
        ['ALLOW', undefined],
        ['BLOCK', 'NXDOMAIN'],
      ],
    );
    assert.deepEqual(rules[1]?.domains, ['*'], 'the last rule blocks every name');
  });

  test('the names in a task’s requests resolve; a name that carries data to another server does not', async () => {
    const allowed = firewallOf(stateless()).rules.find((r) => r.Action === 'ALLOW')?.domains ?? [];
    // The hosts the runner's presigned URLs name, as the SDK the calls function uses signs them.
    const s3 = new S3Client({
      region: REGION,
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'x' },
    });
    const signed = await getSignedUrl(
      s3,
      new GetObjectCommand({ Bucket: 'agenthost-bundles-abc', Key: 'k' }),
    );
    const needed = [
      new URL(signed).hostname,
      `prod-${REGION}-starport-layer-bucket.s3.${REGION}.amazonaws.com`,
      `api.ecr.${REGION}.amazonaws.com`,
      `${OURS}.dkr.ecr.${REGION}.amazonaws.com`,
      `logs.${REGION}.amazonaws.com`,
    ];
    for (const name of needed) assert.ok(matches(allowed, name), `${name} resolves`);
    for (const name of [
      'c2VjcmV0.attacker.example',
      'c2VjcmV0.amazonaws.com.attacker.example',
      'sts.amazonaws.com',
      `sts.${REGION}.amazonaws.com`,
      `secretsmanager.${REGION}.amazonaws.com`,
      'registry.npmjs.org',
    ])
      assert.ok(!matches(allowed, name), `${name} is blocked`);
  });

  test('-c sandboxDnsFirewall=off leaves it out; any other value fails the synthesis', () => {
    const off = firewallOf(stateless({ sandboxDnsFirewall: 'off' }));
    assert.equal(off.groups + off.associations.length + off.lists, 0);
    assert.throws(() => stateless({ sandboxDnsFirewall: 'maybe' }), /sandboxDnsFirewall must be on or off/);
  });
});

describe('the bundle bucket’s policy: a run’s inputs are read through a VPC endpoint only', () => {
  const app = templatesApp(outdir);
  const { stateful } = addAgenthostStacks(app);
  const template = Template.fromStack(stateful);
  const bucketId = stateful.getLogicalId(stateful.bundleBucket.node.defaultChild as never);
  const BUCKET = 'agenthost-bundles-abc';
  /** The bucket's policy, with its own ARN and the pseudo parameters put in. */
  const policy = (() => {
    const [p] = Object.values(template.findResources('AWS::S3::BucketPolicy')).filter(
      (r) => JSON.stringify(r.Properties.Bucket) === JSON.stringify({ Ref: bucketId }),
    ) as Resource[];
    const text = JSON.stringify(p?.Properties.PolicyDocument).replaceAll(
      JSON.stringify({ 'Fn::GetAtt': [bucketId, 'Arn'] }),
      JSON.stringify(`arn:aws:s3:::${BUCKET}`),
    );
    return resolve(JSON.parse(text));
  })();

  /** IAM's decision for a principal of this account whose own policy allows every S3 read. */
  const read = async (key: string, context: Record<string, string>) => {
    const principal = `arn:aws:iam::${OURS}:role/ReadOnlyAuditor`;
    const result = await runSimulation(
      {
        request: {
          principal,
          action: 's3:GetObject',
          resource: { resource: `arn:aws:s3:::${BUCKET}/${key}`, accountId: OURS },
          contextVariables: {
            'aws:PrincipalAccount': OURS,
            'aws:ResourceAccount': OURS,
            'aws:SecureTransport': 'true',
            ...context,
          },
        },
        // AWS's ReadOnlyAccess allows s3:Get* on every resource.
        identityPolicies: [
          {
            name: 'read-only',
            policy: {
              Version: '2012-10-17',
              Statement: [{ Effect: 'Allow', Action: 's3:Get*', Resource: '*' }],
            },
          },
        ],
        serviceControlPolicies: [],
        resourceControlPolicies: [],
        resourcePolicy: policy as never,
        vpcEndpointPolicies: [],
      },
      {},
    );
    if (result.resultType !== 'single') assert.fail(JSON.stringify(result));
    return result.overallResult;
  };

  test('a run’s manifest or a warm runner’s claim, read from outside any VPC endpoint, is refused', async () => {
    for (const key of ['sandbox-inputs/run-1/run.json', 'sandbox-inputs/pool/wr-1/claim-3.json']) {
      assert.equal(await read(key, {}), 'ExplicitlyDenied', key);
    }
  });

  test('through the sandbox’s endpoint it is read; the bundle bucket’s other objects are not touched', async () => {
    assert.equal(
      await read('sandbox-inputs/run-1/run.json', { 'aws:SourceVpce': 'vpce-0a1b2c3d' }),
      'Allowed',
    );
    assert.equal(await read('bundles/ws/agv/1.tar.gz', {}), 'Allowed');
    assert.equal(await read('sandbox-results/run-1/exec-1.json', {}), 'Allowed');
  });
});

describe('the run inputs’ KMS key: its use granted to the roles that run sandboxes only', () => {
  const template = stateless();
  const keys = Object.entries(template.findResources('AWS::KMS::Key') as Record<string, Resource>);
  const [keyId, key] = keys.find(([id]) => id.includes('RunInputsKey')) ?? [];
  const mentionsKey = (value: unknown) => keyId !== undefined && JSON.stringify(value).includes(`"${keyId}"`);
  const roleRef = (value: unknown) => (value as { Ref?: string }).Ref;
  const functions = Object.values(
    template.findResources('AWS::Lambda::Function') as Record<string, Resource>,
  );
  /** The roles of the functions the stack gives the sandbox (they start tasks and sign their URLs). */
  const runRoles = new Set(
    functions
      .filter((f) => {
        const vars = (f.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)
          ?.Variables;
        return vars?.PLATFORM_SANDBOX_CLUSTER !== undefined;
      })
      .map((f) => (f.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0]),
  );
  const executionRole = Object.keys(template.findResources('AWS::IAM::Role')).find((id) =>
    /SandboxExecutionRole/.test(id),
  );
  /** Role → the KMS actions its policies allow on the key. */
  const grants = new Map<string, Set<string>>();
  for (const policy of Object.values(
    template.findResources('AWS::IAM::Policy') as Record<string, Resource>,
  )) {
    const doc = policy.Properties.PolicyDocument as {
      Statement: { Action: string | string[]; Resource: unknown }[];
    };
    for (const statement of doc.Statement) {
      if (!mentionsKey(statement.Resource)) continue;
      for (const role of (policy.Properties.Roles as unknown[]).map(roleRef)) {
        const set = grants.get(String(role)) ?? new Set<string>();
        for (const a of [statement.Action].flat()) set.add(a);
        grants.set(String(role), set);
      }
    }
  }

  test('a key of the app, rotated; its policy names no principal but the account (IAM decides)', () => {
    assert.ok(key, `a RunInputsKey among ${keys.map(([id]) => id).join(', ')}`);
    assert.equal(key.Properties.EnableKeyRotation, true);
    const statements = (key.Properties.KeyPolicy as { Statement: { Principal: unknown }[] }).Statement;
    for (const s of statements) assert.match(JSON.stringify(s.Principal), /:root"/);
  });

  test('only the run roles may write and read under it, and the execution role only decrypt (its env file)', () => {
    assert.ok(runRoles.size >= 2, 'the calls path and the pool refill run sandboxes');
    assert.ok(executionRole);
    assert.deepEqual([...grants.keys()].sort(), [...runRoles, executionRole].sort());
    for (const role of runRoles)
      assert.deepEqual([...(grants.get(role) ?? [])].sort(), ['kms:Decrypt', 'kms:GenerateDataKey']);
    assert.deepEqual([...(grants.get(executionRole) ?? [])], ['kms:Decrypt']);
    for (const f of functions) {
      const vars = (f.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)
        ?.Variables;
      if (vars?.PLATFORM_SANDBOX_CLUSTER === undefined) continue;
      assert.deepEqual(vars.PLATFORM_SANDBOX_INPUTS_KEY, { 'Fn::GetAtt': [keyId, 'Arn'] });
    }
  });

  test('the execution role reads the task’s env file and nothing else of the bucket', () => {
    const s3Statements = Object.values(template.findResources('AWS::IAM::Policy') as Record<string, Resource>)
      .filter((p) => (p.Properties.Roles as unknown[]).map(roleRef).includes(executionRole))
      .flatMap(
        (p) =>
          (p.Properties.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] })
            .Statement,
      )
      .filter((s) => [s.Action].flat().some((a) => a.startsWith('s3:')));
    const objects = s3Statements.filter((s) => [s.Action].flat().includes('s3:GetObject'));
    assert.equal(objects.length, 1);
    assert.match(JSON.stringify(objects[0]?.Resource), /\/sandbox-inputs\/\*\/task\.env"/);
  });

  test('AWS’s ReadOnlyAccess cannot decrypt a manifest; a run role can', async () => {
    const keyArn = `arn:aws:kms:${REGION}:${OURS}:key/0b7e0000-0000-4000-8000-000000000001`;
    const keyPolicy = resolve(key?.Properties.KeyPolicy);
    const decrypt = async (statement: { Action: string | string[] }) => {
      const result = await runSimulation(
        {
          request: {
            principal: `arn:aws:iam::${OURS}:role/Someone`,
            action: 'kms:Decrypt',
            resource: { resource: keyArn, accountId: OURS },
            contextVariables: { 'aws:PrincipalAccount': OURS, 'aws:ResourceAccount': OURS },
          },
          identityPolicies: [
            {
              name: 'own',
              policy: {
                Version: '2012-10-17',
                Statement: [{ Effect: 'Allow', Resource: '*', ...statement }],
              },
            },
          ],
          serviceControlPolicies: [],
          resourceControlPolicies: [],
          resourcePolicy: keyPolicy as never,
          vpcEndpointPolicies: [],
        },
        {},
      );
      if (result.resultType !== 'single') assert.fail(JSON.stringify(result));
      return result.overallResult;
    };
    // ReadOnlyAccess's KMS actions.
    assert.notEqual(await decrypt({ Action: ['kms:Describe*', 'kms:Get*', 'kms:List*'] }), 'Allowed');
    assert.equal(await decrypt({ Action: ['kms:Decrypt', 'kms:GenerateDataKey'] }), 'Allowed');
  });
});

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { addAgenthostStacks } from '../../lib/agenthost-app.ts';
import { WAF_MANAGED_GROUPS, WAF_RATE_PER_ADDRESS } from '../../lib/constructs/api-waf.ts';
import { foldedTemplate } from '../helpers/folded-template.ts';
import { templatesApp } from '../helpers/synthesized-stacks.ts';

/**
 * `-c waf=on`: an AWS WAF web ACL with AWS's managed rule groups and a
 * rate-based rule per source address in front of the API stage, so that what it refuses costs no
 * function and no table write. Synthesized with cdk-nag's checks on, which fail the synthesis on
 * any finding not acknowledged: with the web ACL, the stage's "no WAF" finding (APIG3) is met,
 * not acknowledged. Bundling is skipped: only the templates matter.
 */

const outdir = mkdtempSync(join(tmpdir(), 'agenthost-cdk-waf-'));
after(() => rmSync(outdir, { recursive: true, force: true }));

type Resource = { Properties: Record<string, unknown> };

function synthesized(waf?: string) {
  const app = templatesApp(outdir);
  const { stateless } = addAgenthostStacks(app, waf ? { waf } : {});
  app.synth(); // runs cdk-nag: an unacknowledged finding throws
  return foldedTemplate(stateless);
}

describe('stateless stack: -c waf=on puts a web ACL in front of the API stage', () => {
  test('a regional web ACL: a rate per address, then AWS’s managed groups, associated with the stage', () => {
    const template = synthesized('on');
    const acls = Object.values(template.findResources('AWS::WAFv2::WebACL')) as Resource[];
    assert.equal(acls.length, 1);
    const acl = acls[0]?.Properties as {
      Scope: string;
      DefaultAction: unknown;
      Rules: Record<string, unknown>[];
    };
    assert.equal(acl.Scope, 'REGIONAL');
    assert.deepEqual(acl.DefaultAction, { Allow: {} });
    const rules = [...acl.Rules].sort((a, b) => (a.Priority as number) - (b.Priority as number));
    assert.deepEqual(rules[0]?.Statement, {
      RateBasedStatement: { Limit: WAF_RATE_PER_ADDRESS, AggregateKeyType: 'IP' },
    });
    assert.deepEqual(rules[0]?.Action, { Block: {} });
    assert.deepEqual(
      rules
        .slice(1)
        .map(
          (r) =>
            (r.Statement as { ManagedRuleGroupStatement: { Name: string } }).ManagedRuleGroupStatement.Name,
        ),
      [...WAF_MANAGED_GROUPS],
    );
    const associations = Object.values(template.findResources('AWS::WAFv2::WebACLAssociation')) as Resource[];
    assert.equal(associations.length, 1);
    const stageId = Object.keys(template.findResources('AWS::ApiGateway::Stage'))[0] as string;
    assert.match(
      JSON.stringify(associations[0]?.Properties.ResourceArn),
      new RegExp(`"${stageId}"`),
      'the API stage',
    );
  });

  test('off by default, and anything but on or off fails the synthesis', () => {
    const template = synthesized();
    assert.equal(Object.keys(template.findResources('AWS::WAFv2::WebACL')).length, 0);
    assert.throws(() => synthesized('yes'), /waf must be on or off/);
  });
});

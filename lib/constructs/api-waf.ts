import { Stack } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';

/** Requests from one source address in any five minutes past which the web ACL blocks it. */
export const WAF_RATE_PER_ADDRESS = 2_000;

/** AWS's managed rule groups the web ACL runs, in order: each named in its rules and metrics. */
export const WAF_MANAGED_GROUPS = [
  // Addresses Amazon's threat intelligence has seen in attacks or reconnaissance.
  'AWSManagedRulesAmazonIpReputationList',
  // Request patterns known to be bad (exploits of Log4j, Java deserialization, localhost hosts).
  'AWSManagedRulesKnownBadInputsRuleSet',
  // OWASP's common attacks on web applications; its body-size rule is counted, not blocked, since
  // agent bundles and call bodies are larger than its 8 KB (the API's own limits apply).
  'AWSManagedRulesCommonRuleSet',
] as const;

export interface ApiWafProps {
  /** The API whose deployment stage the web ACL fronts. */
  api: apigateway.RestApi;
}

/**
 * `-c waf=on` (docs/deploy.md, "Context values"): an AWS WAF web ACL in front of the API stage, so
 * that what it refuses never reaches a function or the table: AWS's managed rule groups above, and
 * a rate-based rule per source address (WAF_RATE_PER_ADDRESS in five minutes). An unauthenticated
 * flood otherwise costs a Lambda invocation and a DynamoDB write per request before it is refused.
 * Billed per web ACL ($5 a month), per rule ($1 a month each, four here) and per million requests
 * ($0.60), so it is off by default; the stage throttle and the functions' per-account rates hold
 * either way.
 */
export class ApiWaf extends Construct {
  readonly webAcl: wafv2.CfnWebACL;

  constructor(scope: Construct, id: string, props: ApiWafProps) {
    super(scope, id);
    const name = (suffix: string) => `${Stack.of(this).stackName}-${suffix}`.slice(0, 128);
    const visibility = (metric: string) => ({
      cloudWatchMetricsEnabled: true,
      metricName: metric,
      sampledRequestsEnabled: true,
    });
    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: visibility(name('api')),
      rules: [
        {
          name: 'RatePerAddress',
          priority: 0,
          action: { block: {} },
          statement: { rateBasedStatement: { limit: WAF_RATE_PER_ADDRESS, aggregateKeyType: 'IP' } },
          visibilityConfig: visibility('RatePerAddress'),
        },
        ...WAF_MANAGED_GROUPS.map((group, i) => ({
          name: group,
          priority: i + 1,
          overrideAction: { none: {} },
          statement: {
            managedRuleGroupStatement: {
              vendorName: 'AWS',
              name: group,
              ...(group === 'AWSManagedRulesCommonRuleSet'
                ? { ruleActionOverrides: [{ name: 'SizeRestrictions_BODY', actionToUse: { count: {} } }] }
                : {}),
            },
          },
          visibilityConfig: visibility(group),
        })),
      ],
    });
    new wafv2.CfnWebACLAssociation(this, 'Association', {
      resourceArn: props.api.deploymentStage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
  }
}

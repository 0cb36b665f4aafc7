import { Stack } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as route53resolver from 'aws-cdk-lib/aws-route53resolver';
import { Construct } from 'constructs';

/**
 * The names a sandbox task resolves: its runner's image (ECR's API and registry), its log lines
 * (CloudWatch Logs) and its objects and image layers (S3, virtual-hosted: `<bucket>.s3.<region>`).
 * Each answers from an AWS endpoint in the VPC or through the S3 gateway endpoint; a name under
 * them carries nothing to anyone but AWS's own name servers.
 */
export function sandboxResolvableNames(region: string): string[] {
  return [
    `api.ecr.${region}.amazonaws.com`,
    `*.dkr.ecr.${region}.amazonaws.com`,
    `logs.${region}.amazonaws.com`,
    `s3.${region}.amazonaws.com`,
    `*.s3.${region}.amazonaws.com`,
  ];
}

export interface SandboxDnsFirewallProps {
  vpc: ec2.IVpc;
}

/**
 * A Route 53 Resolver DNS Firewall on the sandbox VPC: its tasks resolve the names of
 * `sandboxResolvableNames` and no other. Without it, code in a sandbox that reaches no address
 * outside the VPC can still send what it holds out through the VPC's resolver, in the names it
 * looks up (`<a caller's secret>.attacker.example`), to the name server of any domain; a blocked
 * lookup is answered NXDOMAIN and never leaves the resolver. It fails closed (the VPC's default):
 * should the firewall not answer, no query is resolved. Billed per query (about $0.60 a million)
 * and per domain name (five, $0.0005 a month each): no standing cost to speak of (docs/sandbox-aws.md).
 * `-c sandboxDnsFirewall=off` leaves it out.
 */
export class SandboxDnsFirewall extends Construct {
  readonly ruleGroup: route53resolver.CfnFirewallRuleGroup;

  constructor(scope: Construct, id: string, props: SandboxDnsFirewallProps) {
    super(scope, id);
    const allowed = new route53resolver.CfnFirewallDomainList(this, 'Allowed', {
      domains: sandboxResolvableNames(Stack.of(this).region),
    });
    const everything = new route53resolver.CfnFirewallDomainList(this, 'Everything', { domains: ['*'] });
    this.ruleGroup = new route53resolver.CfnFirewallRuleGroup(this, 'Rules', {
      firewallRules: [
        { priority: 100, action: 'ALLOW', firewallDomainListId: allowed.attrId },
        {
          priority: 200,
          action: 'BLOCK',
          blockResponse: 'NXDOMAIN',
          firewallDomainListId: everything.attrId,
        },
      ],
    });
    new route53resolver.CfnFirewallRuleGroupAssociation(this, 'Association', {
      firewallRuleGroupId: this.ruleGroup.attrId,
      vpcId: props.vpc.vpcId,
      // 101 to 9,900: the rule groups of a VPC are evaluated in this order; there is only this one.
      priority: 101,
    });
  }
}

import { Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/**
 * Acknowledges cdk-nag findings on a construct and everything under it. cdk-nag 3 matches a
 * finding's exact id, `AwsSolutions-IAM5[Resource::*]` for a rule that reports several findings
 * per resource, so each one is listed on its own, each with the reason it is accepted.
 */
export function acknowledge(scope: IConstruct, findings: { id: string; reason: string }[]): void {
  Validations.of(scope).acknowledge(...findings);
}

/**
 * A resource as cdk-nag names it in a finding (its flattenCfnReference): Fn::Join flattened,
 * Ref as <Name>, Fn::GetAtt as <Name.Attribute>, Fn::ImportValue as the export name, Fn::Sub's
 * ${Name} as <Name> (the CDK assets bucket's name is one). Handles what the constructs build ARNs from.
 */
export function cdkNagName(resolved: unknown): string {
  if (typeof resolved === 'string') return resolved.replace(/\$\{/g, '<').replace(/\}/g, '>');
  const node = resolved as {
    'Fn::Join'?: [string, unknown[]];
    'Fn::Sub'?: unknown;
    Ref?: string;
    'Fn::ImportValue'?: unknown;
  };
  if (node['Fn::Sub'] !== undefined) return cdkNagName(node['Fn::Sub']);
  if (node['Fn::Join']) {
    const [delimiter, items] = node['Fn::Join'];
    return items.map(cdkNagName).join(delimiter);
  }
  if (node.Ref) return `<${node.Ref}>`;
  const getAtt = (resolved as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
  if (getAtt) return `<${getAtt[0]}.${getAtt[1]}>`;
  if (node['Fn::ImportValue'] !== undefined) return cdkNagName(node['Fn::ImportValue']);
  throw new Error(`Cannot name ${JSON.stringify(resolved)} as cdk-nag does`);
}

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

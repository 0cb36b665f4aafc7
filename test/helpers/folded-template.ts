import { type Stack, Stage } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { assemblyNestedTemplates, foldNestedStacks } from '../../functions/emulator/nested-stacks.ts';

/**
 * A stack's template with its nested stacks folded in (functions/emulator/nested-stacks.ts), as
 * the emulated deployment reads it: the tests of what a resource may do need not know which of the
 * stacks (lib/stateless-stack.ts: the sandbox's, the operations') holds it. Logical ids are the
 * stack's own getLogicalId's. Counting resources a stack is the one check that reads the stacks
 * apart (test/cdk/cdk.test.ts).
 */
export function foldedTemplate(stack: Stack): Template {
  const template = Template.fromStack(stack).toJSON() as Parameters<typeof foldNestedStacks>[0];
  const outdir = Stage.of(stack)?.outdir;
  if (!outdir) throw new Error(`${stack.stackName} is in no stage with an output directory`);
  return Template.fromJSON(foldNestedStacks(template, assemblyNestedTemplates(outdir)));
}

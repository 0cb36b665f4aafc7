import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CfnTemplate } from '../../functions/emulator/cloudformation-template.ts';
import { foldNestedStacks } from '../../functions/emulator/nested-stacks.ts';

/**
 * Nested stacks folded into their parent as CloudFormation resolves them (the sandbox and the
 * operations are nested stacks of the stateless stack): parameters in, outputs
 * out, one nested stack's output passed to another through the parent.
 */

const KEY_A = `${'a'.repeat(64)}.json`;
const KEY_B = `${'b'.repeat(64)}.json`;
const url = (key: string) => ({
  'Fn::Join': ['', ['https://s3.', { Ref: 'AWS::Region' }, '.amazonaws.com/assets/', key]],
});

const parent: CfnTemplate = {
  Resources: {
    Fn: {
      Type: 'AWS::Lambda::Function',
      Properties: {
        Environment: { Variables: { CLUSTER: { 'Fn::GetAtt': ['SandboxStack', 'Outputs.ClusterRef'] } } },
      },
    },
    Role: { Type: 'AWS::IAM::Role', Properties: {} },
    SandboxStack: {
      Type: 'AWS::CloudFormation::Stack',
      Properties: { TemplateURL: url(KEY_A), Parameters: { RoleRef: { Ref: 'Role' } } },
    },
    OpsStack: {
      Type: 'AWS::CloudFormation::Stack',
      Properties: {
        TemplateURL: url(KEY_B),
        Parameters: { Refill: { 'Fn::GetAtt': ['SandboxStack', 'Outputs.RefillRef'] } },
      },
      DependsOn: ['SandboxStack', 'Role'],
    } as CfnTemplate['Resources'][string],
    Late: { Type: 'AWS::SQS::Queue', DependsOn: 'OpsStack' },
  },
  Outputs: { Cluster: { Value: { 'Fn::GetAtt': ['SandboxStack', 'Outputs.ClusterRef'] } } },
};
const sandbox = {
  Parameters: { RoleRef: { Type: 'String' } },
  Resources: {
    Cluster: {
      Type: 'AWS::ECS::Cluster',
      Properties: { Tags: [{ Key: 'role', Value: { Ref: 'RoleRef' } }] },
    },
    Refill: { Type: 'AWS::Lambda::Function', Properties: {} },
  },
  Outputs: { ClusterRef: { Value: { Ref: 'Cluster' } }, RefillRef: { Value: { Ref: 'Refill' } } },
};
const ops = {
  Parameters: { Refill: { Type: 'String' }, Period: { Type: 'Number', Default: 300 } },
  Resources: {
    Alarm: {
      Type: 'AWS::CloudWatch::Alarm',
      Properties: { Dimensions: [{ Value: { Ref: 'Refill' } }], Period: { Ref: 'Period' } },
    },
  },
};
const read = (key: string) => {
  if (key === KEY_A) return sandbox as CfnTemplate;
  if (key === KEY_B) return ops as CfnTemplate;
  throw new Error(`no ${key}`);
};

describe('nested stacks folded into their parent', () => {
  it('parameters become the values the parent passes (or their defaults), outputs the values they name', () => {
    const folded = foldNestedStacks(parent, read);
    assert.deepEqual(Object.keys(folded.Resources).sort(), [
      'Alarm',
      'Cluster',
      'Fn',
      'Late',
      'Refill',
      'Role',
    ]);
    assert.deepEqual(folded.Resources.Cluster?.Properties, {
      Tags: [{ Key: 'role', Value: { Ref: 'Role' } }],
    });
    assert.deepEqual(folded.Resources.Fn?.Properties?.Environment, {
      Variables: { CLUSTER: { Ref: 'Cluster' } },
    });
    // One nested stack's output, passed to another as a parameter.
    assert.deepEqual(folded.Resources.Alarm?.Properties, {
      Dimensions: [{ Value: { Ref: 'Refill' } }],
      Period: 300,
    });
    assert.deepEqual(folded.Outputs, { Cluster: { Value: { Ref: 'Cluster' } } });
    // Waiting on a nested stack means nothing once folded.
    assert.equal(folded.Resources.Late?.DependsOn, undefined);
  });

  it('a logical id in both a parent and its nested stack, or an output nobody declared, is an error', () => {
    assert.throws(
      () =>
        foldNestedStacks({ Resources: { ...parent.Resources, Refill: { Type: 'AWS::SQS::Queue' } } }, read),
      /its resource Refill has the logical id of another/,
    );
    assert.throws(
      () =>
        foldNestedStacks(
          {
            Resources: {
              ...parent.Resources,
              Fn: {
                Type: 'AWS::Lambda::Function',
                Properties: { X: { 'Fn::GetAtt': ['SandboxStack', 'Outputs.Nope'] } },
              },
            },
          },
          read,
        ),
      /SandboxStack has no output Nope/,
    );
  });

  it('a template without nested stacks is itself', () => {
    const plain: CfnTemplate = { Resources: { Role: { Type: 'AWS::IAM::Role' } } };
    assert.equal(foldNestedStacks(plain, read), plain);
  });
});

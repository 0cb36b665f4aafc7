import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseManifest } from '../../functions/core/agents/manifest.ts';
import {
  MAX_SKILL_MD_BYTES,
  parseSkillMd,
  type Skill,
  skillToManifest,
} from '../../functions/core/agents/skill-md.ts';
import type { FieldIssue } from '../../functions/shared/errors.ts';

const SKILL = `---
name: house-style
description: Writes in the house style
license: MIT
tags: [writing, style]
metadata:
  owner: docs-team
---

# House style

Use short sentences.
`;

function ok(text: string): Skill {
  const r = parseSkillMd(text);
  assert.ok(r.ok, `expected ok, got ${JSON.stringify(!r.ok && r.issues)}`);
  return r.skill;
}

function issuesOf(text: string): FieldIssue[] {
  const r = parseSkillMd(text);
  assert.equal(r.ok, false, 'expected issues');
  return r.ok ? [] : r.issues;
}

function assertIssue(text: string, field: string, fragment: string) {
  const issues = issuesOf(text);
  assert.ok(
    issues.some((i) => i.field === field && i.message.includes(fragment)),
    `expected ${field}: "${fragment}" in ${JSON.stringify(issues)}`,
  );
}

describe('SKILL.md', () => {
  it('parses frontmatter and body', () => {
    assert.deepEqual(ok(SKILL), {
      name: 'house-style',
      description: 'Writes in the house style',
      body: '# House style\n\nUse short sentences.',
      frontmatter: { license: 'MIT', tags: ['writing', 'style'], metadata: { owner: 'docs-team' } },
    });
  });

  it('accepts CRLF line ends and a byte-order mark', () => {
    const skill = ok(`\uFEFF${SKILL.replaceAll('\n', '\r\n')}`);
    assert.equal(skill.name, 'house-style');
    assert.equal(skill.body, '# House style\r\n\r\nUse short sentences.');
  });

  it('requires frontmatter between leading --- lines', () => {
    assertIssue('# Just markdown', 'frontmatter', 'must start with YAML frontmatter');
    assertIssue('---\nname: x\ndescription: y\n', 'frontmatter', 'must start with YAML frontmatter');
    assertIssue(
      '\n---\nname: x\ndescription: y\n---\nbody',
      'frontmatter',
      'must start with YAML frontmatter',
    );
  });

  it('requires name, with the agent-name rule', () => {
    assertIssue('---\ndescription: d\n---\nbody', 'frontmatter.name', 'is required');
    assertIssue('---\nname: House Style\ndescription: d\n---\nbody', 'frontmatter.name', 'lowercase');
    assertIssue('---\nname: 12\ndescription: d\n---\nbody', 'frontmatter.name', 'must be a string');
    assert.equal(ok('---\nname: "12"\ndescription: d\n---\nbody').name, '12');
  });

  it('requires a non-empty description', () => {
    assertIssue('---\nname: x\n---\nbody', 'frontmatter.description', 'is required');
    assertIssue('---\nname: x\ndescription: ""\n---\nbody', 'frontmatter.description', 'must not be empty');
    assertIssue('---\nname: x\ndescription: [a]\n---\nbody', 'frontmatter.description', 'must be a string');
  });

  it('requires a body', () => {
    assertIssue('---\nname: x\ndescription: d\n---\n\n  \n', 'body', 'must not be empty');
    assertIssue('---\nname: x\ndescription: d\n---', 'body', 'must not be empty');
  });

  it('reports all frontmatter and body issues together', () => {
    assert.deepEqual(
      issuesOf('---\nname: X\n---\n').map((i) => i.field),
      ['frontmatter.name', 'frontmatter.description', 'body'],
    );
  });

  it('refuses invalid YAML, custom tags and duplicate keys', () => {
    assertIssue('---\nname: [x\ndescription: d\n---\nbody', 'frontmatter', 'is not valid YAML');
    assertIssue('---\nname: !!js/function "f"\ndescription: d\n---\nbody', 'frontmatter', 'Unresolved tag');
    assertIssue('---\nname: !custom x\ndescription: d\n---\nbody', 'frontmatter', 'Unresolved tag');
    assertIssue('---\nname: x\nname: y\ndescription: d\n---\nbody', 'frontmatter', 'unique');
  });

  it('refuses frontmatter that is not a mapping', () => {
    assertIssue('---\n- a\n- b\n---\nbody', 'frontmatter', 'must be a YAML mapping');
    assertIssue('---\n---\nbody', 'frontmatter', 'must be a YAML mapping');
  });

  it('refuses files over 256 KB', () => {
    assert.equal(MAX_SKILL_MD_BYTES, 256 * 1024);
    const big = `---\nname: x\ndescription: d\n---\n${'a'.repeat(MAX_SKILL_MD_BYTES)}`;
    assert.deepEqual(issuesOf(big), [{ field: '', message: 'must be at most 256 KB' }]);
  });

  it('publishes as a skill-type manifest through parseManifest', () => {
    const record = skillToManifest(ok(SKILL));
    assert.deepEqual(record, {
      name: 'house-style',
      type: 'skill',
      description: 'Writes in the house style',
      supported_providers: ['any'],
      tags: ['writing', 'style'],
    });
    const r = parseManifest(record);
    assert.ok(r.ok);
    assert.equal(r.manifest.type, 'skill');
    assert.equal(r.manifest.execution_engine, 'none');
    assert.equal(r.manifest.callable, false);
    assert.deepEqual(r.manifest.required_secrets, []);
  });

  it('carries directory keys from the frontmatter, validated by parseManifest', () => {
    const skill = ok('---\nname: x1\ndescription: d\nprice_credits: -3\nis_public: true\n---\nbody');
    const r = parseManifest(skillToManifest(skill));
    assert.equal(r.ok, false);
    assert.ok(!r.ok && r.issues.some((i) => i.field === 'price_credits'));
  });
});

describe('docs/manifest.md', () => {
  it('the SKILL.md example parses and publishes as the skill manifest example', () => {
    const doc = readFileSync(new URL('../../docs/manifest.md', import.meta.url), 'utf8');
    const skillMd = /```markdown\n([\s\S]*?)```/.exec(doc)?.[1];
    assert.ok(skillMd);
    const record = skillToManifest(ok(skillMd));
    const examples = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!));
    assert.deepEqual(
      record,
      examples.find((e) => e.type === 'skill'),
    );
  });
});

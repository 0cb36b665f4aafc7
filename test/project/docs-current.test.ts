import assert from 'node:assert/strict';
import { globSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';

/**
 * Docs that stay current. A doc or a comment says what is true and why; docs/performance.md holds
 * today's figures and docs/performance-history.md everything measured before them. So nothing else
 * names the issue that asked for a change, or the day something was measured or changed: the doc
 * would read as a history and go stale the day after.
 *
 * What counts, kept simple:
 * - An issue number: "issue N", "Issue N, point M", "issues N and M" (any case), anywhere in a
 *   doc (docs/, the READMEs, examples/) but the history, and in any comment of a source or test
 *   file (.ts, .tsx, .js, .mjs, .cjs). Not in strings: a test's name is checked by its reader.
 * - A date as a marker: YYYY-MM-DD in a doc's prose (outside code blocks and `code`) after "since",
 *   "before", "until", "after", "on", "of", "from" or "as of", or at either end of parentheses
 *   ("(2026-11-25)", "(measured side by side, 2026-11-25)", "(2026-11-26; …)"). An example value
 *   (a timestamp in an example request, a cron example's day, `--due 2026-07-01`) is written as
 *   code, so it is not one. The line a bench writes under its table in docs/performance.md
 *   ("Run 2026-11-27: `npm run bench:calls`.") is not one either: it says when today's figure was
 *   measured, which is part of that figure.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const HISTORY = 'docs/performance-history.md';

const ISSUE = /\bissues? \d+/i;
const DATE = String.raw`20\d\d-\d\d-\d\d\b`;
const DATE_MARKER = new RegExp(
  String.raw`\b(?:since|before|until|after|on|of|from|as of)\s+${DATE}|\(\s*${DATE}|${DATE}\s*\)`,
  'i',
);

const DOCS = ['docs/**/*.md', 'README.md', 'sdk/**/*.md', 'examples/**/*.md'];
const SOURCES = ['functions', 'lib', 'bin', 'web', 'sdk', 'scripts', 'bench', 'test', 'examples'].flatMap(
  (dir) => ['ts', 'tsx', 'js', 'mjs', 'cjs'].map((ext) => `${dir}/**/*.${ext}`),
);

function files(patterns: string[]): string[] {
  return globSync(patterns, {
    cwd: ROOT,
    exclude: (name) => name === 'node_modules' || name === 'dist',
  }).sort();
}

/** A doc's prose: its text without fenced code blocks and `code` spans, line for line. */
function prose(markdown: string): string {
  return markdown
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, (block) => block.replace(/[^\n]/g, ''))
    .replace(/`[^`\n]*`/g, '``');
}

/** Each comment of a source file (line and block comments, found by TypeScript's parser), with its line. */
function comments(path: string, text: string): { line: number; text: string }[] {
  const kind = path.endsWith('.tsx')
    ? ts.ScriptKind.TSX
    : path.endsWith('.ts')
      ? ts.ScriptKind.TS
      : ts.ScriptKind.JS;
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, kind);
  const found = new Map<number, { line: number; text: string }>();
  // Where JSX text starts is not trivia: a `//` there is text on the page.
  const seen = new Set<number>();
  const jsxText = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.JsxText) seen.add(node.pos);
    node.forEachChild(jsxText);
  };
  jsxText(source);
  const visit = (node: ts.Node): void => {
    if (!seen.has(node.pos)) {
      seen.add(node.pos);
      const ranges = [
        ...(ts.getLeadingCommentRanges(text, node.pos) ?? []),
        // A comment after code on its line is the trailing trivia of the token before.
        ...(ts.getTrailingCommentRanges(text, node.pos) ?? []),
      ];
      for (const range of ranges)
        found.set(range.pos, {
          line: source.getLineAndCharacterOfPosition(range.pos).line + 1,
          text: text.slice(range.pos, range.end),
        });
    }
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return [...found.entries()].sort(([a], [b]) => a - b).map(([, comment]) => comment);
}

/**
 * "path:line: the line" for each line of `text` (counted from `first`) that `pattern` matches in
 * `searched` (the same lines, some of their text blanked: a doc's prose).
 */
function hits(path: string, text: string, pattern: RegExp, first = 1, searched = text): string[] {
  const lines = text.split('\n');
  return searched
    .split('\n')
    .flatMap((line, i) => (pattern.test(line) ? [`${path}:${first + i}: ${lines[i]?.trim()}`] : []));
}

describe('docs that stay current', () => {
  it('no doc but the performance history names an issue', () => {
    const found = files(DOCS)
      .filter((path) => path !== HISTORY)
      .flatMap((path) => hits(path, readFileSync(join(ROOT, path), 'utf8'), ISSUE));
    assert.deepEqual(found, []);
  });

  it('no doc but the performance history dates a measurement or a change', () => {
    const found = files(DOCS)
      .filter((path) => path !== HISTORY)
      .flatMap((path) => {
        const text = readFileSync(join(ROOT, path), 'utf8');
        return hits(path, text, DATE_MARKER, 1, prose(text));
      });
    assert.deepEqual(found, []);
  });

  it('no comment of a source or test file names an issue', () => {
    const found = files(SOURCES).flatMap((path) => {
      const text = readFileSync(join(ROOT, path), 'utf8');
      if (!ISSUE.test(text)) return []; // most files: nothing to parse
      return comments(path, text).flatMap((comment) => hits(path, comment.text, ISSUE, comment.line));
    });
    assert.deepEqual(found, []);
  });

  it('the checks see what they are for, and not example values', () => {
    for (const marked of [
      'measured again (2026-11-25).',
      'Since 2026-11-27 the figure is read over the same windows.',
      'a run before 2026-11-26 said so',
      'on 2026-11-26, the table gave 1.06',
      '(measured side by side, 2026-11-25); the tests',
      '(2026-11-26; since then the bench reads it)',
    ])
      assert.match(prose(marked), DATE_MARKER, marked);
    for (const example of [
      '`agenthost tasks create "Review" --due 2026-07-01`',
      'in America/New_York on `2026-03-08`, it runs at 03:00 EDT',
      '{ "from": "2026-06-08T12:00:00.000Z" }',
      '```sh\nagenthost usage --from 2026-06-01\n```',
      'Run 2026-11-27: `npm run bench:calls`.',
    ])
      assert.doesNotMatch(prose(example), DATE_MARKER, example);

    for (const named of ['issue 56', 'Issue 13, point 8', 'issues 32 and 56', '(ISSUE 33)'])
      assert.match(named, ISSUE);
    assert.doesNotMatch('an issue with 5 parts', ISSUE);

    const source = [
      "const url = 'https://example.com/issue 5'; // a comment on issue 57",
      '/* issue 58, point 2 */',
      // A template literal's text is not a comment either.
      `const text = \`issue 9 $\{1} // issue 10\`;`,
      'const jsx = <p>// issue 11 is text</p>;',
    ].join('\n');
    assert.deepEqual(
      comments('example.tsx', source).flatMap((c) => hits('example.tsx', c.text, ISSUE, c.line)),
      ['example.tsx:1: // a comment on issue 57', 'example.tsx:2: /* issue 58, point 2 */'],
    );
  });
});

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, normalize } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';

/**
 * Every file a comment or a doc names exists: a file renamed, moved or removed
 * must not leave a reader looking for it. Read: the Markdown files whole (docs/, README.md, the
 * examples'; not sdk/README.md, the SDK package's, whose paths are its users' files, nor
 * docs/performance-history.md, a record that names files as they were then), and the comments
 * of every source and test file (functions/, lib/, bin/, sdk/, web/src/, scripts/, bench/, test/): the
 * code itself is the compiler's. A name is checked by its form:
 *
 * - a path from the repository's root (`functions/edge/cors.ts`, `test/helpers/`,
 *   `docs/http.md`): that file or directory exists;
 * - a path from where the text is (`./x.ts`, `../README.md`): it exists from there;
 * - another path with a directory (`core/workspaces/authorize.ts`, `edge/serve-route.ts`, as prose
 *   within a layer writes them): some file or directory of the repository ends with it;
 * - a bare file name of the repository's own kinds (`cors.ts`, `calls.md`): some file has it. A
 *   bare name is ambiguous, so that is all that can be said of it.
 *
 * A placeholder (`functions/http/<module>.ts`, `DIR/SKILL.md`) or a glob (`test/**` + `/*.test.ts`)
 * is checked up to where it starts. Not read as names: what is not the repository's (node_modules/,
 * cdk.out/, .data/, a build's dist/, a URL, a package's path, NOT_IN_REPOSITORY below), and a path
 * not from the root that does not end in a file of those kinds (`tools/call`, `aws/admin-api-key`,
 * `src/index.js`: an MCP method, a file in a data dir, an agent's file). A name this test reports
 * is fixed where it is written: name the file as it is now.
 */

const ROOT = join(import.meta.dirname, '..', '..');

/** Directories that are not the repository's source: installed, built or written at run time. */
const NOT_SOURCE = new Set(['.git', 'node_modules', 'cdk.out', '.data', 'dist']);

/** Every file and directory of the repository, as paths from its root (a directory ends with /). */
function repositoryPaths(dir = ''): string[] {
  const paths: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    if (NOT_SOURCE.has(entry.name)) continue;
    const path = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) paths.push(`${path}/`, ...repositoryPaths(path));
    else paths.push(path);
  }
  return paths;
}

const PATHS = repositoryPaths();
const EXISTING = new Set(PATHS);
const BASENAMES = new Set(PATHS.filter((p) => !p.endsWith('/')).map((p) => basename(p)));
/** The top-level names a path from the root starts with (functions/, docs/, README.md, …). */
const TOP_LEVEL = new Set(PATHS.filter((p) => !p.slice(0, -1).includes('/')).map((p) => p.split('/')[0]));

/** The file kinds a bare name, or a path not from the root, is checked for: the sources and docs. */
const KINDS = /\.(ts|tsx|md)$/;

/**
 * Names that are not the repository's files, and why: what it builds, what lives outside it, and
 * the dated records of files since removed.
 */
const NOT_IN_REPOSITORY: Record<string, string> = {
  'shared/DESIGN.md': 'the design agenthost follows, kept outside the repository',
  'DESIGN.md': 'the same, named as the design of the project',
  'bin/agenthost.js': "the installed CLI's bundle, in its npm package (scripts/cli-pack.ts)",
  'bin/agenthost.js.LEGAL.txt': 'the licence notices beside it',
  'containers/sandbox-runner.cjs': "the sandbox runner in a Lambda's asset (lib/container-programs.ts)",
  'acme-summarise.ts': "a file `agenthost agents types` writes in its user's project",
  'functions/platform/event-body.ts':
    "docs/performance.md's record of a change made there, since folded into the HTTP edge",
  'bench/ab/no-ai-sdk.patch': "docs/performance.md's record of an A/B patch, removed as it says",
};

/**
 * The names in a text: a path (a segment, a slash, more), or a bare name of KINDS. Neither
 * starts inside a word, a URL or a package path (after a letter, a dot, a slash, `@`, `:` or `-`),
 * nor goes on past a placeholder, a glob, a line number or an anchor.
 */
function namesIn(text: string): string[] {
  const names: string[] = [];
  const path = /(?<![\w.@:/\\-])((?:\.{1,2}\/)*\.?[\w-]+(?:\.[\w-]+)*\/[\w./-]*)/g;
  for (const m of text.matchAll(path)) {
    const name = (m[1] as string).replace(/\.+$/, '');
    // A path that goes on into a placeholder or a glob is checked up to its last whole directory.
    const next = text[(m.index ?? 0) + (m[1] as string).length];
    const whole =
      next === '<' || next === '*' || next === '{' ? name.slice(0, name.lastIndexOf('/') + 1) : name;
    // So does one with a placeholder in capitals (`DIR/SKILL.md`, a command's argument).
    const segments = whole.split('/');
    const placeholder = segments.findIndex((segment) => /^[A-Z][A-Z0-9_]*$/.test(segment));
    const checked =
      placeholder === -1
        ? whole
        : segments
            .slice(0, placeholder)
            .map((d) => `${d}/`)
            .join('');
    if (checked) names.push(checked);
  }
  const bare = /(?<![\w.@:/\\<>*-])(\w[\w-]*(?:\.[\w-]+)*\.(?:ts|tsx|md))(?![\w/-])/g;
  for (const m of text.matchAll(bare)) names.push(m[1] as string);
  return names;
}

/** Whether the file or directory `path` (from the root; a directory with or without its /) exists. */
const present = (path: string) => EXISTING.has(path) || EXISTING.has(`${path.replace(/\/$/, '')}/`);

/** Whether `name`, found in the file `from`, names a file or directory of the repository. */
function exists(name: string, from: string): boolean {
  if (!name.replace(/\/$/, '').includes('/')) return BASENAMES.has(name) || present(name);
  if (name.startsWith('./') || name.startsWith('../'))
    return present(normalize(join(dirname(from), name)).replaceAll('\\', '/'));
  if (TOP_LEVEL.has(name.split('/')[0] as string)) return present(name);
  return PATHS.some((p) => p === name || p.endsWith(`/${name}`));
}

/** Whether `name` is read as a name of the repository's at all (see the file's comment). */
function isOurs(name: string): boolean {
  if (name in NOT_IN_REPOSITORY) return false;
  if (name.split('/').some((segment) => NOT_SOURCE.has(segment))) return false;
  if (name.startsWith('./') || name.startsWith('../')) return true;
  if (TOP_LEVEL.has(name.split('/')[0] as string)) return true;
  return KINDS.test(name);
}

/** The comments of a TypeScript or JavaScript file, from its tokens (never a string's text). */
function commentsOf(file: string, text: string): string[] {
  const kind = file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, kind);
  const seen = new Set<number>();
  const comments: string[] = [];
  const collect = (ranges: ts.CommentRange[] | undefined) => {
    for (const r of ranges ?? []) {
      if (seen.has(r.pos)) continue;
      seen.add(r.pos);
      comments.push(text.slice(r.pos, r.end));
    }
  };
  const visit = (node: ts.Node) => {
    collect(ts.getLeadingCommentRanges(text, node.pos));
    collect(ts.getTrailingCommentRanges(text, node.end));
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return comments;
}

const CODE = /\.(ts|tsx|cjs|mjs|js)$/;
const CODE_DIRS = [
  'functions/',
  'lib/',
  'bin/',
  'sdk/src/',
  'sdk/scripts/',
  'web/src/',
  'scripts/',
  'bench/',
  'test/',
];

/** The texts to read: each doc whole, each source or test file's comments. */
function texts(): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  for (const file of PATHS) {
    if (file.endsWith('.md') && file !== 'sdk/README.md' && file !== 'docs/performance-history.md') {
      out.push({ file, text: readFileSync(join(ROOT, file), 'utf8') });
    } else if (
      CODE.test(file) &&
      CODE_DIRS.some((d) => file.startsWith(d)) &&
      !file.startsWith('sdk/src/generated/')
    ) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      out.push({ file, text: commentsOf(file, text).join('\n') });
    }
  }
  return out;
}

describe('files named in comments and docs', () => {
  it('every file a doc or a comment names exists', () => {
    const missing: string[] = [];
    for (const { file, text } of texts()) {
      for (const name of new Set(namesIn(text))) {
        if (isOurs(name) && !exists(name, file)) missing.push(`${file}: ${name}`);
      }
    }
    assert.deepEqual(missing, [], `named but missing (${missing.length}):\n${missing.join('\n')}`);
  });

  it('the check finds a name that is not there, and only names', () => {
    const from = 'docs/contributing.md';
    const found = (text: string) => namesIn(text).filter((n) => isOurs(n) && !exists(n, from));
    assert.deepEqual(found('see `functions/platform/no-such-file.ts` and no-such-module.ts'), [
      'functions/platform/no-such-file.ts',
      'no-such-module.ts',
    ]);
    assert.deepEqual(found('see ../docs/no-such-doc.md, test/helpers/nothing/ and core/nowhere/x.ts'), [
      '../docs/no-such-doc.md',
      'test/helpers/nothing/',
      'core/nowhere/x.ts',
    ]);
    assert.deepEqual(
      found(
        'functions/http/<module>.ts, test/**/*.test.ts, https://example.com/lib/x.ts, aws-cdk-lib/aws-s3, ' +
          '@aws-sdk/client-s3, Node.js, docs/http.md#errors, test/helpers/platform.ts:42, ../README.md, calls.md, ' +
          'DIR/SKILL.md, tools/call, .data/aws/x.ts, web/dist/index.html, functions/core.',
      ),
      [],
    );
    assert.deepEqual(commentsOf('x.ts', "const url = 'see docs/gone.md'; // docs/http.md\n/* lib/x.ts */"), [
      '// docs/http.md',
      '/* lib/x.ts */',
    ]);
  });
});

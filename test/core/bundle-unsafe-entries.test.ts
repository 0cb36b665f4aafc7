import { describe, it } from 'node:test';
import { inspectBundle } from '../../functions/shared/bundle-archive/inspect.ts';
import { refused, type TarSpec, tarGz, zipOf } from '../helpers/bundles.ts';

describe('inspectBundle: unsafe tar entries', () => {
  const cases: [string, TarSpec[], string][] = [
    ['an absolute path', [{ name: '/etc/x', content: 'x' }], '"/etc/x"'],
    [
      'a ".." segment',
      [
        { name: 'ok.js', content: 'x' },
        { name: '../evil', content: 'x' },
      ],
      '"../evil"',
    ],
    ['a ".." segment deeper down', [{ name: 'a/b/../../../evil', content: 'x' }], '"a/b/../../../evil"'],
    ['a Windows drive path', [{ name: 'C:/Windows/evil', content: 'x' }], '"C:/Windows/evil"'],
    ['a backslash path', [{ name: 'a\\..\\..\\evil', content: 'x' }], 'backslash'],
    [
      'a symlink escaping the root',
      [{ name: 'src/link', type: '2', linkname: '../../etc/passwd' }],
      '"src/link"',
    ],
    ['a symlink to an absolute path', [{ name: 'link', type: '2', linkname: '/etc/passwd' }], '"link"'],
    ['a symlink to the parent of the root', [{ name: 'up', type: '2', linkname: '..' }], '"up"'],
    [
      'a symlink escaping through another link',
      [
        { name: 'x/y', type: '2', linkname: '..' },
        { name: 'z', type: '2', linkname: 'x/y/..' },
        { name: 'f', content: 'x' },
      ],
      '"z"',
    ],
    [
      'a symlink loop',
      [
        { name: 'a', type: '2', linkname: 'b/x' },
        { name: 'b', type: '2', linkname: 'a/x' },
        { name: 'f', content: 'x' },
      ],
      'loop',
    ],
    ['a hard link escaping the root', [{ name: 'hard', type: '1', linkname: '../etc/passwd' }], '"hard"'],
    ['a hard link to an absolute path', [{ name: 'hard', type: '1', linkname: '/etc/passwd' }], '"hard"'],
    [
      'a hard link to no earlier file',
      [
        { name: 'hard', type: '1', linkname: 'later.js' },
        { name: 'later.js', content: 'x' },
      ],
      '"hard"',
    ],
    ['a character device', [{ name: 'dev/null', type: '3' }], '"dev/null"'],
    ['a block device', [{ name: 'disk', type: '4' }], '"disk"'],
    ['a FIFO', [{ name: 'pipe', type: '6' }], '"pipe"'],
    ['an unknown entry type', [{ name: 'sparse', type: 'S', content: 'x' }], '"sparse"'],
    [
      'a file below a symlink',
      [
        { name: 'lib', type: '2', linkname: 'src' },
        { name: 'lib/evil.js', content: 'x' },
      ],
      '"lib/evil.js"',
    ],
    [
      'a file below a file',
      [
        { name: 'a', content: 'x' },
        { name: 'a/b', content: 'y' },
      ],
      '"a/b"',
    ],
    [
      'the same file twice',
      [
        { name: 'a.js', content: 'x' },
        { name: './a.js', content: 'y' },
      ],
      '"./a.js"',
    ],
    ['a link naming the root', [{ name: '.', type: '2', linkname: 'src' }], '"."'],
  ];
  for (const [label, specs, named] of cases) {
    it(`refuses ${label} with UNPROCESSABLE, naming the entry`, async () => {
      refused(await inspectBundle(tarGz(specs), 'application/gzip'), 'UNPROCESSABLE', named);
    });
  }

  it('refuses a bundle with no files', async () => {
    refused(
      await inspectBundle(tarGz([{ name: 'empty/', type: '5' }]), undefined),
      'UNPROCESSABLE',
      'no files',
    );
    refused(await inspectBundle(await zipOf([]), 'application/zip'), 'UNPROCESSABLE', 'no files');
  });
});

describe('inspectBundle: unsafe zip entries', () => {
  it('refuses an entry named "../evil"', async () => {
    const zip = await zipOf(
      [
        { name: 'ok.js', content: 'x' },
        { name: 'QQ/evil', content: 'x' },
      ],
      { 'QQ/evil': '../evil' },
    );
    refused(await inspectBundle(zip, 'application/zip'), 'UNPROCESSABLE', '"../evil"');
  });

  it('refuses an absolute entry "/etc/x"', async () => {
    const zip = await zipOf([{ name: 'Qetc/x', content: 'x' }], { 'Qetc/x': '/etc/x' });
    refused(await inspectBundle(zip, 'application/zip'), 'UNPROCESSABLE', '"/etc/x"');
  });

  it('refuses backslash and drive-letter names', async () => {
    const backslash = await zipOf([{ name: 'aQQQQb', content: 'x' }], { aQQQQb: 'a\\..\\b' });
    refused(await inspectBundle(backslash, 'application/zip'), 'UNPROCESSABLE', 'backslash');
    const drive = await zipOf([{ name: 'QQ/evil', content: 'x' }], { 'QQ/evil': 'C:/evil' });
    refused(await inspectBundle(drive, 'application/zip'), 'UNPROCESSABLE', '"C:/evil"');
  });

  it('refuses symlinks (external attributes) that escape or are absolute', async () => {
    const escaping = await zipOf([
      { name: 'a.js', content: 'x' },
      { name: 'src/link', content: '../../etc/passwd', mode: 0o120777 },
    ]);
    refused(await inspectBundle(escaping, 'application/zip'), 'UNPROCESSABLE', '"src/link"', 'outside');
    const absolute = await zipOf([{ name: 'link', content: '/etc/passwd', mode: 0o120777 }]);
    refused(await inspectBundle(absolute, 'application/zip'), 'UNPROCESSABLE', '"link"', 'absolute');
  });

  it('refuses device and FIFO entries', async () => {
    for (const mode of [0o020644, 0o060644, 0o010644]) {
      const zip = await zipOf([{ name: 'dev', content: '', mode }]);
      refused(await inspectBundle(zip, 'application/zip'), 'UNPROCESSABLE', '"dev"');
    }
  });
});

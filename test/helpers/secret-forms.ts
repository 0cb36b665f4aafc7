/**
 * A secret value written in forms that redaction (functions/shared/redact-secrets.ts: the value, hex,
 * URL encoding, base64 and base64url) cannot know: reversed, spaced, as a list of characters, in
 * base32, XOR-ed, and split in two. A boundary that does not depend on redaction keeps
 * every one of them from whoever must not read the value.
 */
export function secretForms(value: string) {
  const bytes = Buffer.from(value);
  return {
    reversed: [...value].reverse().join(''),
    spaced: [...value].join(' '),
    characters: JSON.stringify([...value]),
    base32: base32(bytes),
    xored: Buffer.from(bytes.map((b) => b ^ 0x2a)).toString('hex'),
    secondHalf: value.slice(Math.floor(value.length / 2)),
  };
}

function base32(bytes: Buffer): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let acc = 0;
  let out = '';
  for (const byte of bytes) {
    acc = ((acc << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(acc >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(acc << (5 - bits)) & 31];
  return out;
}

/**
 * A tool's main.mjs that writes the secret in `env` to stderr in each form of secretForms (each on a
 * line of its own, the value's first half and its second apart), and `output-of-the-call`; it exits
 * 3 when its input says `fail`, else prints `{"ok": true}`.
 */
export function leakyToolScript(env: string): string {
  return `
const t = process.env[${JSON.stringify(env)}] ?? '';
const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const input = JSON.parse(Buffer.concat(chunks).toString() || '{}');
const bytes = Buffer.from(t);
const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
let bits = 0, acc = 0, b32 = '';
for (const byte of bytes) {
  acc = ((acc << 8) | byte) & 0xffff;
  bits += 8;
  while (bits >= 5) { b32 += alphabet[(acc >>> (bits - 5)) & 31]; bits -= 5; }
}
if (bits > 0) b32 += alphabet[(acc << (5 - bits)) & 31];
const half = Math.floor(t.length / 2);
console.error([
  'reversed ' + [...t].reverse().join(''),
  'spaced ' + [...t].join(' '),
  'characters ' + JSON.stringify([...t]),
  'base32 ' + b32,
  'xored ' + Buffer.from(bytes.map((b) => b ^ 0x2a)).toString('hex'),
  'first half ' + t.slice(0, half),
  'second half ' + t.slice(half),
  'output-of-the-call',
].join('\\n'));
if (input.fail) process.exit(3);
console.log(JSON.stringify({ ok: true }));
`;
}

// Reads the call's JSON input on stdin and writes the JSON result (the response's data) to stdout.
let raw = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  raw += chunk;
});
process.stdin.on('end', () => {
  const { text = '' } = JSON.parse(raw || '{}');
  const trimmed = text.trim();
  process.stdout.write(
    JSON.stringify({
      words: trimmed ? trimmed.split(/\s+/).length : 0,
      lines: text ? text.split('\n').length : 0,
      characters: [...text].length,
    }),
  );
});

// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the starters' JavaScript source is text here; its ${…} belong to it.
/**
 * The starters of the callable types (prompt, tool, agent): a manifest that publishes as it is, the
 * code the type needs, a sample input and a README saying how to run, publish and call it.
 */
import { json, NEEDS_ALLOW_NO_SECRETS, type TemplateFiles } from './init-kinds.ts';

export const CALLABLE_TEMPLATES: Record<'prompt' | 'tool' | 'agent', (name: string) => TemplateFiles> = {
  prompt: (name) => ({
    'agent.json': json({
      name,
      type: 'prompt',
      description: 'Explains a topic in two or three plain sentences.',
      supported_providers: ['any'],
      prompt_template:
        'Explain {{topic}} in two or three plain sentences for a curious reader. Reply with the explanation only.',
      input_schema: {
        type: 'object',
        properties: { topic: { type: 'string', minLength: 1, description: 'What to explain' } },
        required: ['topic'],
        additionalProperties: false,
      },
      tags: ['starter'],
    }),
    'input.json': json({ topic: 'why the sky is blue' }),
    'README.md': readme(name, 'prompt', [
      'A prompt agent: the platform fills `{{topic}}` in `prompt_template` from the call’s input',
      '(checked against `input_schema` first) and sends it to a model. The answer is the call’s data,',
      '`{"text": "…"}`; add an `output_schema` to get structured JSON instead.',
      '',
      'Files: `agent.json` (the manifest, docs/manifest.md), `input.json` (a sample input).',
      '',
      '`agenthost run` calls the model with your own provider key from the environment',
      '(`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `GOOGLE_GENERATIVE_AI_API_KEY` or `OLLAMA_BASE_URL`).',
    ]),
  }),

  tool: (name) => ({
    'agent.json': json({
      name,
      type: 'tool',
      description:
        'Counts the words and characters of a text and finds its longest word. Needs no secrets (publish with --allow-no-secrets).',
      supported_providers: ['any'],
      runtime: { command: 'node index.js' },
      input_schema: {
        type: 'object',
        properties: { text: { type: 'string', description: 'The text to count' } },
        required: ['text'],
        additionalProperties: false,
      },
      output_schema: {
        type: 'object',
        properties: {
          words: { type: 'integer' },
          characters: { type: 'integer' },
          longest_word: { type: 'string' },
        },
        required: ['words', 'characters', 'longest_word'],
      },
      bundle: { exclude: ['*.md', 'input.json'] },
      timeout_seconds: 30,
      tags: ['starter'],
    }),
    'index.js': [
      '// A tool agent: the platform runs `node index.js` in a sandbox without network, writes the',
      '// call’s JSON input to stdin and answers with the JSON object printed on stdout. Exiting',
      '// non-zero, or printing anything but one JSON object, fails the call; stderr goes to the',
      '// agent’s logs (`agenthost logs`). Declared secrets arrive as environment variables.',
      "let raw = '';",
      "process.stdin.setEncoding('utf8');",
      "process.stdin.on('data', (chunk) => {",
      '  raw += chunk;',
      '});',
      "process.stdin.on('end', () => {",
      "  const { text = '' } = JSON.parse(raw || '{}');",
      '  const words = text.split(/\\s+/).filter(Boolean);',
      "  const longest = words.reduce((best, w) => (w.length > best.length ? w : best), '');",
      '  process.stdout.write(',
      '    JSON.stringify({ words: words.length, characters: [...text].length, longest_word: longest }),',
      '  );',
      '});',
      '',
    ].join('\n'),
    'input.json': json({ text: 'The quick brown fox jumps over the lazy dog' }),
    'README.md': readme(name, 'tool', [
      'A tool agent: `node index.js` reads the call’s JSON input on stdin and prints the answer, one',
      'JSON object, on stdout. It runs in a sandbox without network, on the platform as with',
      '`agenthost run`. `bundle.exclude` keeps this README and `input.json` out of the upload.',
      '',
      'Files: `agent.json` (the manifest, docs/manifest.md), `index.js` (the code), `input.json`',
      '(a sample input). Try the script without any sandbox: `node index.js < input.json`.',
      '',
      'It declares no secrets, so it is published with `--allow-no-secrets`. To give it some, list',
      'them in `required_secrets` (they arrive as environment variables), set them with',
      '`agenthost secrets set NAME`, and, locally, pass them in the environment or a `--secrets-file`.',
    ]),
  }),

  agent: (name) => ({
    'agent.json': json({
      name,
      type: 'agent',
      description:
        'Counts the words of a text with a tool of its own and sums the text up in one sentence. Needs no secrets (publish with --allow-no-secrets).',
      supported_providers: ['anthropic'],
      loop: { max_turns: 10 },
      prompt_template:
        'Count the words of the text below with the count_words tool, then call submit_result with that count and a one-sentence summary of the text.\n\nText:\n{{text}}',
      input_schema: {
        type: 'object',
        properties: { text: { type: 'string', minLength: 1, description: 'The text to read' } },
        required: ['text'],
        additionalProperties: false,
      },
      output_schema: {
        type: 'object',
        properties: { words: { type: 'integer' }, summary: { type: 'string' } },
        required: ['words', 'summary'],
      },
      custom_tools: [
        {
          name: 'count_words',
          description: 'Counts the words of a text. Prints {"words": n}.',
          command: 'node tools/count-words.js {{text}}',
          input_schema: {
            type: 'object',
            properties: { text: { type: 'string' } },
            required: ['text'],
          },
        },
      ],
      bundle: { exclude: ['*.md', 'input.json'] },
      timeout_seconds: 120,
      tags: ['starter'],
    }),
    'tools/count-words.js': [
      '// The count_words tool of the agent: when the model calls it, the platform runs',
      '// `node tools/count-words.js {{text}}` in the run’s sandbox, {{text}} being the model’s',
      '// argument as one shell-quoted word, and hands what it prints back to the model.',
      "const text = process.argv[2] ?? '';",
      'process.stdout.write(JSON.stringify({ words: text.split(/\\s+/).filter(Boolean).length }));',
      '',
    ].join('\n'),
    'input.json': json({ text: 'Agents are programs that use a model and tools to finish a task.' }),
    'README.md': readme(name, 'agent', [
      'An agent (the managed loop, docs/calls.md): the platform gives a model the rendered',
      '`prompt_template`, the built-in tools (`bash`, `read_file`, `write_file`, `list_files`,',
      '`submit_result`) and the `custom_tools` of the manifest, and runs every tool call in one',
      'sandbox holding this directory’s files, until the model calls `submit_result`, whose input',
      '(checked against `output_schema`) is the call’s data. `loop.max_turns` bounds the turns.',
      '',
      'Files: `agent.json` (the manifest, docs/manifest.md), `tools/count-words.js` (the custom',
      'tool), `input.json` (a sample input).',
      '',
      'The loop speaks the Anthropic-style tool-use protocol: `agenthost run` needs',
      '`ANTHROPIC_API_KEY` (and `ANTHROPIC_BASE_URL` for a compatible endpoint) in the environment.',
      'It declares no secrets, so it is published with `--allow-no-secrets`.',
    ]),
  }),
};

/** A README for the callable types: what it is, then run, publish and call. */
function readme(name: string, type: 'prompt' | 'tool' | 'agent', about: string[]): string {
  const flag = NEEDS_ALLOW_NO_SECRETS[type] ? ' --allow-no-secrets' : '';
  return [
    `# ${name}`,
    '',
    ...about,
    '',
    '## Run it locally',
    '',
    'Runs it the way the platform would (same manifest checks, input validation and engine),',
    'without publishing:',
    '',
    '```sh',
    'agenthost run . --input-file input.json',
    '```',
    '',
    'Secrets the manifest declares come from the environment or from `--secrets-file .env`',
    '(KEY=VALUE lines).',
    '',
    '## Publish',
    '',
    '```sh',
    `agenthost publish .${flag}`,
    '```',
    '',
    'Each publish is a new version (v1, v2, …); it prints the agent’s address and URL.',
    '',
    '## Call',
    '',
    '```sh',
    `agenthost call <org>/${name} --input-file input.json`,
    `curl -s -X POST "$AGENTHOST_URL/<org>/${name}/v1/run" \\`,
    '  -H "Authorization: Bearer $AGENTHOST_API_KEY" -H "Content-Type: application/json" \\',
    '  -d @input.json',
    '```',
    '',
    '`<org>` is your org, as `agenthost publish` prints it.',
    '',
  ].join('\n');
}

/**
 * `npm run sdk:generate`: writes the SDK's generated types (sdk/src/generated/openapi.ts) and its
 * resource methods (sdk/src/generated/resources.ts) from the route table's OpenAPI document. No
 * server is needed: the document is built in process.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RESOURCES_FILE, renderResources } from './render-resources.ts';
import { GENERATED_FILE, renderTypes } from './render-types.ts';

const root = join(import.meta.dirname, '..', '..');
await writeFile(join(root, GENERATED_FILE), await renderTypes());
console.log(`wrote ${GENERATED_FILE}`);
await writeFile(join(root, RESOURCES_FILE), renderResources());
console.log(`wrote ${RESOURCES_FILE}`);

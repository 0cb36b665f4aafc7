import { fileURLToPath } from 'node:url';
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

// The dashboard's build: web/dist, which the local server serves at / (functions/platform/
// dashboard-assets.ts). Hashed file names under assets/ let the server mark them immutable.
export default defineConfig({
  root: import.meta.dirname,
  plugins: [preact()],
  resolve: {
    // The SDK reads files by path with these, lazily and only in Node (sdk/src/files.ts).
    alias: {
      'node:fs': fileURLToPath(new URL('src/node-only.ts', import.meta.url)),
      'node:path': fileURLToPath(new URL('src/node-only.ts', import.meta.url)),
    },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Browsers the dashboard supports all have modulepreload; the polyfill would be an inline
    // script, which the page's Content-Security-Policy refuses.
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
});

/**
 * What the browser build gets for node:fs and node:path (web/vite.config.ts aliases them here).
 * The SDK imports them only to read a file named by its path, which a page never does: it hands
 * File objects. Should one try, it fails saying why rather than with a bundler's stub error.
 */
const unavailable = (): never => {
  throw new Error('Reading files by path works in Node only; in a browser, pass a File or Blob');
};
export const openAsBlob = unavailable;
export const basename = unavailable;

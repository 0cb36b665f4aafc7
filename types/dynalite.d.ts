// dynalite 4 ships no type declarations; this is the part of its API the tests use.
declare module 'dynalite' {
  import type { Server } from 'node:http';
  export default function dynalite(options?: { createTableMs?: number; path?: string }): Server;
}

import type { IncomingMessage } from 'node:http';

/*
 * Reading a Node request's body whole within a limit, as the emulated API Gateway and the other
 * stand-ins read theirs (the platform's own edge reads Fetch API bodies: edge/body-reading.ts). Reading stops at the first
 * byte past the limit; a client that disconnects mid-body is 'aborted' (nobody is left to answer).
 * No memory is reserved ahead of the bytes the client actually sends (a declared length alone
 * must not reserve memory).
 */
export async function readBody(
  req: IncomingMessage,
  limit: number,
): Promise<Buffer | 'too-large' | 'aborted'> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req) {
      const c = chunk as Buffer;
      if (size + c.length > limit) return 'too-large';
      chunks.push(c);
      size += c.length;
    }
  } catch {
    return 'aborted';
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
}

/** The part of @20minutes/s3rver's API the emulator uses (the package ships no types). */
declare module '@20minutes/s3rver' {
  import type { IncomingMessage, ServerResponse } from 'node:http';
  import type { AddressInfo } from 'node:net';

  interface S3rverOptions {
    address?: string;
    port?: number;
    directory: string;
    silent?: boolean;
    resetOnClose?: boolean;
    allowMismatchedSignatures?: boolean;
    configureBuckets?: { name: string; configs?: (string | Buffer)[] }[];
  }

  export default class S3rver {
    constructor(options: S3rverOptions);
    /** Koa's request handler (S3rver is a Koa application). */
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    configureBuckets(): Promise<void>;
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
  }
}

/** The part of @20minutes/s3rver the emulator uses, internals included (the package ships no types). */
declare module '@20minutes/s3rver' {
  import type { IncomingMessage, ServerResponse } from 'node:http';
  import type { AddressInfo } from 'node:net';
  import type { Readable } from 'node:stream';

  interface S3rverOptions {
    address?: string;
    port?: number;
    directory: string;
    silent?: boolean;
    resetOnClose?: boolean;
    allowMismatchedSignatures?: boolean;
    configureBuckets?: { name: string; configs?: (string | Buffer)[] }[];
  }

  /** An object as its store lists it. */
  interface StoredObject {
    key: string;
    size: number;
    lastModifiedDate: Date;
    metadata: { etag?: string };
  }

  /**
   * The instance's filesystem store, an internal the emulator reaches into (the version is pinned
   * exactly in package.json): it replaces putContent, keeps the buckets' configurations
   * (s3-bucket-configs.ts), and lists objects for ListObjectVersions.
   */
  interface FilesystemStore {
    putContent: (objectPath: string, content: Buffer | Readable) => Promise<[number, string]>;
    listObjects(
      bucket: string,
      options: { prefix?: string; startAfter?: string; maxKeys?: number },
    ): Promise<{ objects: StoredObject[]; isTruncated: boolean }>;
    /** A bucket's (key undefined) or an object's configuration: cors, website, acl, tagging. */
    getSubresource(bucket: string, key: string | undefined, type: string): Promise<unknown>;
    putSubresource(bucket: string, key: string | undefined, resource: { type: string }): Promise<void>;
    deleteSubresource(bucket: string, key: string | undefined, type: string): Promise<void>;
    putBucket(bucket: string): Promise<void>;
    deleteBucket(bucket: string): Promise<void>;
  }

  export default class S3rver {
    constructor(options: S3rverOptions);
    /** Internal (see FilesystemStore). */
    store: FilesystemStore;
    /** Internal: its winston logger, let go of on close as s3rver's own server does. */
    logger: { exceptions: { unhandle(): void }; close(): void };
    /** Koa's request handler (S3rver is a Koa application). */
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    configureBuckets(): Promise<void>;
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
  }
}

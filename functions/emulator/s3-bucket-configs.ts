import type { FilesystemStore } from '@20minutes/s3rver';

/**
 * s3rver reads a bucket's CORS and website configurations from their files for every request (its
 * cors and website middleware ask its store for both, first thing): two file reads, or two failed
 * opens and their errors when the bucket has neither, as the emulated deployment's buckets do. This
 * keeps the bucket-level ones in memory once read. The emulator's process is the only writer of its
 * directory, so the copy is exact: putting or deleting a configuration, or the bucket, forgets it.
 * An object's own subresources (its ACL) are read as before.
 */
export function keepBucketConfigs(store: FilesystemStore): void {
  // Each bucket's configurations by type, each the read that found it.
  const kept = new Map<string, Map<string, Promise<unknown>>>();
  const { getSubresource, putSubresource, deleteSubresource, putBucket, deleteBucket } = store;
  // Forgotten once the change is written: a read that began before it and ends after it was kept
  // under the entry this removes, so it cannot outlive the change.
  const forgetting = async <T>(write: Promise<T>, bucket: string, type?: string): Promise<T> => {
    try {
      return await write;
    } finally {
      if (type === undefined) kept.delete(bucket);
      else kept.get(bucket)?.delete(type);
    }
  };
  store.getSubresource = (bucket, key, type) => {
    if (key !== undefined) return getSubresource.call(store, bucket, key, type);
    let types = kept.get(bucket);
    if (!types) {
      types = new Map();
      kept.set(bucket, types);
    }
    let config = types.get(type);
    if (!config) {
      const read = getSubresource.call(store, bucket, key, type);
      types.set(type, read);
      // A failed read is not kept: the next request reads again.
      read.catch(() => {
        if (kept.get(bucket)?.get(type) === read) kept.get(bucket)?.delete(type);
      });
      config = read;
    }
    return config;
  };
  store.putSubresource = (bucket, key, resource) => {
    const write = putSubresource.call(store, bucket, key, resource);
    return key === undefined ? forgetting(write, bucket, resource.type) : write;
  };
  store.deleteSubresource = (bucket, key, type) => {
    const write = deleteSubresource.call(store, bucket, key, type);
    return key === undefined ? forgetting(write, bucket, type) : write;
  };
  store.putBucket = (bucket) => forgetting(putBucket.call(store, bucket), bucket);
  store.deleteBucket = (bucket) => forgetting(deleteBucket.call(store, bucket), bucket);
}

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
  const kept = new Map<string, Promise<unknown>>();
  const id = (bucket: string, type: string) => `${bucket}\u0000${type}`;
  const forgetBucket = (bucket: string) => {
    for (const key of kept.keys()) if (key.startsWith(`${bucket}\u0000`)) kept.delete(key);
  };
  const { getSubresource, putSubresource, deleteSubresource, putBucket, deleteBucket } = store;
  store.getSubresource = (bucket, key, type) => {
    if (key !== undefined) return getSubresource.call(store, bucket, key, type);
    let config = kept.get(id(bucket, type));
    if (!config) {
      config = getSubresource.call(store, bucket, key, type);
      kept.set(id(bucket, type), config);
      // A failed read is not kept: the next request reads again.
      config.catch(() => kept.delete(id(bucket, type)));
    }
    return config;
  };
  store.putSubresource = async (bucket, key, resource) => {
    if (key === undefined) kept.delete(id(bucket, resource.type));
    try {
      return await putSubresource.call(store, bucket, key, resource);
    } finally {
      if (key === undefined) kept.delete(id(bucket, resource.type));
    }
  };
  store.deleteSubresource = async (bucket, key, type) => {
    if (key === undefined) kept.delete(id(bucket, type));
    try {
      return await deleteSubresource.call(store, bucket, key, type);
    } finally {
      if (key === undefined) kept.delete(id(bucket, type));
    }
  };
  store.putBucket = async (bucket) => {
    forgetBucket(bucket);
    return putBucket.call(store, bucket);
  };
  store.deleteBucket = async (bucket) => {
    try {
      return await deleteBucket.call(store, bucket);
    } finally {
      forgetBucket(bucket);
    }
  };
}

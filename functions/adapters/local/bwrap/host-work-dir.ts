/**
 * The run's working directory seen from the host, for the sessions' file API and the disk limit:
 * every access walks down from an open descriptor without following links (see HostWorkDir), so
 * what the run leaves behind can never lead the platform out of the tree.
 */
import { constants, realpathSync } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, readdir } from 'node:fs/promises';
import { SandboxPathError } from '../../../shared/sandbox-conventions.ts';

/** listFiles returns at most this many paths. */
const MAX_LISTED_FILES = 10_000;

export interface Owner {
  uid: number;
  gid: number;
}

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
/** `name` inside the directory open as `fd`: resolved from that directory, never from a path. */
const inDir = (fd: number, name: string) => `/proc/self/fd/${fd}/${name}`;

/** A relative path's segments; refuses absolute paths, '..', NUL. */
function segmentsOf(path: string, allowRoot: boolean): string[] {
  if (typeof path !== 'string' || path.includes('\0'))
    throw new SandboxPathError('The path is not a string without NUL');
  if (path.startsWith('/'))
    throw new SandboxPathError(
      `${JSON.stringify(path)} is absolute; give a path relative to the working directory`,
    );
  const segments = path.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw new SandboxPathError(`${JSON.stringify(path)} has a '..' segment`);
  if (!allowRoot && segments.length === 0)
    throw new SandboxPathError(`${JSON.stringify(path)} names no file`);
  return segments;
}

/**
 * The working directory seen from the host. The run's code can change it at any moment (while an
 * exec runs, or by leaving symlinks behind), so every access walks down from an open descriptor of
 * the root, one component at a time with O_NOFOLLOW, through /proc/self/fd/N/<name>: a symlink or
 * a swapped directory anywhere on the way is refused, never followed out of the tree.
 */
export class HostWorkDir {
  readonly path: string;
  private readonly owner: Owner | undefined;

  constructor(path: string, owner: Owner | undefined) {
    this.path = realpathSync(path);
    this.owner = owner;
  }

  /** Opens the directory at `segments` (created when `create`), refusing links and non-directories. */
  private async openDir(segments: string[], create: boolean): Promise<FileHandle> {
    let current = await open(this.path, DIR_FLAGS);
    try {
      for (const segment of segments) {
        let next: FileHandle;
        try {
          next = await open(inDir(current.fd, segment), DIR_FLAGS);
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if (code === 'ENOENT' && create) {
            await mkdir(inDir(current.fd, segment), { mode: 0o755 }).catch((e: NodeJS.ErrnoException) => {
              if (e.code !== 'EEXIST') throw e;
            });
            next = await open(inDir(current.fd, segment), DIR_FLAGS).catch((e: NodeJS.ErrnoException) => {
              throw refusal(e, segment);
            });
            if (this.owner) await next.chown(this.owner.uid, this.owner.gid);
          } else {
            throw refusal(err as NodeJS.ErrnoException, segment);
          }
        }
        await current.close();
        current = next;
      }
      return current;
    } catch (err) {
      await current.close();
      throw err;
    }
  }

  async readFile(path: string): Promise<Buffer> {
    const file = await this.openRegularFile(path, constants.O_RDONLY, false);
    try {
      return await file.readFile();
    } finally {
      await file.close();
    }
  }

  async writeFile(path: string, data: Buffer | string): Promise<void> {
    const file = await this.openRegularFile(path, constants.O_WRONLY | constants.O_CREAT, true);
    try {
      await file.truncate(0);
      await file.writeFile(data);
      if (this.owner) await file.chown(this.owner.uid, this.owner.gid);
    } finally {
      await file.close();
    }
  }

  /**
   * Opens the file at `path` through its directory's descriptor, never following a link (the
   * directories are created when `create`), and refuses anything but a regular file.
   */
  private async openRegularFile(path: string, flags: number, create: boolean): Promise<FileHandle> {
    const segments = segmentsOf(path, false);
    const dir = await this.openDir(segments.slice(0, -1), create);
    let file: FileHandle;
    try {
      file = await open(
        inDir(dir.fd, segments.at(-1)!),
        flags | constants.O_NOFOLLOW | constants.O_NONBLOCK,
        0o644,
      ).catch((e: NodeJS.ErrnoException) => {
        throw refusal(e, path);
      });
    } finally {
      await dir.close();
    }
    try {
      if (!(await file.stat()).isFile())
        throw new SandboxPathError(`${JSON.stringify(path)} is not a regular file`);
      return file;
    } catch (err) {
      await file.close();
      throw err;
    }
  }

  /** Regular files under `path`, relative to the working directory, sorted; links are not followed. */
  async listFiles(path = ''): Promise<string[]> {
    const segments = segmentsOf(path, true);
    const start = await this.openDir(segments, false);
    const found: string[] = [];
    const walk = async (dir: FileHandle, prefix: string): Promise<void> => {
      for (const entry of await readdir(inDir(dir.fd, ''), { withFileTypes: true })) {
        if (found.length >= MAX_LISTED_FILES) return;
        const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
        if (entry.isFile()) found.push(rel);
        else if (entry.isDirectory()) {
          const child = await open(inDir(dir.fd, entry.name), DIR_FLAGS).catch(() => undefined);
          if (!child) continue;
          try {
            await walk(child, rel);
          } finally {
            await child.close();
          }
        }
      }
    };
    try {
      await walk(start, segments.join('/'));
    } finally {
      await start.close();
    }
    return found.sort();
  }

  /** Bytes allocated and entries in the tree; stops counting entries past `maxEntries`. */
  async usage(maxEntries: number): Promise<{ bytes: number; entries: number }> {
    let bytes = 0;
    let entries = 0;
    const walk = async (dir: FileHandle): Promise<void> => {
      for (const name of await readdir(inDir(dir.fd, ''))) {
        if (++entries > maxEntries) return;
        const stat = await lstat(inDir(dir.fd, name)).catch(() => undefined);
        if (!stat) continue;
        bytes += stat.blocks * 512;
        if (stat.isDirectory()) {
          const child = await open(inDir(dir.fd, name), DIR_FLAGS).catch(() => undefined);
          if (!child) continue;
          try {
            await walk(child);
          } finally {
            await child.close();
          }
        }
      }
    };
    const root = await open(this.path, DIR_FLAGS);
    try {
      await walk(root);
    } finally {
      await root.close();
    }
    return { bytes, entries };
  }
}

function refusal(err: NodeJS.ErrnoException, what: string): Error {
  if (err.code === 'ELOOP' || err.code === 'ENOTDIR' || err.code === 'EMLINK') {
    return new SandboxPathError(
      `${JSON.stringify(what)} is a link or passes through something that is not a directory`,
    );
  }
  return err;
}

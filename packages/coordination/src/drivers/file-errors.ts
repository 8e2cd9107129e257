/**
 * The error of a failed file-system step of the file registry: always
 * `FLURRY_E_REGISTRY_UNREACHABLE` naming the registry and the directory, with advice by cause
 * (a hung mount, missing permissions, anything else). Coded errors pass through.
 */
import { FlurryError } from '@flurry/core';
import { registryError } from '../errors.js';

/** Where the failing registry lives, for the message. */
export interface FileRegistryPlace {
  readonly url: string;
  readonly root: string;
  readonly timeoutMs: number;
}

/** The coded error of a file-system step (see the module comment). */
export function fileIoError(e: unknown, doing: string, where: FileRegistryPlace): Error {
  const err = e as NodeJS.ErrnoException;
  if (err instanceof FlurryError) return err;
  const { url, root } = where;
  if (err.code === 'ETIMEDOUT') {
    return registryError(
      'UNREACHABLE',
      `${url}: cannot ${doing}: ${err.message}. Check the mount holding ${root} or choose another directory with --registry file:/path`,
      { url, dir: root, errno: err.code, timeoutMs: where.timeoutMs },
      e,
    );
  }
  if (err.code === 'EACCES' || err.code === 'EPERM' || err.code === 'EROFS') {
    return registryError(
      'UNREACHABLE',
      `${url}: cannot ${doing}: ${err.message}. Give this user write access to the directory or choose another with --registry file:/path`,
      { url, dir: root, errno: err.code },
      e,
    );
  }
  return registryError(
    'UNREACHABLE',
    `${url}: cannot ${doing}: ${err.message}. Choose a directory on a local, writable file system with --registry file:/path`,
    { url, dir: root, errno: err.code },
    e,
  );
}

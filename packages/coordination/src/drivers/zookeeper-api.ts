/**
 * The typed view of `node-zookeeper-client` (it ships no types): the client shapes, error codes,
 * create modes, {@link ZkError} and {@link zkFailure}.
 */
import type { EventEmitter } from 'node:events';
// @ts-expect-error -- node-zookeeper-client ships no type declarations; the part used here is typed below (ZkModule).
import zookeeperModule from 'node-zookeeper-client';
import { FlurryError, redactUrl } from '@flurry/core';
import { errorText, registryError } from '../errors.js';

/** The `stat` of a znode as node-zookeeper-client returns it (64-bit fields are 8-byte buffers). */
export interface ZkStat {
  readonly version: number;
  /** Session ID of the owner of an ephemeral node; all zeros for a persistent node. */
  readonly ephemeralOwner: Buffer;
  readonly mtime: Buffer;
}

/** An error of node-zookeeper-client (its ZooKeeper error code in `code`). */
export interface ZkClientException extends Error {
  readonly code: number;
}

interface ZkOpRecord {
  version?: number;
}

interface ZkTransaction {
  readonly ops: ZkOpRecord[];
  create(path: string, data: Buffer | null, mode: number): ZkTransaction;
  check(path: string, version: number): ZkTransaction;
  setData(path: string, data: Buffer | null, version: number): ZkTransaction;
  remove(path: string, version: number): ZkTransaction;
  commit(cb: (err: ZkClientException | null, results: Array<{ type: number; err?: number }>) => void): void;
}

interface ZkConnectionManager {
  state: number;
  socket?: { destroy(): void };
  servers: Array<{ host: string; port: number }>;
  findNextServer(cb: (server: { host: string; port: number }) => void): void;
}

/** The part of a node-zookeeper-client `Client` the session uses. */
export interface ZkClient extends EventEmitter {
  connectionManager: ZkConnectionManager;
  connect(): void;
  close(): void;
  create(
    path: string,
    data: Buffer | null,
    mode: number,
    cb: (err: ZkClientException | null, path: string) => void,
  ): void;
  remove(path: string, version: number, cb: (err: ZkClientException | null) => void): void;
  exists(path: string, cb: (err: ZkClientException | null, stat: ZkStat | null) => void): void;
  getChildren(path: string, cb: (err: ZkClientException | null, children: string[], stat: ZkStat) => void): void;
  getData(path: string, cb: (err: ZkClientException | null, data: Buffer | null, stat: ZkStat) => void): void;
  setData(
    path: string,
    data: Buffer | null,
    version: number,
    cb: (err: ZkClientException | null, stat: ZkStat) => void,
  ): void;
  mkdirp(path: string, cb: (err: ZkClientException | null, path: string) => void): void;
  transaction(): ZkTransaction;
  getSessionId(): Buffer;
  getSessionTimeout(): number;
}

/** The part of node-zookeeper-client's module used here. */
export interface ZkModule {
  createClient(
    connectionString: string,
    options: {
      sessionTimeout: number;
      spinDelay: number;
      retries: number;
    },
  ): ZkClient;
  CreateMode: { PERSISTENT: number; EPHEMERAL: number; PERSISTENT_SEQUENTIAL: number; EPHEMERAL_SEQUENTIAL: number };
  State: {
    DISCONNECTED: unknown;
    SYNC_CONNECTED: unknown;
    EXPIRED: unknown;
    AUTH_FAILED: unknown;
    CONNECTED_READ_ONLY: unknown;
  };
}

/** node-zookeeper-client, typed by {@link ZkModule}. */
export const zk = zookeeperModule as ZkModule;

/** ZooKeeper's error codes, plus `TIMEOUT` for an operation abandoned after its time limit. */
export const ZkCode = {
  RUNTIME_INCONSISTENCY: -2,
  CONNECTION_LOSS: -4,
  NO_NODE: -101,
  NO_AUTH: -102,
  BAD_VERSION: -103,
  NODE_EXISTS: -110,
  SESSION_EXPIRED: -112,
  AUTH_FAILED: -115,
  /** Not a ZooKeeper code: the operation got no answer within the time limit. */
  TIMEOUT: -10_000,
} as const;

/** Node creation modes. */
export const CreateMode = {
  PERSISTENT: zk.CreateMode.PERSISTENT,
  EPHEMERAL: zk.CreateMode.EPHEMERAL,
  PERSISTENT_SEQUENTIAL: zk.CreateMode.PERSISTENT_SEQUENTIAL,
} as const;

/** A failed ZooKeeper operation (`opIndex`: the failed operation of a transaction). */
export class ZkError extends Error {
  constructor(
    readonly zkCode: number,
    readonly op: string,
    readonly path: string,
    message: string,
    readonly opIndex?: number,
  ) {
    super(message);
    this.name = 'ZkError';
  }
}

/** True when `err` is a {@link ZkError} with one of `codes`. */
export function isZk(err: unknown, ...codes: number[]): err is ZkError {
  return err instanceof ZkError && codes.includes(err.zkCode);
}

/** Maps a ZooKeeper failure to a coded error (expired session: `FLURRY_E_LEASE_LOST`; ACL: `…_AUTH`; else `…_UNREACHABLE`). */
export function zkFailure(err: unknown, url: string, doing: string): FlurryError {
  const display = redactUrl(url);
  if (err instanceof FlurryError) return err;
  if (err instanceof ZkError) {
    if (err.zkCode === ZkCode.SESSION_EXPIRED) {
      return registryError(
        'LEASE_LOST',
        `${doing}: the ZooKeeper session expired (the server stopped hearing from this process for longer than the session timeout); the lease is lost and its ephemeral node gone`,
        { url: display, zkCode: err.zkCode },
        err,
      );
    }
    if (err.zkCode === ZkCode.NO_AUTH || err.zkCode === ZkCode.AUTH_FAILED) {
      return registryError(
        'AUTH',
        `${doing}: ZooKeeper at ${display} refused access to ${err.path} (code ${err.zkCode}); grant this client create/write/delete on the registry path`,
        { url: display, path: err.path, zkCode: err.zkCode },
        err,
      );
    }
    const why =
      err.zkCode === ZkCode.TIMEOUT
        ? 'no answer in time'
        : err.zkCode === ZkCode.CONNECTION_LOSS
          ? 'connection lost'
          : `ZooKeeper error ${err.zkCode}`;
    return registryError(
      'UNREACHABLE',
      `${doing}: ZooKeeper at ${display} is unreachable (${why}); the holder stays fenced until it answers again`,
      { url: display, path: err.path, zkCode: err.zkCode },
      err,
    );
  }
  return registryError(
    'UNREACHABLE',
    `${doing}: ZooKeeper at ${display} failed: ${errorText(err)}`,
    { url: display },
    err,
  );
}

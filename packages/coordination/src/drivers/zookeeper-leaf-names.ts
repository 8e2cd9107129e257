/**
 * Meituan Leaf's names and records in ZooKeeper, as the `zookeeper+leaf://` driver reads
 * and writes them: `ip:port` addresses, worker node names (`ip:port-0000000007`), the
 * endpoint JSON of a worker node, and Flurry's record beside it.
 */
import { registryError } from '../errors.js';
import { jsonObject } from './common.js';

/** A Leaf `ip:port` address. */
export interface LeafAddress {
  readonly ip: string;
  readonly port: string;
  /** `ip:port`, as in Leaf's node names. */
  readonly text: string;
}

/**
 * Parses and checks a Leaf address `ip:port` (IPv4, IPv6 without brackets, or a host name
 * without `-`; port 1–65535). Throws `FLURRY_E_REGISTRY_OPTION`.
 */
export function parseLeafAddress(text: string, url: string): LeafAddress {
  const i = text.lastIndexOf(':');
  const ip = i > 0 ? text.slice(0, i) : '';
  const port = i > 0 ? text.slice(i + 1) : '';
  if (!/^[0-9A-Za-z._:]+$/.test(ip) || !/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    throw registryError(
      'OPTION',
      `the Leaf address "${text}" is not ip:port (an IP or host name without "-", and a port 1–65535), e.g. address=10.0.0.5:8080`,
      { url, address: text },
    );
  }
  return { ip, port, text };
}

/** A child of Leaf's `forever` node, parsed. */
export interface LeafNodeName {
  readonly address: string;
  readonly workerId: number;
  readonly name: string;
}

/**
 * Parses a child name of `/snowflake/{name}/forever` (`ip:port-NNNNNNNNNN`); null when it
 * is not one.
 */
export function parseLeafNodeName(name: string): LeafNodeName | null {
  const i = name.lastIndexOf('-');
  if (i <= 0 || !/^\d{10}$/.test(name.slice(i + 1))) return null;
  return { address: name.slice(0, i), workerId: Number(name.slice(i + 1)), name };
}

/** Leaf's node data: `{"ip":"…","port":"…","timestamp":<ms>}` (Jackson's field order). */
export function leafEndpointJson(addr: LeafAddress, timestamp: number): string {
  return JSON.stringify({ ip: addr.ip, port: addr.port, timestamp });
}

/**
 * The timestamp stored in a Leaf worker node (`{"ip":…,"port":…,"timestamp":…}`);
 * throws `FLURRY_E_REGISTRY_CORRUPT` naming the node when the data is not Leaf's.
 */
export function parseEndpoint(data: Buffer, nodePath: string, url: string): number {
  const { timestamp } = jsonObject(data.toString('utf8'));
  if (typeof timestamp !== 'number' || !Number.isFinite(timestamp) || timestamp < 0) {
    throw registryError(
      'CORRUPT',
      `the Leaf node ${nodePath} at ${url} holds ${JSON.stringify(data.toString('utf8').slice(0, 200))}, not {"ip":"…","port":"…","timestamp":<ms>}; Leaf would not start from it either: restore its data (timestamp at or above the last ID issued by this address)`,
      { url, path: nodePath },
    );
  }
  return timestamp;
}

/** Flurry's record beside a Leaf worker node (see {@link parseMeta}). */
export interface LeafMeta {
  highWaterMs: number;
  releasedCleanly: boolean;
  foreverVersion: number;
}

/** Flurry's own record beside a Leaf worker node (its release state), or null when absent or not Flurry's. */
export function parseMeta(data: Buffer): LeafMeta | null {
  const m = jsonObject<LeafMeta>(data.toString('utf8')); // unreadable: treated as absent, so not clean
  return typeof m.highWaterMs === 'number' &&
    typeof m.releasedCleanly === 'boolean' &&
    typeof m.foreverVersion === 'number'
    ? { highWaterMs: m.highWaterMs, releasedCleanly: m.releasedCleanly, foreverVersion: m.foreverVersion }
    : null;
}

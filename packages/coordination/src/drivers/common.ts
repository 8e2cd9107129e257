/** What the engine drivers share; it imports no client library. */
import {
  assertKnownOptions,
  optionNames,
  randomBelow,
  redactLoosely,
  FlurryError,
  type Clock,
  type FlurryLogger,
} from '@flurry/core';
import type { Claim, ClaimRequest, HolderInfo, HolderRecord } from '../driver.js';
import { registryError, type RegistryErrorCode } from '../errors.js';

export interface EngineDriverOptions {
  /** Wall time for the high-water marks (the same clock as the generator). */
  readonly clock: Clock;
  /** Bound on connecting and on each operation, in ms. */
  readonly connectTimeoutMs: number;
  readonly logger?: FlurryLogger | undefined;
}

export const ENGINE_DRIVER_OPTION_NAMES = optionNames<EngineDriverOptions>({
  clock: true,
  connectTimeoutMs: true,
  logger: true,
});

/** The longest TTL a driver accepts: timers and the engines' TTLs are 32-bit signed ms. */
const MAX_TTL_MS = 2 ** 31 - 1;

/** How many holders an exhaustion error of the etcd, Redis and SQL drivers lists at most. */
export const HOLDERS_LISTED = 100;

/** Where a scan of `slots` slots starts, at random so that claimers spread. */
export function randomStart(slots: number): number {
  return slots > 1 ? randomBelow(Math.min(slots, 2 ** 47)) : 0;
}

/** `cluster` or `cluster/dc-N`: segments of safe characters, none only dots, at most 200 characters. */
export function validNamespace(ns: unknown): ns is string {
  return (
    typeof ns === 'string' &&
    ns.length <= 200 &&
    ns.split('/').every((seg) => /^[A-Za-z0-9_.-]+$/.test(seg) && !/^\.+$/.test(seg))
  );
}

function validateClaim(req: ClaimRequest): void {
  if (!validNamespace(req.namespace)) {
    throw registryError(
      'OPTION',
      `namespace "${String(req.namespace)}" is invalid: use segments of letters, digits, "_", "." or "-" separated by "/" (e.g. "orders/dc-1"), no segment only dots, at most 200 characters`,
      { namespace: req.namespace },
    );
  }
  if (!Number.isSafeInteger(req.slots) || req.slots < 1) {
    throw registryError('OPTION', `slots must be a positive integer (got ${String(req.slots)})`, { slots: req.slots });
  }
  checkTtl(req.ttlMs, 'ttlMs');
  if (!req.holder || typeof req.holder.id !== 'string' || req.holder.id === '') {
    throw registryError('OPTION', 'holder.id must be a non-empty string that identifies this acquire', {});
  }
}

function checkTtl(ttlMs: number, name: string): void {
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 1 || ttlMs > MAX_TTL_MS)
    throw registryError('OPTION', `${name} must be an integer in 1..${MAX_TTL_MS} (got ${String(ttlMs)})`, { ttlMs });
}

export function checkDriverOptions(
  opts: EngineDriverOptions,
  factory: string,
  names: readonly string[] = ENGINE_DRIVER_OPTION_NAMES,
): void {
  assertKnownOptions(opts, names, `${factory} options`);
  const ms = opts.connectTimeoutMs;
  if (!Number.isFinite(ms) || ms <= 0)
    throw registryError('OPTION', `connectTimeoutMs must be a positive number of ms (got ${String(ms)})`, {});
}

/** The user and password of a URL's `user[:password]` (password undefined without a colon), decoded. */
export function userInfo(text: string, bad: (why: string) => Error): { user: string; password: string | undefined } {
  const colon = text.indexOf(':');
  try {
    return {
      user: decodeURIComponent(colon < 0 ? text : text.slice(0, colon)),
      password: colon < 0 ? undefined : decodeURIComponent(text.slice(colon + 1)),
    };
  } catch {
    throw bad('the user or password is not valid percent-encoding');
  }
}

/** The `FLURRY_E_REGISTRY_URL` maker of a URL parser: `invalid ${what} URL "…": ${why}. ${expected}`, no password. */
export function urlRefusal(what: string, raw: unknown, expected: string): (why: string) => FlurryError {
  const url = typeof raw === 'string' ? redactLoosely(raw) : String(raw);
  return (why) => registryError('URL_INVALID', `invalid ${what} URL "${url}": ${why}. ${expected}`, { url });
}

type DriverPhase = 'connect' | 'claim' | 'renew' | 'release';

/** A refusal an engine recognised in a failure ([code, message]), else where it tried and the failure's text. */
export type EngineFailure =
  [code: keyof typeof RegistryErrorCode, message: string] | { tried: string; at: string; message: string };

/** `err` as is when it is a FlurryError, else the engine's refusal or `FLURRY_E_REGISTRY_UNREACHABLE` with advice. */
export function engineError(
  engine: string,
  url: string,
  err: unknown,
  c: { what: string; phase: DriverPhase; details: Record<string, unknown> },
  failure: (err: unknown) => EngineFailure,
): FlurryError {
  if (err instanceof FlurryError) return err;
  const f = failure(err);
  if (Array.isArray(f)) return registryError(f[0], f[1], c.details, err);
  const advice =
    c.phase === 'renew'
      ? 'The lease manager retries at the next renewal; IDs are issued until the lease deadline passes.'
      : c.phase === 'release'
        ? 'The node ID frees itself when its TTL runs out.'
        : `Check that ${engine} runs at ${f.at} and is reachable from this host.`;
  const why = `could not be reached while trying to ${c.what} (tried ${f.tried}): ${clause(f.message)}. `;
  return registryError('UNREACHABLE', `${engine} at ${url} ${why}${advice}`, c.details, err);
}

export function allNodeIds(slots: number): [subject: string, verb: 'is' | 'are'] {
  return slots === 1 ? ['the only node ID', 'is'] : [`all ${slots} node IDs`, 'are'];
}

export function clause(message: string): string {
  return message.replace(/[.:;,\s]+$/, '');
}

interface PreviousHolder {
  readonly highWaterMs: number;
  readonly releasedCleanly: boolean;
  /** The longest a holder of this record could have issued past its mark unreported. */
  readonly ttlMs: number;
}

/** The high-water record the etcd and Redis drivers store beside each slot (JSON, no TTL). */
export interface HighWaterRecord extends PreviousHolder {
  v: 1;
  holder: string;
  updatedAtMs: number;
}

/** The record for a holder that got `prev` and reports `reportedMs`: only a final one covering `prev`'s window is clean. */
function recordToStore(
  prev: PreviousHolder,
  reportedMs: number,
  ownTtlMs: number,
  holderId: string,
  clock: Clock,
  final: boolean,
): HighWaterRecord {
  const now = clock.now();
  const issuedBound = final ? reportedMs : Math.max(reportedMs, now);
  const coversPrevious = prev.releasedCleanly || reportedMs >= prev.highWaterMs + prev.ttlMs;
  return {
    v: 1,
    highWaterMs: Math.max(prev.highWaterMs, issuedBound),
    releasedCleanly: final && coversPrevious,
    ttlMs: coversPrevious ? ownTtlMs : Math.max(ownTtlMs, prev.ttlMs),
    holder: holderId,
    updatedAtMs: now,
  };
}

export function listedHolder(slot: number, h: Partial<HolderInfo>): { slot: number } & Partial<HolderInfo> {
  return { slot, id: h.id, hostname: h.hostname, pid: h.pid, ...(h.address ? { address: h.address } : {}) };
}

export function jsonObject<T extends object = Record<string, unknown>>(text: string | null | undefined): Partial<T> {
  try {
    const v: unknown = JSON.parse(text ?? '');
    return v !== null && typeof v === 'object' ? v : {};
  } catch {
    return {};
  }
}

/** The {@link HolderInfo} fields of a holder or of stored JSON that have their type, in their order. */
export function pickHolder(v: object): Partial<HolderInfo> {
  const h: Record<string, unknown> = {};
  for (const [k, t] of Object.entries(HOLDER_FIELD_TYPES)) {
    const x = (v as Record<string, unknown>)[k];
    if (typeof x === t) h[k] = x;
  }
  return h;
}

export const HOLDER_FIELD_TYPES = {
  id: 'string',
  hostname: 'string',
  pid: 'number',
  address: 'string',
  version: 'string',
} as const satisfies Record<keyof HolderInfo, string>;

/** The slot numbers among `names` (`0`, `17`; not `07` or `x`), ascending, once each. */
export function slotNumbers(names: Iterable<string>): number[] {
  return [...new Set(names)]
    .filter((n) => /^(0|[1-9]\d*)$/.test(n))
    .map(Number)
    .sort((a, b) => a - b);
}

export function preferredSlot(req: ClaimRequest): number | undefined {
  const pref = req.preferredSlot;
  return pref !== undefined && Number.isSafeInteger(pref) && pref >= 0 && pref < req.slots ? pref : undefined;
}

export interface EngineClaimState {
  readonly namespace: string;
  readonly slot: number;
  readonly holderId: string;
  readonly prev: PreviousHolder;
}

export abstract class EngineDriverBase<S extends EngineClaimState, C, U extends { readonly redacted: string }> {
  readonly url: string;
  protected closed = false;
  protected readonly states = new Map<string, S>();
  protected abstract readonly engineName: string;

  constructor(
    protected readonly client: C,
    protected readonly parsed: U,
    protected readonly opts: EngineDriverOptions,
  ) {
    this.url = parsed.redacted;
  }

  protected get where(): string {
    return `${this.engineName} at ${this.url}`;
  }

  protected assertOpen(): void {
    if (!this.closed) return;
    const why = `the ${this.engineName} registry ${this.url} was closed; open a new one to claim node IDs`;
    throw registryError('CLOSED', why, { url: this.url });
  }

  protected own(claim: Claim): S | undefined {
    const s = this.states.get(claim.token);
    return s?.slot === claim.slot ? s : undefined;
  }

  protected stateOf(claim: Claim): S {
    const s = this.own(claim);
    if (s) return s;
    throw registryError(
      'LEASE_LOST',
      `this ${this.engineName} driver holds no claim with that token for slot ${claim.slot} (released, lost, or made by another driver); claim again`,
      { url: this.url, slot: claim.slot },
    );
  }

  protected claimed(
    token: string,
    req: ClaimRequest,
    slot: number,
    prev: PreviousHolder,
    extra: Omit<S, keyof EngineClaimState>,
  ): Claim {
    this.states.set(token, { namespace: req.namespace, slot, holderId: req.holder.id, prev, ...extra } as S);
    return { slot, token, highWaterMs: prev.highWaterMs, releasedCleanly: prev.releasedCleanly };
  }

  /**
   * The claim scan: the preferred slot, then three rounds that each read the held slots (`held(false)`) and try at
   * most `maxTries` others; then `FLURRY_E_REGISTRY_EXHAUSTED` naming `held(true)`.
   */
  protected async scanClaim(
    req: ClaimRequest,
    maxTries: number,
    tryClaim: (slot: number) => Promise<Claim | undefined>,
    held: (withHolders: boolean) => Promise<Map<number, Partial<HolderInfo>>>,
  ): Promise<Claim> {
    const pref = preferredSlot(req);
    const first = pref === undefined ? undefined : await tryClaim(pref);
    if (first) return first;
    for (let round = 0; round < 3; round++) {
      const live = await held(false);
      if (live.size >= req.slots) break;
      const start = randomStart(req.slots);
      for (let i = 0, tries = 0; i < req.slots && tries < maxTries; i++) {
        const slot = (start + i) % req.slots;
        if (live.has(slot) || (round === 0 && slot === pref)) continue;
        tries++;
        const c = await tryClaim(slot);
        if (c) return c;
      }
    }
    const listed = [...(await held(true))].sort((a, b) => a[0] - b[0]);
    const holders = listed.slice(0, HOLDERS_LISTED).map(([slot, h]) => listedHolder(slot, h));
    throw this.exhausted(req, listed.length, holders);
  }

  /** The {@link PreviousHolder} a stored record describes (none: nothing issued) and the first record `req` stores. */
  protected firstRecord(req: ClaimRequest, stored: PreviousHolder | undefined): [PreviousHolder, HighWaterRecord] {
    const prev = stored ?? { highWaterMs: 0, releasedCleanly: true, ttlMs: 0 };
    return [prev, recordToStore(prev, 0, req.ttlMs, req.holder.id, this.opts.clock, false)];
  }

  /** `FLURRY_E_REGISTRY_EXHAUSTED`: every slot of `req` held (`n` holders, the first of them listed). */
  protected exhausted(req: ClaimRequest, n: number, holders: ReturnType<typeof listedHolder>[]): FlurryError {
    const sample = holders
      .slice(0, 5)
      .map((h) => `${h.hostname ?? '?'}:${h.pid ?? '?'} (slot ${h.slot})`)
      .join(', ');
    return registryError(
      'EXHAUSTED',
      `${allNodeIds(req.slots).join(` of "${req.namespace}" in ${this.where} `)} held (${n} holder${n === 1 ? '' : 's'}, e.g. ${sample || 'none readable'}). ` +
        `Stop a holder, wait for a dead one's lease to expire, or use a layout with more node bits.`,
      { url: this.url, namespace: req.namespace, slots: req.slots, held: n, holders },
    );
  }

  /** A stored high-water record (`undefined`: none); `FLURRY_E_REGISTRY_CORRUPT` naming `inspect KEY` when invalid. */
  protected highWater(raw: string | null | undefined, key: string, inspect: string): HighWaterRecord | undefined {
    if (raw === null || raw === undefined || raw === '') return undefined;
    const r = jsonObject<HighWaterRecord>(raw);
    const ms = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v) && v >= 0;
    if (!ms(r.highWaterMs) || typeof r.releasedCleanly !== 'boolean' || !ms(r.ttlMs)) {
      throw registryError(
        'CORRUPT',
        `the high-water record "${key}" in ${this.where} is not valid (expected JSON {highWaterMs, releasedCleanly, ttlMs}). ` +
          `Inspect it with "${inspect} ${key}"; only delete it if you know no IDs were issued under that node ID after the time it should hold.`,
        { url: this.url, key, value: raw.slice(0, 200) },
      );
    }
    return r as HighWaterRecord;
  }

  /** Forgets a lost claim; the `FLURRY_E_LEASE_LOST` to throw, saying `why`. */
  protected lost(claim: Claim, s: S, why: string): FlurryError {
    this.states.delete(claim.token);
    return registryError(
      'LEASE_LOST',
      `slot ${claim.slot} of "${s.namespace}" in ${this.where} ${why}; stop issuing and claim again`,
      { url: this.url, slot: claim.slot, namespace: s.namespace },
    );
  }

  /** The engine's refusal in `err` (while trying to `what`), else where it tried. */
  protected abstract failure(err: unknown, what: string): EngineFailure;
  /** Fields the engine's error details carry after the URL. */
  protected readonly detailed?: object;

  toError(err: unknown, what: string, phase: DriverPhase, extra: Record<string, unknown> = {}): FlurryError {
    const details = { url: this.url, ...this.detailed, operation: what, ...extra };
    return engineError(this.engineName, this.url, err, { what, phase, details }, (e) => this.failure(e, what));
  }

  protected async call<T>(
    what: string,
    phase: DriverPhase,
    fn: () => Promise<T>,
    extra?: Record<string, unknown>,
  ): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw this.toError(err, what, phase, extra);
    }
  }

  claim(req: ClaimRequest): Promise<Claim> {
    return this.call(`claim a slot of "${req.namespace}"`, 'claim', () => {
      this.assertOpen();
      validateClaim(req);
      return this.claimSlot(req);
    });
  }

  /** Claims a slot of a valid `req`; a failure is turned into a registry error by {@link toError}. */
  protected abstract claimSlot(req: ClaimRequest): Promise<Claim>;

  async renew(claim: Claim, opts: { ttlMs: number; highWaterMs: number }): Promise<void> {
    this.assertOpen();
    const s = this.stateOf(claim);
    this.checkRenewTtl(s, opts.ttlMs);
    const rec = recordToStore(s.prev, opts.highWaterMs, opts.ttlMs, s.holderId, this.opts.clock, false);
    const what = `renew slot ${claim.slot} of "${s.namespace}"`;
    const write = () => this.renewSlot(s, rec, claim.token, opts.ttlMs);
    const lostWhy = await this.call(what, 'renew', write, { slot: claim.slot });
    if (lostWhy !== undefined) throw this.lost(claim, s, lostWhy);
  }

  /** Stores `rec` and extends the slot by `ttlMs` if `token` still holds it; else says why it was lost. */
  protected abstract renewSlot(s: S, rec: HighWaterRecord, token: string, ttlMs: number): Promise<string | undefined>;

  protected checkRenewTtl(_s: S, ttlMs: number): void {
    checkTtl(ttlMs, 'renew ttlMs');
  }

  async release(claim: Claim, opts: { highWaterMs: number }): Promise<void> {
    this.assertOpen();
    const s = this.own(claim);
    if (!s) return; // already released or lost: nothing of ours to free
    const rec = recordToStore(s.prev, opts.highWaterMs, 0, s.holderId, this.opts.clock, true);
    const what = `release slot ${claim.slot} of "${s.namespace}"`;
    const ours = await this.call(what, 'release', () => this.releaseSlot(s, rec, claim.token), { slot: claim.slot });
    this.states.delete(claim.token);
    if (ours) return;
    this.opts.logger?.warn(
      { url: this.url, slot: s.slot, namespace: s.namespace },
      `${this.engineName} release: the slot was no longer ours (lease expired); the final high-water mark was not stored`,
    );
  }

  /** Stores the final `rec` and frees the slot if `token` still holds it (false: it did not). */
  protected abstract releaseSlot(s: S, rec: HighWaterRecord, token: string): Promise<boolean>;

  /** The driver once `check` passed (logged as connected); else closed, with `check`'s error for `what`. */
  async opened(
    check: () => Promise<unknown>,
    what: string,
    extra: Record<string, unknown>,
    logged: object,
  ): Promise<this> {
    try {
      await check();
    } catch (err) {
      await this.close();
      throw this.toError(err, what, 'connect', extra);
    }
    this.opts.logger?.info({ url: this.url, ...logged }, `connected to ${this.engineName}`);
    return this;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.states.clear();
    await this.disconnect();
  }

  holders(namespace: string): Promise<HolderRecord[]> {
    return this.call(`list the holders of "${namespace}"`, 'connect', () => {
      this.assertOpen();
      return this.readHolders(namespace);
    });
  }

  /** The live holders of one namespace (timing: docs/node-ids.md, "Listing holders"). */
  protected abstract readHolders(namespace: string): Promise<HolderRecord[]>;

  protected abstract disconnect(): Promise<void> | void;
}

/**
 * What the driver tests share: holder descriptions, a coded-rejection assertion, and a
 * driver living in a child process driven line by line (so it can be paused with SIGSTOP
 * or killed like a production holder). Test support only; not exported by the package.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { hostname } from 'node:os';
import { createInterface } from 'node:readline';
import { FlurryError } from '@flurry/core';
import type { HolderInfo, RegistryDriver } from '../driver.js';

/** A holder description unique to this test process and `tag`. */
export const holder = (tag: number | string, address?: string): HolderInfo => ({
  id: `${hostname()}:${process.pid}:${tag}`,
  hostname: hostname(),
  pid: process.pid,
  ...(address ? { address } : {}),
});

/** Resolves after `ms`. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Asserts that `p` rejects with a {@link FlurryError} of `code`, and returns it. */
export async function rejectsWith(p: Promise<unknown>, code: string): Promise<FlurryError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof FlurryError, `expected a FlurryError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    return e;
  }
  assert.fail(`expected a rejection with ${code}`);
}

/**
 * Calls `attempt` up to `tries` times, `everyMs` apart, until it resolves; a rejection with
 * another code than `allowedCode` (when given) fails at once. Returns whether it succeeded.
 */
export async function retryUntilOk(
  attempt: () => Promise<unknown>,
  tries: number,
  everyMs: number,
  allowedCode?: string,
): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    try {
      await attempt();
      return true;
    } catch (e) {
      if (allowedCode !== undefined) assert.equal((e as FlurryError).code, allowedCode, (e as Error).message);
      await sleep(everyMs);
    }
  }
  return false;
}

/**
 * A Node process running the ES module source `src` (which writes one JSON object a line
 * to stdout and reads commands a line from stdin), with `env` added to this environment.
 */
export class ChildProcessDriver {
  private readonly proc: ChildProcessWithoutNullStreams;
  private readonly lines: string[] = [];
  private readonly waiting: Array<(l: string) => void> = [];

  constructor(src: string, env: Record<string, string>) {
    this.proc = spawn(
      process.execPath,
      [...process.execArgv.filter((a) => !a.startsWith('--test')), '--input-type=module', '-e', src],
      {
        env: { ...process.env, ...env },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    this.proc.stderr.on('data', (d: Buffer) => process.stderr.write(`[child] ${d.toString()}`));
    createInterface({ input: this.proc.stdout }).on('line', (l) => {
      const w = this.waiting.shift();
      if (w) w(l);
      else this.lines.push(l);
    });
  }

  /** The next line the child wrote, parsed (fails after `timeoutMs`). */
  async next(timeoutMs = 10_000): Promise<Record<string, unknown>> {
    const line =
      this.lines.shift() ??
      (await new Promise<string>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('child did not answer in time')), timeoutMs);
        this.waiting.push((l) => {
          clearTimeout(t);
          resolve(l);
        });
      }));
    return JSON.parse(line) as Record<string, unknown>;
  }

  /** Writes `cmd` as a line and returns the child's answer. */
  async send(cmd: string): Promise<Record<string, unknown>> {
    this.proc.stdin.write(`${cmd}\n`);
    return this.next();
  }

  /** Sends `sig` (e.g. SIGSTOP, SIGCONT). */
  signal(sig: NodeJS.Signals): void {
    this.proc.kill(sig);
  }

  /** SIGKILLs the child (resuming it first if stopped) and waits for its exit. */
  async kill(): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    this.proc.kill('SIGCONT');
    this.proc.kill('SIGKILL');
    await new Promise((r) => this.proc.once('exit', r));
  }
}

/**
 * A one-slot in-memory driver whose slot was released cleanly by a holder that issued up
 * to `floorMs` (so a claim inherits exactly that high-water mark); renew and release succeed.
 */
export function cleanFloorDriver(floorMs: number): RegistryDriver {
  return {
    url: 'fake:',
    kind: 'fake',
    claim: () => Promise.resolve({ slot: 0, token: 't', highWaterMs: floorMs, releasedCleanly: true }),
    renew: () => Promise.resolve(),
    release: () => Promise.resolve(),
    holders: () => Promise.resolve([]),
    close: () => Promise.resolve(),
  };
}

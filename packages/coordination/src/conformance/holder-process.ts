/**
 * A conformance holder process (`holder.js`, spawned with `node`) and the events it prints,
 * with waits on them for the tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { hostMonotonicMs } from '../host-clock.js';
import type { HolderConfig } from './holder.js';

/** One line a holder printed. */
export interface HolderEvent {
  ev: string;
  t: number;
  [k: string]: unknown;
}

const HOLDER_JS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'holder.js');

/** A running holder process and the events it printed. */
export class HolderProcess {
  readonly events: HolderEvent[] = [];
  readonly child: ChildProcess;
  private stderr = '';
  private waiters = new Set<() => void>();
  readonly exited: Promise<number | null>;
  private exitCode: number | null | undefined;

  /** Spawns `node holder.js <config>`. */
  constructor(
    readonly name: string,
    readonly config: HolderConfig,
    env: NodeJS.ProcessEnv,
  ) {
    this.child = spawn(process.execPath, [HOLDER_JS, JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'pipe'], env });
    let buf = '';
    this.child.stdout!.setEncoding('utf8');
    this.child.stdout!.on('data', (d: string) => {
      buf += d;
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        try {
          this.events.push(JSON.parse(line) as HolderEvent);
        } catch {
          this.events.push({ ev: 'garbage', t: hostMonotonicMs(), line });
        }
      }
      this.notify();
    });
    this.child.stderr!.setEncoding('utf8');
    this.child.stderr!.on('data', (d: string) => {
      this.stderr = (this.stderr + d).slice(-4000);
    });
    this.child.stdin!.on('error', () => undefined);
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code) => {
        this.exitCode = code;
        this.notify();
        resolve(code);
      });
    });
  }

  private notify(): void {
    for (const w of [...this.waiters]) w();
  }

  /** Events of one kind. @example `h.of('id')` */
  of(ev: string): HolderEvent[] {
    return this.events.filter((e) => e.ev === ev);
  }

  /** A short description for assertion messages. @example `h.describe()` */
  describe(): string {
    const tail = this.events
      .slice(-8)
      .map((e) => JSON.stringify(e))
      .join('\n  ');
    return `${this.name}: exit=${String(this.exitCode)} last events:\n  ${tail}\n  stderr: ${this.stderr.slice(-1500)}`;
  }

  /**
   * Resolves with the first event (at index ≥ `from`) matching `pred`; rejects after
   * `timeoutMs` or when the process exits first.
   */
  waitFor(pred: (e: HolderEvent) => boolean, timeoutMs: number, from = 0): Promise<HolderEvent> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        for (let i = from; i < this.events.length; i++) {
          if (pred(this.events[i])) {
            cleanup();
            return resolve(this.events[i]);
          }
        }
        if (this.exitCode !== undefined) {
          cleanup();
          reject(new Error(`holder exited before the awaited event. ${this.describe()}`));
        }
      };
      const cleanup = (): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for an event. ${this.describe()}`));
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  /** Closes stdin (the holder releases and exits) and waits up to `timeoutMs`, then SIGKILLs. @example `await h.stop()` */
  async stop(timeoutMs = 8000): Promise<void> {
    if (this.exitCode !== undefined) return;
    try {
      this.child.kill('SIGCONT');
    } catch {
      /* not stopped */
    }
    this.child.stdin!.end();
    const t = setTimeout(() => this.kill('SIGKILL'), timeoutMs);
    await this.exited;
    clearTimeout(t);
  }

  /** Sends a signal if still running. @example `h.kill('SIGSTOP')` */
  kill(sig: NodeJS.Signals): void {
    if (this.exitCode === undefined) {
      try {
        this.child.kill(sig);
      } catch {
        /* gone */
      }
    }
  }
}

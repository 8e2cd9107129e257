/**
 * The one way the conformance suite and the torture suite (which imports this file from dist)
 * start, signal, pause, kill and watch child processes (holders, servers). Each child runs in
 * its own process group, so one signal reaches a whole tree (a `flurry serve` and what it
 * spawns); every child is tracked and killed when this process exits, whatever the reason.
 * The child prints JSON lines on stdout (its events); stderr is kept for failure reports.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** One JSON line a child printed. */
export interface ChildMessage {
  ev: string;
  [k: string]: unknown;
}

/** How a child ended. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  error?: string;
  killedAfterTimeout?: boolean;
}

const live = new Set<{ readonly pid: number | undefined }>();

function killGroup(pid: number | undefined, signal: NodeJS.Signals): boolean {
  if (pid === undefined) return false;
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, signal);
      return true;
    } catch {
      /* not a group leader, or gone */
    }
  }
  return false;
}

/** Kills every child still running (SIGCONT first, so stopped ones die at once). */
export function killAll(): void {
  for (const c of live) {
    killGroup(c.pid, 'SIGCONT');
    killGroup(c.pid, 'SIGKILL');
  }
  live.clear();
}

/** How many children are still running (for the end-of-run check). */
export const liveCount = (): number => live.size;

let hooked = false;
function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', killAll);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(sig, () => {
      process.stderr.write(`${sig}: killing ${live.size} child process group(s)\n`);
      killAll();
      process.exit(130);
    });
  }
}

/** A spawned child process: its parsed JSON lines in `messages`, the last 8 kB of its stderr. */
export class Child<M extends ChildMessage = ChildMessage> {
  readonly messages: M[] = [];
  stderr = '';
  stdoutTail = '';
  /** How it ended, once it has. */
  exit: ChildExit | null = null;
  readonly proc: ChildProcess;
  readonly pid: number | undefined;
  readonly exited: Promise<ChildExit>;
  private waiters = new Set<() => void>();

  /** Spawns `cmd args` in a process group of its own. */
  constructor(
    readonly name: string,
    cmd: string,
    args: string[],
    opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
  ) {
    hookExit();
    this.proc = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: 'pipe', detached: true });
    this.pid = this.proc.pid;
    live.add(this);
    this.proc.stdin!.on('error', () => undefined);
    this.proc.stderr!.on('data', (d: Buffer) => {
      this.stderr = (this.stderr + d.toString()).slice(-8192);
    });
    createInterface({ input: this.proc.stdout! }).on('line', (line) => {
      this.stdoutTail = (this.stdoutTail + line + '\n').slice(-4096);
      if (!line.startsWith('{')) return;
      try {
        this.messages.push(JSON.parse(line) as M);
        this.notify();
      } catch {
        /* not JSON: kept in stdoutTail */
      }
    });
    this.exited = new Promise((resolve) => {
      const end = (exit: ChildExit, delayMs: number): void => {
        this.exit = exit;
        live.delete(this);
        // Give readline a moment to deliver the last lines before waiters give up.
        setTimeout(() => {
          this.notify();
          resolve(exit);
        }, delayMs);
      };
      this.proc.on('exit', (code, signal) => end({ code, signal }, 20));
      this.proc.on('error', (err) => end({ code: null, signal: null, error: err.message }, 0));
    });
  }

  private notify(): void {
    for (const w of [...this.waiters]) w();
  }

  /** Whether it has not exited yet. */
  get running(): boolean {
    return this.exit === null;
  }

  /** The messages of one kind. */
  of(ev: string): M[] {
    return this.messages.filter((m) => m.ev === ev);
  }

  /** Its name, exit, last messages and stderr, for failure messages. */
  describe(): string {
    const tail = this.messages.slice(-8).map((m) => JSON.stringify(m));
    return `${this.name}: exit ${JSON.stringify(this.exit)}; last messages:\n  ${tail.join('\n  ')}\n  stderr: ${this.stderr.trim().slice(-1500)}`;
  }

  /** Sends a line on its stdin (the children's control channel). */
  send(line: string): void {
    if (this.exit) return;
    try {
      this.proc.stdin!.write(line + '\n');
    } catch {
      /* gone */
    }
  }

  /** Signals its whole process group; false when it has already exited. */
  signal(sig: NodeJS.Signals): boolean {
    return this.exit ? false : killGroup(this.pid, sig);
  }

  /**
   * Resolves with the first message (at index `from` or later) matching `pred`; rejects after
   * `timeoutMs`, or when the child exits without one.
   */
  waitFor(
    pred: (m: M) => boolean,
    timeoutMs: number,
    { from = 0, what = 'the awaited message' }: { from?: number; what?: string } = {},
  ): Promise<M> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const m = this.messages.slice(from).find(pred);
        if (m) resolve(m);
        else if (this.exit) reject(new Error(`exited before ${what}. ${this.describe()}`));
        else return;
        done();
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no ${what} within ${timeoutMs} ms. ${this.describe()}`));
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }

  /** Waits up to `timeoutMs` for it to exit, then SIGKILLs its group. */
  async waitExit(timeoutMs: number): Promise<ChildExit> {
    let timer: NodeJS.Timeout | undefined;
    const r = await Promise.race([
      this.exited,
      new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs))),
    ]);
    clearTimeout(timer);
    if (r) return r;
    await this.kill();
    return { ...(await this.exited), killedAfterTimeout: true };
  }

  /** Resumes it if paused and closes its stdin (a holder then releases and exits); SIGKILLs it after `timeoutMs`. */
  async stop(timeoutMs = 8000): Promise<ChildExit> {
    this.signal('SIGCONT');
    this.proc.stdin!.end();
    return this.waitExit(timeoutMs);
  }

  /** SIGKILLs its group and waits for the exit. */
  async kill(): Promise<ChildExit> {
    this.signal('SIGCONT');
    this.signal('SIGKILL');
    return this.exited;
  }
}

/** Spawns a Node child running `script` with `args`. */
export function spawnNode<M extends ChildMessage = ChildMessage>(
  name: string,
  script: string,
  args: string[] = [],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Child<M> {
  return new Child<M>(name, process.execPath, [script, ...args], opts);
}

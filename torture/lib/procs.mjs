// Child processes for the torture suite: each child runs in its own process group so a
// whole tree (a `flurry serve` and anything it spawns) can be stopped, paused or killed
// with one signal; every child is tracked and killed when the runner exits, whatever the
// reason (normal end, failure, SIGINT/SIGTERM, an uncaught error). Every wait is bounded.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const live = new Set();

function killGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    try {
      process.kill(pid, signal);
      return true;
    } catch {
      return false;
    }
  }
}

/**
 * Kills every child still running (SIGCONT first so stopped ones die at once).
 * @example process.on('exit', killAll);
 */
export function killAll() {
  for (const c of live) {
    killGroup(c.pid, 'SIGCONT');
    killGroup(c.pid, 'SIGKILL');
  }
  live.clear();
}

let hooked = false;
function hookExit() {
  if (hooked) return;
  hooked = true;
  process.on('exit', killAll);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(sig, () => {
      process.stderr.write(`torture: ${sig}: killing ${live.size} child process group(s)\n`);
      killAll();
      process.exit(130);
    });
  }
}

/**
 * A spawned child. `lines` collects its stdout lines (JSON lines are parsed into
 * `messages`); stderr is kept (last 8 kB) for failure reports.
 * @example const c = new Child('srv', process.execPath, ['main.js']); await c.waitFor((m) => m.ev === 'ready', 5000); await c.kill();
 */
export class Child {
  constructor(name, cmd, args, opts = {}) {
    hookExit();
    this.name = name;
    this.messages = [];
    this.stderr = '';
    this.stdoutTail = '';
    this.exit = null; // { code, signal } once exited
    this.waiters = [];
    this.proc = spawn(cmd, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    this.pid = this.proc.pid;
    live.add(this);
    this.proc.stdin.on('error', () => {});
    this.proc.stderr.on('data', (d) => {
      this.stderr = (this.stderr + d.toString()).slice(-8192);
    });
    const rl = createInterface({ input: this.proc.stdout });
    rl.on('line', (line) => {
      this.stdoutTail = (this.stdoutTail + line + '\n').slice(-4096);
      if (line.startsWith('{')) {
        try {
          const msg = JSON.parse(line);
          this.messages.push(msg);
          this.notify();
        } catch {
          /* not JSON: kept in stdoutTail */
        }
      }
    });
    this.exited = new Promise((resolve) => {
      this.proc.on('exit', (code, signal) => {
        this.exit = { code, signal };
        live.delete(this);
        // Give readline a moment to deliver the last lines before waiters give up.
        setTimeout(() => {
          this.notify();
          resolve(this.exit);
        }, 20);
      });
      this.proc.on('error', (err) => {
        this.exit = { code: null, signal: null, error: err.message };
        live.delete(this);
        this.notify();
        resolve(this.exit);
      });
    });
  }

  notify() {
    for (const w of [...this.waiters]) w();
  }

  /** Sends a line on the child's stdin (the control channel of torture children). */
  send(line) {
    if (this.exit) return;
    try {
      this.proc.stdin.write(line + '\n');
    } catch {
      /* gone */
    }
  }

  /** Signals the whole process group. */
  signal(sig) {
    if (this.exit) return false;
    return killGroup(this.pid, sig);
  }

  get running() {
    return this.exit === null;
  }

  /**
   * Resolves with the first message (from the start) matching `pred`; rejects after
   * `timeoutMs` or when the child exits without one.
   */
  waitFor(pred, timeoutMs, what = 'message') {
    return new Promise((resolve, reject) => {
      const check = () => {
        const m = this.messages.find(pred);
        if (m) {
          done();
          resolve(m);
          return true;
        }
        if (this.exit) {
          done();
          reject(
            new Error(
              `${this.name} exited (${JSON.stringify(this.exit)}) before ${what}; stderr: ${this.stderr.trim().slice(-1500)}`,
            ),
          );
          return true;
        }
        return false;
      };
      const timer = setTimeout(() => {
        done();
        reject(
          new Error(`${this.name}: no ${what} within ${timeoutMs} ms; stderr: ${this.stderr.trim().slice(-1500)}`),
        );
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.waiters = this.waiters.filter((w) => w !== check);
      };
      if (!check()) this.waiters.push(check);
    });
  }

  /** Waits for exit up to `timeoutMs`, then SIGKILLs the group. Resolves with the exit. */
  async waitExit(timeoutMs) {
    let timer;
    const r = await Promise.race([
      this.exited,
      new Promise((resolve) => {
        timer = setTimeout(() => resolve(null), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (r) return r;
    this.signal('SIGCONT');
    this.signal('SIGKILL');
    const e = await this.exited;
    return { ...e, killedAfterTimeout: true };
  }

  /** SIGKILLs the group and waits for the exit. */
  async kill() {
    this.signal('SIGCONT');
    this.signal('SIGKILL');
    return this.exited;
  }
}

/**
 * Spawns a Node child running `script` with `args`.
 * @example const c = spawnNode('gen', 'torture/children/generator.mjs', [JSON.stringify(cfg)]);
 */
export function spawnNode(name, script, args = [], opts = {}) {
  return new Child(name, process.execPath, [script, ...args], opts);
}

/**
 * Number of children still alive (for the end-of-run check).
 * @example if (liveCount()) killAll();
 */
export function liveCount() {
  return live.size;
}

/**
 * Starts a server and waits until it is ready, again on another port when its port was taken
 * first. A port picked by freePort() can be taken before the server listens (another
 * process's outgoing connection gets it as its ephemeral port): such a server exits with
 * EADDRINUSE before it ever listened, so it served and issued nothing, and `spawn(attempt)` is
 * called again after `repick()` has chosen another port (3 tries at most). Any other failure,
 * or a server still running, throws what `ready` threw.
 * @example const s = await startListening((attempt) => spawnServer(i, attempt), ready, async () => (ports[i] = await freePort()));
 */
export async function startListening(spawn, ready, repick) {
  for (let attempt = 1; ; attempt++) {
    const s = spawn(attempt);
    try {
      await ready(s);
      return s;
    } catch (e) {
      if (attempt >= 3 || s.child.running || !/EADDRINUSE/.test(s.child.stderr)) throw e;
      await repick();
    }
  }
}

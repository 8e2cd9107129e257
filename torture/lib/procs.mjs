// Child processes and the faults injected into them, for the torture suite: the conformance
// suite's own wrapper (process groups, every child killed when the runner exits, bounded waits),
// fault plug-ins and libfaketime clock files, from the built coordination package.
export { Child, killAll, liveCount, spawnNode } from '../../packages/coordination/dist/conformance/child.js';
export * from '../../packages/coordination/dist/conformance/faults.js';
export * from '../../packages/coordination/dist/conformance/faketime.js';

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

// The bin's stdout and stderr: `fs.writeSync` to the descriptor, making Node's stream (about 3 ms of a cold start)
// only at the first `EAGAIN`, which then takes the rest and every later write, so nothing is lost or reordered.
// Other errors (`EPIPE`) go to the write's callback, as a stream's would.
import fs from 'node:fs';

/** What a CLI command writes to: the part of a `Writable` it uses (`io.ts`'s `write()`). */
export interface CliOutput {
  write(chunk: string | Uint8Array, callback?: (err?: Error | null) => void): boolean;
  once(event: 'drain' | 'error', listener: (err?: Error) => void): unknown;
  readonly isTTY?: boolean;
}

/** The `fs.writeSync` an output uses (injectable for tests): bytes written, or throws. */
export type WriteSync = (fd: number, buffer: Uint8Array, offset: number, length: number) => number;

/** A {@link CliOutput} on `fd`: synchronous writes, then `stream()` (made once) from the first `EAGAIN`. */
export function fdOutput(fd: number, stream: () => CliOutput, writeSync: WriteSync = fs.writeSync): CliOutput {
  let handedOver: CliOutput | undefined;
  return {
    write(chunk, callback) {
      if (handedOver !== undefined) return handedOver.write(chunk, callback);
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      let offset = 0;
      try {
        while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') {
          callback?.(err as Error);
          return true;
        }
        handedOver = stream();
        return handedOver.write(bytes.subarray(offset), callback);
      }
      callback?.(null);
      return true;
    },
    once(event, listener) {
      return (handedOver ??= stream()).once(event, listener);
    },
    get isTTY() {
      return (handedOver ?? stream()).isTTY;
    },
  };
}

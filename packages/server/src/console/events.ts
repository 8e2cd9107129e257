// `GET /v1/events` (docs/console.md#get-v1events-route-events-get-only): one timer builds the status body and reads
// the cluster once per period for every stream; `close()` ends them all, so open consoles never hold up shutdown.
import type { ServerResponse } from 'node:http';
import { FlurryError } from '@flurry/core';
import { serverError } from '../errors.js';
import { sendError } from '../http/respond.js';
import type { ConsoleData } from './data.js';

export const MAX_STREAMS = 64;
const MAX_BUFFERED = 1 << 20; // bytes not yet sent: a client this far behind is cut off

export class EventStreams {
  private readonly streams = new Set<ServerResponse>();
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private closed = false;
  private lastPing = 0;

  /** `periodMs`: of the status and cluster events; `pingMs`: of the `: ping` comment (tests shorten both). */
  constructor(
    private readonly data: ConsoleData,
    private readonly o: { periodMs?: number; pingMs?: number; max?: number } = {},
  ) {}

  get size(): number {
    return this.streams.size;
  }

  /** Answers one `GET /v1/events`: starts the stream, or 503 (full, or shutting down). */
  open(res: ServerResponse): number {
    if (this.closed) return sendError(res, serverError('UNAVAILABLE', 'the service is shutting down; reconnect later'));
    const max = this.o.max ?? MAX_STREAMS;
    if (this.streams.size >= max) {
      const m = `${max} event streams are open on this service (the most it serves); close a console or retry later`;
      return sendError(res, serverError('UNAVAILABLE', m, { max }));
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
    });
    res.write('retry: 2000\n\n');
    this.streams.add(res);
    res.once('close', () => this.drop(res));
    if (!this.timer) {
      this.lastPing = Date.now();
      this.timer = setInterval(() => void this.tick().catch(() => undefined), this.o.periodMs ?? 1000);
    }
    void this.send([res]).catch(() => res.destroy());
    return 200;
  }

  private drop(res: ServerResponse): void {
    this.streams.delete(res);
    if (this.streams.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private async tick(): Promise<void> {
    if (this.ticking) return; // the previous registry read still runs
    this.ticking = true;
    try {
      if (Date.now() - this.lastPing >= (this.o.pingMs ?? 15_000)) {
        this.lastPing = Date.now();
        this.write([...this.streams], ': ping\n\n');
      }
      await this.send([...this.streams]);
    } finally {
      this.ticking = false;
    }
  }

  private async send(to: ServerResponse[]): Promise<void> {
    this.write(to, `event: status\ndata: ${JSON.stringify(this.data.status())}\n\n`);
    let frame: string;
    try {
      frame = `event: cluster\ndata: ${JSON.stringify(await this.data.cluster())}\n\n`;
    } catch (e) {
      const code = e instanceof FlurryError ? e.code : 'FLURRY_E_INTERNAL';
      const message = e instanceof FlurryError ? e.message : 'the registry could not be read';
      frame = `event: cluster-error\ndata: ${JSON.stringify({ code, message })}\n\n`;
    }
    const open = to.filter((r) => this.streams.has(r)); // some may have closed meanwhile
    this.write(open, frame);
  }

  private write(to: ServerResponse[], frame: string): void {
    for (const res of to)
      if (res.writableLength > MAX_BUFFERED) res.destroy();
      else res.write(frame);
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (const res of [...this.streams]) res.end();
    this.streams.clear();
  }
}

// The Twitter-compatible Thrift server (docs/service-api.md#twitter-snowflake-compatibility-thrift). A clock refusal
// answers `InvalidSystemClock`, any other a `TApplicationException` with the code; a malformed call closes its socket.
import thrift from 'thrift';
import { FlurryError, assertKnownOptions, optionNames, systemClock, type Clock, type FlurryLogger } from '@flurry/core';
import {
  SnowflakeCallError,
  SnowflakeProcessor,
  ThriftProtocolViolation,
  USER_AGENT_PATTERN,
  type SnowflakeHandler,
} from './snowflake-processor.js';
import { checkIntOption, serveTcp, tcpLimits } from '../tcp-listener.js';

/** The generator's node fields, or a function returning the current ones (a leased generator may move). */
export type ThriftNodeSource = Readonly<Record<string, number>> | (() => Readonly<Record<string, number>>);

/** A logger with pino's call shape (`logger.warn({ err }, 'message')`). */
export type ThriftLogger = Pick<FlurryLogger, 'warn'> & Partial<FlurryLogger>;

/** Options of {@link startThriftServer}. */
export interface ThriftServerOptions {
  /** Interface to listen on; default `127.0.0.1`. */
  host?: string;
  /** TCP port (0: a free one); conventionally 7609. */
  port: number;
  /** Issues the IDs (a core `Generator` or a leased generator). */
  generator: { next(): bigint };
  /** The generator's layout: its node fields make the node-ID calls' answers. */
  layout: {
    readonly nodeFields: readonly { readonly name: string; readonly bits: number }[];
    readonly totalBits: number;
  };
  /** The generator's node fields (or a function returning them). */
  node: ThriftNodeSource;
  /** Receives warnings about bad connections. */
  logger?: ThriftLogger;
  /** Wall clock of `get_timestamp`; default the system clock. */
  clock?: Clock;
  /** Largest accepted frame in bytes, 64 to 16,384,000; default 65,536. */
  maxFrameBytes?: number;
  /** Largest number of open connections (more are refused); default 10,000. */
  maxConnections?: number;
  /** Closes a connection idle this long in ms (0 = never); default 0 (Snowflake clients keep connections open). */
  idleTimeoutMs?: number;
}

/** A running Thrift server; `close()` stops accepting, lets written replies drain and closes every connection. */
export interface ThriftServer {
  readonly port: number;
  close(): Promise<void>;
}

/** thrift 0.24's frame splitter (@types/thrift 0.10 lacks its third parameter, the largest frame). */
// eslint-disable-next-line @typescript-eslint/unbound-method -- a static factory that never uses `this`
const frameReceiver = thrift.TFramedTransport.receiver as unknown as (
  onFrame: (frame: InstanceType<typeof thrift.TFramedTransport>) => void,
  seqid: number,
  maxLength: number,
) => (data: Buffer) => void;

const DATACENTER_NAMES = new Set(['datacenter', 'dc', 'datacenter_id', 'datacenterid']);

// Any other key is refused with `FLURRY_E_UNKNOWN_OPTION`.
const OPTION_NAMES = optionNames<ThriftServerOptions>({
  host: true,
  port: true,
  generator: true,
  layout: true,
  node: true,
  logger: true,
  clock: true,
  maxFrameBytes: true,
  maxConnections: true,
  idleTimeoutMs: true,
});

/** Starts the server (framed, binary); rejects with `FLURRY_E_INVALID_OPTION` or the listen error (`EADDRINUSE`…). */
export async function startThriftServer(opts: ThriftServerOptions): Promise<ThriftServer> {
  assertKnownOptions(opts, OPTION_NAMES, 'startThriftServer options');
  const limits = tcpLimits('Thrift server', opts, 0);
  const clock = opts.clock ?? systemClock;
  const maxFrameBytes = opts.maxFrameBytes ?? 65_536;
  checkIntOption('Thrift server', 'maxFrameBytes', maxFrameBytes, 64, 16_384_000);
  const needs = (what: string): never => {
    throw new FlurryError('FLURRY_E_INVALID_OPTION', `startThriftServer needs ${what}`, {});
  };
  if (typeof opts.generator?.next !== 'function') needs('a generator with a next() method');
  if (!Array.isArray(opts.layout?.nodeFields)) needs("the generator's layout (with its nodeFields)");
  const logger = opts.logger;
  if (opts.layout.totalBits > 63) {
    logger?.warn(
      { totalBits: opts.layout.totalBits },
      'the layout uses the 64th bit: Thrift i64 is signed, so IDs with that bit set reach Snowflake clients as negative numbers',
    );
  }

  const processor = new SnowflakeProcessor(snowflakeHandler(opts, clock));
  const { port, close } = await serveTcp('Thrift server', limits, logger, (socket) => {
    const receive = frameReceiver(
      (frame) => {
        if (socket.destroyed) return;
        const reply = processor.process(frame);
        if (reply) socket.write(reply);
      },
      0,
      maxFrameBytes,
    );
    socket.on('data', (data: Buffer) => {
      if (socket.destroyed) return;
      try {
        receive(data);
      } catch (err) {
        const reason = err instanceof ThriftProtocolViolation ? err.message : 'bad frame';
        const remote = `${socket.remoteAddress}:${socket.remotePort}`;
        logger?.warn({ remote, reason, err: (err as Error)?.message }, 'Thrift connection closed: bad request');
        socket.destroy();
      }
    });
  });
  logger?.info?.({ host: limits.host, port }, 'Snowflake Thrift server listening (framed transport, binary protocol)');
  return { port, close };
}

/** Twitter's `Snowflake` calls: IDs from the generator, the datacenter and worker IDs from its node. */
function snowflakeHandler(opts: ThriftServerOptions, clock: Clock): SnowflakeHandler {
  const node = opts.node;
  const nodeOf = typeof node === 'function' ? node : () => node;
  const dcField = opts.layout.nodeFields.find((f) => DATACENTER_NAMES.has(f.name.toLowerCase()));
  const workerFields = opts.layout.nodeFields.filter((f) => f !== dcField);

  return {
    getDatacenterId: () => (dcField ? BigInt(nodeOf()[dcField.name] ?? 0) : 0n),
    getWorkerId: () => {
      const node = nodeOf();
      let v = 0n;
      for (const f of workerFields) v = (v << BigInt(f.bits)) | BigInt(node[f.name] ?? 0);
      return v;
    },
    getTimestamp: () => BigInt(Math.floor(clock.now())),
    getId: (userAgent) => {
      if (!USER_AGENT_PATTERN.test(userAgent)) {
        throw new SnowflakeCallError(
          'InvalidUserAgentError',
          `user agent ${JSON.stringify(userAgent.slice(0, 64))} is invalid: it must match [a-zA-Z][a-zA-Z\\-0-9]* (a letter, then letters, digits and dashes)`,
        );
      }
      try {
        return opts.generator.next();
      } catch (err) {
        const code = (err as { code?: unknown } | null)?.code;
        if (typeof code === 'string' && code.startsWith('FLURRY_E_CLOCK')) {
          throw new SnowflakeCallError('InvalidSystemClock', `${code}: ${(err as Error).message}`);
        }
        throw err;
      }
    },
  };
}

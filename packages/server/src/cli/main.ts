#!/usr/bin/env node
// The `flurry` command (MAIN_HELP lists its commands): bad input exits 2 with `flurry: FLURRY_E_…: message`, other failures 1.
import { fileURLToPath } from 'node:url';
import { realpathSync } from 'node:fs';
import { errorLine, exitCodeFor, write, type CliIo, type Commands } from './io.js';
import { OFFLINE_COMMANDS } from './offline.js';
import { runCommand } from './pure.js';

/** `flurry --help`. */
export const MAIN_HELP = `Usage: flurry <command> [options]

Commands:
  serve                 Run the ID service (HTTP, Leaf-compatible HTTP, optional Thrift).
  next [-n N]           Print new IDs, one a line (node ID leased from the file registry).
  uuid [-n N]           Print new UUIDv7, one a line (node ID leased from the file registry).
  decode ID|UUID...     Print the fields, Unix ms and time of IDs (and of UUIDv7).
  layout [PRESET]       Print a layout's fields, end of life and capacity.
  key new               Print a new public-ID key.
  public encode ID...   Turn IDs into public IDs (key from --key or FLURRY_PUBLIC_KEY).
  public decode PUB...  Turn public IDs back into IDs.
  range --from --to     Print the ID interval of a time range (for WHERE id >= … AND id < …).
  sql --dialect D       Print SQL functions that decode, bound (and issue) IDs in PostgreSQL/MySQL.
  sequences create|list|show  Keys of segment mode (short, dense numbers per key; --store URL).
  registry init URL     Create (or with --print show) the lease table of a SQL registry.
  status [--watch]      Print every live holder of a node ID in the cluster (registry or --url).

A layout is --layout PRESET (twitter, leaf, discord, sonyflake, instagram, js53) or
--fields timestamp:41,datacenter:5,worker:5,sequence:12 [--epoch ISO|ms] [--unit 1ms|10ms|1s].
"flurry <command> --help" describes each command. Bad input exits with code 2.
-- ends the flags: later arguments may start with a dash (flurry decode -- -1).
`;

/** Each command's module, loaded only when it runs (benchmarks/cli-start.mjs measures what that saves). */
const COMMANDS: Commands = {
  serve: async () => (await import('./commands/serve.js')).serveCommand,
  ...OFFLINE_COMMANDS,
  range: async () => (await import('./commands/range.js')).rangeCommand,
  registry: async () => (await import('./commands/registry.js')).registryCommand,
  sequences: async () => (await import('./commands/sequences.js')).sequencesCommand,
  sql: async () => (await import('./commands/sql.js')).sqlCommand,
  status: async () => (await import('./commands/status.js')).statusCommand,
  uuid: async () => (await import('./commands/uuid.js')).uuidCommand,
};

/** Runs the CLI with `argv` (without node and the script); resolves to the exit code, errors printed on stderr. */
export async function runCli(io: CliIo): Promise<number> {
  const command = io.argv[0];
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    try {
      await write(command === undefined ? io.stderr : io.stdout, MAIN_HELP);
    } catch (err) {
      io.stderr.write(errorLine(err));
      return exitCodeFor(err);
    }
    return command === undefined ? 2 : 0;
  }
  return runCommand(COMMANDS, io);
}

function isMain(): boolean {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (isMain()) {
  runCli({ argv: process.argv.slice(2), env: process.env, stdout: process.stdout, stderr: process.stderr }).then(
    (code) => {
      process.exitCode = code;
      // Let stdout drain, then leave even if a library left a handle open.
      setTimeout(() => process.exit(code), 100).unref();
    },
    () => process.exit(1),
  );
}

/** `flurry registry init URL [--print]`: creates (or prints) a SQL registry's table (see {@link REGISTRY_HELP}). */
import { initSqlRegistry, sqlRegistryDdl } from '@flurry/coordination';
import { serverError } from '../../errors.js';
import { hasFlag } from '../args.js';
import { command, write } from '../io.js';

const FLAGS = { print: { type: 'boolean' } } as const;

export const REGISTRY_HELP = `Usage: flurry registry init [--print] URL

Creates the node-ID lease table of a SQL registry (CREATE TABLE IF NOT EXISTS) and checks
its columns. URL: postgres://user:pass@host:port/db[?table=name] or mysql://… (mariadb://).
--print only prints the DDL (nothing is contacted), for an administrator to run when the
application's user may not create tables. The registry also creates the table on first use.
`;

export const registryCommand = command(FLAGS, REGISTRY_HELP, async (args, io) => {
  const [sub, url, ...rest] = args.positionals;
  if (sub !== 'init' || url === undefined || rest.length > 0)
    throw serverError(
      'USAGE',
      'flurry registry has one subcommand: flurry registry init [--print] URL (a postgres:// or mysql:// registry URL)',
    );
  if (hasFlag(args, 'print')) return write(io.stdout, `${sqlRegistryDdl(url)};\n`);
  const r = await initSqlRegistry(url);
  await write(io.stdout, `registry table ${r.table} is ready in ${r.url}\n`);
});

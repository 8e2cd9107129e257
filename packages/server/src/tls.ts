// TLS for the HTTP and gRPC ports (docs/operations.md#tls): checked at start, read again on SIGHUP.
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { serverError } from './errors.js';

/** A certificate chain and its private key, PEM. */
type TlsPair = { readonly cert: Buffer; readonly key: Buffer };

export class TlsFiles {
  private current: TlsPair;
  private readonly listeners: Array<(pair: TlsPair) => void> = [];

  private constructor(
    readonly certFile: string,
    readonly keyFile: string,
  ) {
    this.current = load(certFile, keyFile);
  }

  /** The files of `config`, or undefined when TLS is off; `FLURRY_E_CONFIG` for one without the other or an unusable pair. */
  static fromConfig(config: { tlsCert?: string | undefined; tlsKey?: string | undefined }): TlsFiles | undefined {
    const { tlsCert, tlsKey } = config;
    if (tlsCert === undefined && tlsKey === undefined) return undefined;
    if (tlsCert === undefined || tlsKey === undefined) {
      throw serverError(
        'CONFIG',
        `${tlsCert === undefined ? '--tls-key' : '--tls-cert'} is set without ${tlsCert === undefined ? '--tls-cert' : '--tls-key'}: TLS needs both the certificate chain (--tls-cert / FLURRY_TLS_CERT) and its private key (--tls-key / FLURRY_TLS_KEY), PEM files; set both, or neither for plain HTTP`,
      );
    }
    return new TlsFiles(tlsCert, tlsKey);
  }

  pair(): TlsPair {
    return this.current;
  }

  /** Calls `fn` with the new pair after each successful {@link reload}. */
  onReload(fn: (pair: TlsPair) => void): void {
    this.listeners.push(fn);
  }

  /** Reads both files again for new connections; on failure (`FLURRY_E_CONFIG`) the pair in use stays. */
  reload(): void {
    this.current = load(this.certFile, this.keyFile);
    for (const fn of this.listeners) fn(this.current);
  }
}

function load(certFile: string, keyFile: string): TlsPair {
  const read = (file: string, what: string): Buffer => {
    try {
      return readFileSync(file);
    } catch (e) {
      throw serverError(
        'CONFIG',
        `cannot read the TLS ${what} file ${file} (${(e as NodeJS.ErrnoException).code ?? String(e)}); give a readable PEM file`,
        { file },
      );
    }
  };
  const pair = { cert: read(certFile, 'certificate'), key: read(keyFile, 'key') };
  try {
    createSecureContext(pair);
    return pair;
  } catch (e) {
    throw serverError(
      'CONFIG',
      `the TLS certificate ${certFile} and key ${keyFile} cannot be used (${(e as Error).message}); give a PEM certificate chain and the private key that matches it`,
      { certFile, keyFile },
    );
  }
}

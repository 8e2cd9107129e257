// The generator's `FLURRY_E_LEASE_EXPIRED` speaks to the lease holder; an HTTP caller is told what it can do instead.
import { FlurryError } from '@flurry/core';
import { RETRY_AFTER_SECONDS } from './respond.js';

/** `err` as an HTTP caller should read it: a fenced refusal reworded (code, status and details kept), else as it is. */
export function forHttpCaller(err: unknown): unknown {
  if (!(err instanceof FlurryError) || err.code !== 'FLURRY_E_LEASE_EXPIRED' || !('overByMs' in err.details))
    return err;
  const over = err.details.overByMs;
  const ms = typeof over === 'number' ? Math.round(over) : undefined;
  let why: string;
  if (ms === undefined) why = 'its node-ID lease was lost or released, and it holds no new one yet';
  else if (err.details.clock === 'wall')
    why = `its node-ID lease's wall-clock deadline passed ${ms} ms ago (the machine was probably suspended, or its clock stepped forward)`;
  else why = `its node-ID lease expired ${ms} ms ago (a renewal did not arrive in time, or the process was paused)`;
  return new FlurryError(
    err.code,
    `this instance issues no IDs now: ${why}; it resumes once the registry renews or grants the lease. Retry after the Retry-After delay (${RETRY_AFTER_SECONDS} s) or send the request to another instance`,
    { ...err.details },
  );
}

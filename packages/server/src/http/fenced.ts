/**
 * The 503 an HTTP caller gets while this instance is fenced. The generator's own message
 * (`FLURRY_E_LEASE_EXPIRED`) speaks to the program holding the lease ("acquire a new
 * lease"); an HTTP caller can do nothing of the kind, so the service says what it can do:
 * retry after `Retry-After`, or use another instance. The code, status and details stay.
 */
import { FlurryError } from '@flurry/core';
import { RETRY_AFTER_SECONDS } from './respond.js';

/**
 * `err` as an HTTP caller should read it: a `FLURRY_E_LEASE_EXPIRED` refusal of the
 * generator is reworded (why this instance issues nothing, and what the caller can do);
 * every other error is returned as it is.
 */
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

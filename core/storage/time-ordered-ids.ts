// Time-ordered ids (ULIDs) for rows that are listed or appended in creation order: jobs, log entries,
// suppression entries. Inserts append to the primary key's index instead of scattering across it.
import { randomFillSync } from 'node:crypto';
import { type ULIDFactory, monotonicFactory } from 'ulid';

/**
 * ulid asks its random source once for each of an id's 16 random characters, and its own source is a
 * call into the OS's generator each time (about 5 % of a webhook acknowledgement's CPU). This one
 * hands out bytes of a buffer the OS fills 4,096 at a time: as random, a call per 256 ids.
 */
const pool = Buffer.alloc(4096);
let next = pool.length;

function pooledRandom(): number {
  if (next >= pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  // A byte over 256 is below 1, as a PRNG's answer must be; ulid takes floor(x * 32): the byte's top five bits.
  const byte = pool[next] ?? 0;
  next += 1;
  return byte / 256;
}

/** A factory of ULIDs, increasing within the process even for ids of the same millisecond. */
export function timeOrderedIds(): ULIDFactory {
  return monotonicFactory(pooledRandom);
}

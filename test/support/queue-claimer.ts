// Child process for the queue crash test: leases a batch and then hangs until it is killed, the way a
// worker dies mid-batch. Usage: queue-claimer.ts DB_FILE WORKER_ID LEASE_MS
import { openStorage } from '../../bridge/storage.ts';

const [file, workerId, leaseMs] = process.argv.slice(2);
if (file === undefined || workerId === undefined || leaseMs === undefined) throw new Error('usage: queue-claimer.ts DB_FILE WORKER_ID LEASE_MS');
const { queue } = await openStorage(file);
const jobs = await queue.claimBatch({ workerId, limit: 100, leaseMs: Number(leaseMs) });
console.log(JSON.stringify(jobs.map((job) => job.id)));
setInterval(() => undefined, 60_000);

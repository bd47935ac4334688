// Child process for the cross-process quota race: takes from one token's ledger as fast as it can
// and prints how many units it was granted. Usage: quota-taker.ts DB_FILE_OR_URL TOKEN_ID LIMIT ATTEMPTS
import { openStorage } from '../../bridge/storage.ts';

const [file, tokenId, limit, attempts] = process.argv.slice(2);
if (file === undefined || tokenId === undefined || limit === undefined || attempts === undefined) {
  throw new Error('usage: quota-taker.ts DB_FILE TOKEN_ID LIMIT ATTEMPTS');
}
const { store } = await openStorage(file);
let granted = 0;
for (let i = 0; i < Number(attempts); i += 1) {
  if ((await store.takeQuota(tokenId, 'all', Number(limit))).granted) granted += 1;
}
await store.close();
console.log(granted);

// better-sqlite3, by Node.js line. Version 12 is the last that runs on Node 20; on Node 24 it aborts
// a process at exit whenever a database or statement object is still alive while Node tears the
// process down (`Assertion failed: (env) != nullptr` in RemoveEnvironmentCleanupHook, WiseLibs/
// better-sqlite3#1515; fixed in 13 by its move to node-addon-api). Version 13 needs Node 22 and
// crashes on 20. Both are installed (13 under the npm alias `better-sqlite3-n22`, with its prebuilt
// N-API binaries inside the package) and the running Node picks one. Their API is the same.
// Drop this file, and version 12, when Node 20 is no longer supported.
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

export type { BetterSqlite3 };

/** The package this Node.js line loads. */
export const BETTER_SQLITE3_PACKAGE = Number(process.versions.node.split('.')[0]) >= 22 ? 'better-sqlite3-n22' : 'better-sqlite3';

const Database = createRequire(import.meta.url)(BETTER_SQLITE3_PACKAGE) as typeof BetterSqlite3;
export default Database;

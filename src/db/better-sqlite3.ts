import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

const require = createRequire(import.meta.url);

/**
 * The better-sqlite3 this Node runs. Version 12 is built from source on install and runs on Node 20 and
 * 22; on Node 24 its statements abort the process as it exits (Node's ObjectWrap cleanup hooks changed).
 * Version 13 is Node-API, ships its binaries in the package and needs Node 22: installed beside 12 under
 * the name `better-sqlite3-napi`, and loaded from Node 22 on. Both have the same API.
 */
const moduleName = Number(process.versions.node.split('.')[0]) >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3';

/** The constructor: `new Database(file, options)`. */
export const Database = require(moduleName) as typeof BetterSqlite3;

/** Where the module is, for a worker thread to load the same one. */
export const databaseModulePath = require.resolve(moduleName);

/**
 * The connections the processes on one Postgres database share unless told otherwise (`DATABASE_POOL_SIZE`). A module
 * of its own, so the settings read it without loading the database layer.
 */
export const DEFAULT_POSTGRES_POOL_SIZE = 10;

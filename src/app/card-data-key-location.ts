import { existsSync } from 'node:fs';
import path from 'node:path';
import { isOnDisk, parseDatabaseUrl } from '../db/database.js';
import { isInsideFolder } from '../infra/real-paths.js';

/**
 * Where the card-data key file is when `CARD_DATA_KEY_FILE` is not set: a folder of its own beside
 * `data/`, so that a copy of the database's folder (a backup, a volume snapshot) does not carry the key too.
 */
export const DEFAULT_CARD_DATA_KEY_FILE = 'keys/card-data.key';
/** Where releases before `keys/` generated the key, beside the default database; still found there. */
export const OLDER_DEFAULT_CARD_DATA_KEY_FILE = 'data/card-data.key';

export interface CardDataKeyLocation {
  /** The key file, absolute. */
  file: string;
  /** Why the start should warn about where the key is, if it should. */
  warning: string | undefined;
}

const MOVE_ADVICE =
  'move the key file and its .old-* files to a folder of their own, apart from the database (docs/operations.md, "Moving the key")';

/**
 * The key file the settings name, or the default one: `keys/card-data.key`, unless only the older
 * default `data/card-data.key` exists (an install from before), which is then used and warned about.
 * A key in the SQLite database's folder (or the database in the key's) is warned about too.
 *
 * @example
 * cardDataKeyLocation(config.CARD_DATA_KEY_FILE, config.DATABASE_URL); // { file: '/srv/cards/keys/card-data.key', warning: undefined }
 */
export function cardDataKeyLocation(setting: string | undefined, databaseUrl: string, cwd = process.cwd()): CardDataKeyLocation {
  const olderDefault = path.resolve(cwd, OLDER_DEFAULT_CARD_DATA_KEY_FILE);
  const newDefault = path.resolve(cwd, DEFAULT_CARD_DATA_KEY_FILE);
  const usesOlderDefault = setting === undefined && !existsSync(newDefault) && existsSync(olderDefault);
  const file = setting !== undefined ? path.resolve(cwd, setting) : usesOlderDefault ? olderDefault : newDefault;
  const database = parseDatabaseUrl(databaseUrl);
  if (database.kind === 'sqlite' && isOnDisk(database.file)) {
    const databaseFile = path.resolve(cwd, database.file);
    if (isInsideFolder(databaseFile, path.dirname(file)) || isInsideFolder(file, path.dirname(databaseFile))) {
      return {
        file,
        warning: `The card-data key ${file} sits beside the database ${databaseFile}: a copy of that folder carries both the cards and their key; ${MOVE_ADVICE}`,
      };
    }
  }
  if (usesOlderDefault) {
    return { file, warning: `The card-data key is at the older default ${file}, not ${newDefault}; ${MOVE_ADVICE}` };
  }
  return { file, warning: undefined };
}

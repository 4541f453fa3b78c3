import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, fsyncSync, linkSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';

/**
 * Files only their owner may read or write (mode 0600) in folders only their owner may enter (0700,
 * when this process creates them): the card-data key, the SQLite database with its -wal and -shm,
 * backups. A file is written whole to a temporary name in its folder and only then given its real
 * name, so no reader ever sees it half-written.
 */

/** Creates `folder` and any missing parents with mode 0700; an existing folder keeps its mode. */
export function createPrivateFolder(folder: string): void {
  mkdirSync(folder, { recursive: true, mode: 0o700 });
}

/** Whether group or others may do anything with `file`. */
export function isOpenToOthers(file: string): boolean {
  return (statSync(file).mode & 0o077) !== 0;
}

/** Narrows an existing file to mode 0600 (a file of another owner is left as it is). */
export function restrictToOwner(file: string): void {
  try {
    if (isOpenToOthers(file)) chmodSync(file, 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'EPERM') throw error;
  }
}

/** Creates `file` empty with mode 0600 unless it exists, so that whatever fills it later inherits no wider mode. */
export function reservePrivateFile(file: string): void {
  try {
    closeSync(openSync(file, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

function writeTemporary(file: string, contents: string): string {
  createPrivateFolder(path.dirname(file));
  const temporary = `${file}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    writeSync(fd, contents);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return temporary;
}

function syncFolder(folder: string): void {
  const fd = openSync(folder, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes `file` (mode 0600) unless it exists: returns false, changing nothing, when another writer
 * got there first. The name appears only once the contents are complete (`link` refuses to replace).
 */
export function createPrivateFileOnce(file: string, contents: string): boolean {
  const temporary = writeTemporary(file, contents);
  try {
    linkSync(temporary, file);
    syncFolder(path.dirname(file));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    rmSync(temporary, { force: true });
  }
}

/** Writes `file` (mode 0600), replacing what was there in one step (`rename`). */
export function replacePrivateFile(file: string, contents: string): void {
  const temporary = writeTemporary(file, contents);
  try {
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  syncFolder(path.dirname(file));
}

/** Gives `from` the name `to` in one step, replacing `to`; durable once this returns. */
export function moveFile(from: string, to: string): void {
  renameSync(from, to);
  syncFolder(path.dirname(to));
}

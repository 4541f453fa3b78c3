import { realpathSync } from 'node:fs';
import path from 'node:path';

/**
 * Where `file` really is, symbolic links resolved, whether or not it exists yet: the longest part of
 * its path that exists, resolved, with the rest appended. So a link into a folder cannot make a path
 * look like it is somewhere else. `..` is taken by name first (`path.resolve`): check the path as the
 * caller will then use it, resolved the same way.
 */
export function realPathOf(file: string): string {
  const absolute = path.resolve(file);
  const missing: string[] = [];
  let existing = absolute;
  for (;;) {
    try {
      return path.join(realpathSync(existing), ...missing);
    } catch (error) {
      const parent = path.dirname(existing);
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || parent === existing) throw error;
      missing.unshift(path.basename(existing));
      existing = parent;
    }
  }
}

/** Whether `file` is `folder` or anywhere inside it, both taken as they really are (`realPathOf`). */
export function isInsideFolder(file: string, folder: string): boolean {
  const relative = path.relative(realPathOf(folder), realPathOf(file));
  return relative === '' || (!relative.startsWith(`..${path.sep}`) && relative !== '..' && !path.isAbsolute(relative));
}

// Preloaded into a process under test (NODE_OPTIONS=--import=<this file>): once the file named by
// FAIL_FLUSH_FLAG exists, every fdatasync fails with EIO, as on a disk that has stopped taking writes.
import fs from 'node:fs';

const flag = process.env.FAIL_FLUSH_FLAG;
const fdatasync = fs.fdatasync;

fs.fdatasync = (fd, callback) => {
  if (flag === undefined || !fs.existsSync(flag)) return fdatasync(fd, callback);
  const error = Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO', errno: -5, syscall: 'fdatasync' });
  process.nextTick(callback, error);
};

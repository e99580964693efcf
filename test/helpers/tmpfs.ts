// A real small filesystem for the full-disk tests (issue 21): a tmpfs mounted in a temp dir, which only root
// may do. Null when it cannot be mounted (not root, no mount): the caller skips with the reason.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmdirSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function mountTmpfs(sizeMb: number, prefix = 'parlayd-tmpfs-'): string | null {
  if (process.getuid?.() !== 0) return null;
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    rmdirSync(dir);
    return null;
  }
}

/** Grows or shrinks a mounted tmpfs in place (what an operator freeing or adding space does). */
export const resizeTmpfs = (mountPoint: string, sizeMb: number) => execFileSync('mount', ['-o', `remount,size=${sizeMb}m`, mountPoint]);

export function unmountTmpfs(mountPoint: string): void {
  execFileSync('umount', [mountPoint]);
  rmdirSync(mountPoint);
}

/** Writes a file until the filesystem refuses (ENOSPC): the disk is then full for everyone. */
export function fillDisk(path: string): void {
  const fd = openSync(path, 'w');
  try {
    for (const size of [1024 * 1024, 64 * 1024, 4096, 512, 1]) {
      const chunk = Buffer.alloc(size, 1);
      for (;;) {
        try {
          writeSync(fd, chunk);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw err;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
}

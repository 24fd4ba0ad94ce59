/**
 * Writing a file that other processes may read at the same moment: the Jest adapter's facades, the
 * loader's code cache.
 */
import { fs } from "../builtins.js";

/**
 * Writes `file` under a temporary name beside it, then renames it into place, so that a concurrent
 * reader sees the old file or the new one, never half of one. Throws what the file system throws,
 * leaving no temporary file behind.
 */
export function writeFileAtomically(file: string, data: string | Uint8Array): void {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(temporary, data);
    fs.renameSync(temporary, file);
  } catch (error) {
    // unlinkSync, not rmSync: rmSync loads Node's rimraf module, a start-up cost for the loader.
    try {
      fs.unlinkSync(temporary);
    } catch {
      // Never written.
    }
    throw error;
  }
}

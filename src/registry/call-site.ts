/** A captured caller whose text is formatted only when someone reads it. */
import { path, url } from "../builtins.js";
import { parseAuditMode } from "./audit-env.js";

export interface CallSite {
  readonly stack?: string;
}

/**
 * Whether this process runs an audit (DISPATCH_HOOK_AUDIT names a mode, or the command line asked
 * for a record): only then does a registry capture call sites unless told to. A capture costs
 * several times the rest of a registration (bench/RESULTS.md).
 */
export function auditRunning(): boolean {
  return parseAuditMode(process.env.DISPATCH_HOOK_AUDIT, false) !== "off" || Boolean(process.env.DISPATCH_HOOK_AUDIT_DIR);
}

/**
 * Captures the frame that called `above`, and only that frame: the stack limit is 1 for the
 * capture and put back at once (about a third cheaper than the default 10 frames; see
 * bench/RESULTS.md). V8 formats stacks lazily, so the string work happens only when the audit log is
 * read.
 */
export function captureCallSite(above: Function): CallSite {
  const holder: CallSite = {};
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 1;
  try {
    Error.captureStackTrace(holder, above);
  } finally {
    Error.stackTraceLimit = limit;
  }
  return holder;
}

/** "path/to/file.js:12", relative to the working directory, or "unknown". */
export function formatCallSite(site: CallSite | undefined): string {
  if (site === undefined) return "unknown";
  const frame = site.stack?.split("\n").find((line) => line.trimStart().startsWith("at "));
  if (frame === undefined) return "unknown";
  const text = frame.trim().slice(3);
  const location = text.endsWith(")") ? text.slice(text.lastIndexOf("(") + 1, -1) : text;
  const match = /^(.*):(\d+):\d+$/.exec(location);
  if (match === null) return location;
  let file = match[1] as string;
  if (file.startsWith("file://")) {
    try {
      file = url.fileURLToPath(file);
    } catch {
      // Keep the URL as it is.
    }
  }
  if (file.startsWith("/")) {
    // Relative to the working directory when that is shorter: "../ml-ops/dispatch/numba.js" reads
    // better than a long absolute path, and "/usr/lib/…" better than "../../../../usr/lib/…".
    const rel = path.relative(process.cwd(), file);
    if (rel.length < file.length) file = rel;
  }
  return `${file}:${match[2]}`;
}

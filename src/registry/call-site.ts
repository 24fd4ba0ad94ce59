/** A registration's call site: captured cheaply when it is made, formatted only when the audit is read. */
import { path, url } from "../builtins.js";

/** @internal */
export interface CallSite {
  readonly stack?: string;
}

/**
 * Captures only the frame that called `above`: a stack limit of 1 is about a third cheaper than the
 * default 10 (bench/RESULTS.md), and V8 formats the stack lazily, when the audit log is read.
 * @internal
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

/** "path/to/file.js:12", relative to the working directory, or "unknown". @internal */
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
    // Relative to the working directory only when that is shorter ("/usr/lib/…", not "../../../../usr/lib/…").
    const rel = path.relative(process.cwd(), file);
    if (rel.length < file.length) file = rel;
  }
  return `${file}:${match[2]}`;
}

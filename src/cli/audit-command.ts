import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AuditFile } from "../hooks/audit-mode.js";
import { type AuditEvent, AuditLog } from "../registry/audit-log.js";
import type { Io } from "./io.js";
import { createStyle } from "./style.js";

export const auditHelp = `Usage: dispatch-hook audit [--json] -- <node arguments…>

Runs node with the dispatch-hook loader (--import dispatch-hook/loader.mjs) and the arguments
after "--", then prints the audit: one row per registration, then the problems.

  --json    print the audit events as JSON Lines, then one line with the report
  --help    show this help

Exit code: the program's own if it failed; otherwise 1 if any registration failed, is still
pending for a backend that loaded, conflicts, or an expected op type never arrived; otherwise 0.
`;

const loaderPath = fileURLToPath(new URL("../../loader.mjs", import.meta.url));

export async function auditCommand(args: readonly string[], io: Io): Promise<number> {
  const dash = args.indexOf("--");
  const flags = dash === -1 ? args : args.slice(0, dash);
  const nodeArgs = dash === -1 ? [] : args.slice(dash + 1);
  if (flags.includes("--help") || flags.includes("-h")) {
    io.out(auditHelp);
    return 0;
  }
  const unknown = flags.filter((flag) => flag !== "--json");
  if (unknown.length > 0 || nodeArgs.length === 0) {
    io.err(
      `${unknown.length > 0 ? `dispatch-hook audit: unknown option ${unknown[0]}` : "dispatch-hook audit: nothing to run"}\n\n${auditHelp}`,
    );
    return 2;
  }
  const style = createStyle({ isTTY: io.isTTY }, io.env);
  const dir = mkdtempSync(join(tmpdir(), "dispatch-hook-audit-"));
  const file = join(dir, "audit.json");
  try {
    const code = await new Promise<number>((resolve, reject) => {
      const child = spawn(process.execPath, ["--import", loaderPath, ...nodeArgs], {
        cwd: io.cwd,
        env: { ...io.env, DISPATCH_HOOK_AUDIT_FILE: file, DISPATCH_HOOK_AUDIT: "" },
        stdio: ["inherit", "inherit", "inherit"],
      });
      child.on("error", reject);
      child.on("close", (status, signal) => resolve(status ?? (signal === null ? 1 : 128)));
    });
    let audit: AuditFile;
    try {
      audit = JSON.parse(readFileSync(file, "utf8")) as AuditFile;
    } catch {
      io.err(
        `${style.red("dispatch-hook audit:")} the program exited (code ${code}) before the loader could write its audit; was it killed?\n`,
      );
      return code === 0 ? 1 : code;
    }
    if (flags.includes("--json")) {
      for (const event of audit.events) io.out(`${JSON.stringify(event)}\n`);
      io.out(`${JSON.stringify({ kind: "report", ok: audit.report.ok, problems: audit.report.problems })}\n`);
    } else {
      const log = new AuditLog();
      for (const event of audit.events) log.record(event as Omit<AuditEvent, "seq"> as never);
      const text = log.format();
      io.out(
        `\n${style.bold("dispatch-hook audit")}\n${audit.report.ok ? text : text.replace(/^(\d+ problem\(s\):)$/m, style.red("$1"))}\n`,
      );
    }
    if (code !== 0) return code;
    return audit.report.ok ? 0 : 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { constants, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AuditFile } from "../hooks/audit-mode.js";
import { formatReport } from "../registry/audit-format.js";
import type { Io } from "./io.js";
import { createStyle } from "./style.js";

export const auditHelp = `Usage: dispatch-hook audit [--json] -- <node arguments…>

Runs node with the dispatch-hook loader (--import dispatch-hook/loader.mjs) and the arguments
after "--", then prints the audit of every registry in the program, of every installed copy of
dispatch-hook: one row per registration, what loaded, then the problems.

  --json    print JSON Lines: one line per registration, per entry written outside the registry
            and per problem, then one line with the verdict
  --help    show this help

Exit code: the program's own if it failed (128 + n for signal n); otherwise 1 if any registration
failed, is still pending for a backend that loaded, conflicts, or an expected op type never
arrived, or if the loader found nothing to watch; otherwise 0.
`;

const loaderPath = fileURLToPath(new URL("../../loader.mjs", import.meta.url));

/** How the child ended, as a shell would report it. */
function exitOf(status: number | null, signal: NodeJS.Signals | null): { code: number; text: string } {
  if (signal !== null) {
    const n = (constants.signals as Record<string, number>)[signal] ?? 0;
    return { code: 128 + n, text: `was killed by ${signal} (exit code ${128 + n})` };
  }
  return { code: status ?? 1, text: `exited with code ${status ?? 1}` };
}

type Read = { ok: true; audit: AuditFile } | { ok: false; why: string };

function readAudit(file: string): Read {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return { ok: false, why: "it stopped before the loader could write its audit (it was killed, or it exited before the loader ran)" };
  }
  let audit: AuditFile;
  try {
    audit = JSON.parse(text) as AuditFile;
  } catch (error) {
    return { ok: false, why: `its audit file is corrupt (${error instanceof Error ? error.message : String(error)})` };
  }
  if (typeof audit !== "object" || audit === null || audit.version !== 2 || typeof audit.report !== "object" || audit.report === null) {
    return { ok: false, why: "its audit file is not one this version of dispatch-hook reads (was it written by another version?)" };
  }
  return { ok: true, audit };
}

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
    const exit = await new Promise<{ code: number; text: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ["--import", loaderPath, ...nodeArgs], {
        cwd: io.cwd,
        env: { ...io.env, DISPATCH_HOOK_AUDIT_FILE: file, DISPATCH_HOOK_AUDIT: "" },
        stdio: ["inherit", "inherit", "inherit"],
      });
      child.on("error", reject);
      child.on("close", (status, signal) => resolve(exitOf(status, signal)));
    });
    const read = readAudit(file);
    if (!read.ok) {
      io.err(`${style.red("dispatch-hook audit:")} the program ${exit.text}, and ${read.why}. Nothing was checked.\n`);
      return exit.code === 0 ? 1 : exit.code;
    }
    const { report } = read.audit;
    const crashed = exit.code !== 0;
    if (flags.includes("--json")) {
      for (const r of report.registrations) io.out(`${JSON.stringify({ kind: "registration", ...r })}\n`);
      for (const w of report.outside) io.out(`${JSON.stringify({ kind: "outside", ...w })}\n`);
      for (const p of report.problems) io.out(`${JSON.stringify({ ...p, kind: "problem", problem: p.kind })}\n`);
      io.out(
        `${JSON.stringify({ kind: "verdict", ok: report.ok && !crashed, checked: report.checked, exitCode: exit.code, problems: report.problems.length })}\n`,
      );
    } else {
      const verdict = crashed
        ? style.red(
            `the program ${exit.text}: the audit below is what it recorded before it stopped, and proves nothing about what it did not reach`,
          )
        : undefined;
      const text = formatReport(report, verdict === undefined ? {} : { verdict });
      io.out(`\n${style.bold("dispatch-hook audit")}\n${report.ok ? text : text.replace(/^(\d+ problem\(s\):)$/m, style.red("$1"))}\n`);
    }
    if (crashed) return exit.code;
    return report.ok ? 0 : 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

import { spawn } from "node:child_process";
import { accessSync, existsSync, constants as fileAccess, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { constants, tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { loaderVariable } from "../hooks/install.js";
import { foldRun, formatRun, type RunAudit } from "../hooks/run-fold.js";
import { makeDirectory, runDirVariable } from "../registry/run-records.js";
import { createStyle, type Io, parseCommand } from "./io.js";
import { judgeRunning, waitForRun } from "./run-wait.js";

export const auditHelp = `Usage: dispatch-hook audit [options] -- <command> [arguments…]
       dispatch-hook audit [options] -- <node arguments…>
       dispatch-hook audit --dir <path>

Runs the command with the dispatch-hook loader in every Node process it starts (through
NODE_OPTIONS), and gives them a run directory (${runDirVariable}) where each process and each
worker thread writes its own audit record when it ends. One exception: Node's test runner process
(node --test) runs no --import preload, so it writes none; it runs none of the tests, and each test
file's process does write one. A child a process started and did not wait for is waited for (5 s
if it never starts the loader, 30 s in all; one still running then fails the run; a signal ends
the wait). Then folds every record into one report:
one row per process, the audit of each process with a problem (where none has one, of the
only process, or of the only one that registered anything), and the verdict.

"-- node app.mjs", "-- npm test", "-- npx vitest run" and "-- ./run.sh" run that command;
"-- app.mjs" and "-- --test a.test.mjs" (a JavaScript or TypeScript file, .js .mjs .cjs .ts .mts
.cts .jsx .tsx, or node options first) run this Node with those arguments.
With --dir and no command, it folds the records already in that directory.

  --json              print the report as one JSON document (format "dispatch-hook/audit",
                      version 1) on stdout; the program's own stdout goes to stderr instead
  --json-file <path>  write that JSON document to a file; without --json, the program's
                      output is left alone and the text report prints
  --dir <path>        use this run directory (created if missing; with a command, it must
                      be empty), and keep it
  --keep              keep the run directory, and print where it is
  --help              show this help

Exit code: the program's own if it failed (128 + n for signal n); otherwise 1 if any process's
audit has a problem, a process wrote no record, the run directory holds a file that is not a
record, or nothing was checked; otherwise 0. 2 for a usage error, or a run directory or
--json-file that cannot be written (both are checked before the command starts).
`;

const loaderUrl = pathToFileURL(fileURLToPath(new URL("../../loader.mjs", import.meta.url))).href;

/** How the child ended, as a shell would report it. */
function exitOf(status: number | null, signal: NodeJS.Signals | null): { code: number; text: string } {
  if (signal !== null) {
    const n = (constants.signals as Record<string, number>)[signal] ?? 0;
    return { code: 128 + n, text: `was killed by ${signal} (exit code ${128 + n})` };
  }
  return { code: status ?? 1, text: `exited with code ${status ?? 1}` };
}

/** A script node runs: JavaScript or TypeScript, in either module system. */
const scriptFile = /\.[cm]?[jt]sx?$/;

/**
 * Whether the words after "--" are node's arguments (a script or an option first) rather than a
 * command. Any other file (the node binary, a shell script, an extensionless bin) is a command.
 */
function isNodeArgs(words: readonly string[]): boolean {
  const first = words[0] as string;
  return first.startsWith("-") || scriptFile.test(first);
}

/**
 * Whether the command is Node's test runner (`--test` among node's own options, before any script):
 * its own process runs no `--import` preload, so the loader never starts in it (each test file's
 * process, which it starts, has the loader). With test isolation off it runs the tests itself, and
 * then does load the loader.
 */
function isTestRunner(program: string, args: readonly string[]): boolean {
  if (program !== process.execPath && !/^node(?:\.exe)?$/.test(basename(program))) return false;
  const script = args.findIndex((a) => !a.startsWith("-") && scriptFile.test(a));
  return (script < 0 ? args : args.slice(0, script)).includes("--test");
}

/** Why `file` cannot be written (checked before the command runs, without writing it), or undefined. */
function unwritable(file: string, given: string): string | undefined {
  if (/[\\/]$/.test(given)) return "it names a directory (it ends with a slash)";
  const dir = dirname(file);
  try {
    if (!statSync(dir).isDirectory()) return `${dir} is not a directory`;
    if (!existsSync(file)) {
      accessSync(dir, fileAccess.W_OK);
      return undefined;
    }
    if (statSync(file).isDirectory()) return "it is a directory";
    accessSync(file, fileAccess.W_OK);
    return undefined;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ENOENT" || code === "ENOTDIR") return `the directory ${dir} does not exist`;
    return error instanceof Error ? error.message : String(error);
  }
}

/** Creates (or checks) the run directory, so that a bad one stops the command before it starts. */
function prepareDir(dir: string | undefined): { dir: string; error?: string } {
  const path = dir ?? mkdtempSync(join(tmpdir(), "dispatch-hook-run-"));
  try {
    makeDirectory(path);
    const probe = join(path, `.probe-${process.pid}`);
    writeFileSync(probe, "");
    rmSync(probe);
    return { dir: path };
  } catch (error) {
    return { dir: path, error: error instanceof Error ? error.message : String(error) };
  }
}

function run(command: string, args: readonly string[], io: Io, env: Record<string, string | undefined>, json: boolean) {
  return new Promise<{ code: number; text: string; pid: number } | { error: string }>((done) => {
    // The program's stdout goes to stderr while the JSON document owns stdout.
    const child = spawn(command, args, { cwd: io.cwd, env, stdio: ["inherit", json ? 2 : "inherit", "inherit"] });
    // A signal sent to the audit (a CI job cancelled, kill) goes to the program: the audit then folds what was recorded and
    // removes its run directory, instead of dying and leaving the program running. At a terminal, Ctrl-C and a hangup reach
    // the program already (the whole foreground group gets them): sent again, a second Ctrl-C would force-quit many programs.
    const fromTerminal = process.stdin.isTTY === true;
    const forward = (signal: NodeJS.Signals) => {
      if (signal === "SIGTERM" || !fromTerminal) child.kill(signal);
    };
    const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
    for (const signal of signals) process.on(signal, forward);
    const stop = () => {
      for (const signal of signals) process.removeListener(signal, forward);
    };
    child.on("error", (error) => {
      stop();
      done({ error: error.message });
    });
    child.on("close", (status, signal) => {
      stop();
      done({ ...exitOf(status, signal), pid: child.pid ?? -1 });
    });
  });
}

export async function auditCommand(args: readonly string[], io: Io): Promise<number> {
  const parsed = parseCommand(args, io, "audit", auditHelp, {
    "--json": "boolean",
    "--keep": "boolean",
    "--help": "boolean",
    "-h": "boolean",
    "--json-file": "string",
    "--dir": "string",
  });
  if (typeof parsed === "number") return parsed;
  const { flags, rest: words, usage } = parsed;
  const given = typeof flags["--dir"] === "string" ? resolve(io.cwd, flags["--dir"]) : undefined;
  if (words.length === 0 && given === undefined) return usage("nothing to run");
  const jsonFile = typeof flags["--json-file"] === "string" ? resolve(io.cwd, flags["--json-file"]) : undefined;
  // --json puts the document on stdout, with --json-file too (then in both places).
  const toStdout = flags["--json"] === true;
  const style = createStyle({ isTTY: io.isTTY }, io.env);
  const fileError = (why: string) => {
    io.err(`${style.red("dispatch-hook audit:")} [ERR_DISPATCH_HOOK_AUDIT_FILE] cannot write the JSON file ${jsonFile}: ${why}\n`);
    return 2;
  };
  const badFile = jsonFile === undefined ? undefined : unwritable(jsonFile, flags["--json-file"] as string);
  if (badFile !== undefined) return fileError(badFile);
  const prepared = prepareDir(given);
  if (prepared.error !== undefined) {
    io.err(
      `${style.red("dispatch-hook audit:")} [ERR_DISPATCH_HOOK_AUDIT_DIR] cannot write the run directory ${prepared.dir}: ${prepared.error}\n`,
    );
    return 2;
  }
  // A run's audit is its own: anything in the directory (an earlier run's records, another file) would be folded into it.
  const earlier = given === undefined || words.length === 0 ? [] : readdirSync(given);
  if (earlier.length > 0) {
    io.err(
      `${style.red("dispatch-hook audit:")} [ERR_DISPATCH_HOOK_AUDIT_DIR] the run directory ${given} already holds ${earlier.length} file(s) (${earlier.slice(0, 3).join(", ")}${earlier.length > 3 ? ", …" : ""}), which this run's audit would fold as its own. Empty it or give another --dir; to fold what is there, run audit --dir ${JSON.stringify(flags["--dir"])} with no command.\n`,
    );
    return 2;
  }
  const { dir } = prepared;
  const keep = given !== undefined || flags["--keep"] === true;
  /** The JSON document, to the file and to stdout as asked; false when the file could not be written. */
  const emit = (document: RunAudit & { exitCode: number | null; error?: string }): boolean => {
    let written = true;
    if (jsonFile !== undefined) {
      try {
        writeFileSync(jsonFile, `${JSON.stringify(document, null, 2)}\n`);
      } catch (error) {
        // Checked before the command started; something changed since. The report still prints.
        fileError(error instanceof Error ? error.message : String(error));
        written = false;
      }
    }
    if (toStdout) io.out(`${JSON.stringify(document)}\n`);
    return written;
  };
  try {
    let exit: { code: number; text: string; pid: number } | undefined;
    let testRunner = false;
    if (words.length > 0) {
      const nodeArgs = isNodeArgs(words);
      testRunner = nodeArgs ? isTestRunner(process.execPath, words) : isTestRunner(words[0] as string, words.slice(1));
      const env = {
        ...io.env,
        [runDirVariable]: dir,
        // The command's first process is the first of its tree (install.ts): none is inherited from outside the run.
        [loaderVariable]: "",
        DISPATCH_HOOK_AUDIT: "",
        NODE_OPTIONS: `${io.env.NODE_OPTIONS ?? ""} --import=${loaderUrl}`.trim(),
      };
      const ran = await run(nodeArgs ? process.execPath : (words[0] as string), nodeArgs ? words : words.slice(1), io, env, toStdout);
      if ("error" in ran) {
        // A file that is no script, and not executable either: say how to run it with node.
        const hint = existsSync(resolve(io.cwd, words[0] as string)) ? ` (to run it with node: -- node ${words[0]})` : "";
        const error = `cannot run ${JSON.stringify(words[0])}: ${ran.error}${hint}`;
        io.err(`${style.red("dispatch-hook audit:")} ${error}\n`);
        // The JSON document is promised either way: nothing ran, so nothing is ok.
        emit({ ...foldRun(dir, undefined), ok: false, exitCode: 127, error });
        return 127;
      }
      exit = ran;
    }
    // A process of the run that outlives the command (a child not waited for) is waited for, and judged by its record.
    const waited = exit === undefined ? { running: new Set<number>(), why: "" } : await waitForRun(dir);
    const audit = judgeRunning(foldRun(dir, exit, waited.running.size === 0 ? undefined : (pid) => waited.running.has(pid)), waited);
    const crashed = exit !== undefined && exit.code !== 0;
    const document: RunAudit & { exitCode: number | null } = { ...audit, ok: audit.ok && !crashed, exitCode: exit?.code ?? null };
    const written = emit(document);
    if (!toStdout) {
      const text = formatRun(audit, io.cwd);
      const painted = audit.ok ? text : text.replace(/^(not ok:.*|\d+ problem\(s\):)$/gm, (line) => style.red(line));
      io.out(`\n${style.bold("dispatch-hook audit")}\n${painted}\n`);
      if (testRunner && exit !== undefined && !audit.processes.some((p) => p.pid === exit?.pid)) {
        io.out(
          `note: pid ${exit.pid} (the node --test runner) wrote no record: Node's test runner process runs no --import preload, so the loader never starts in it; it runs none of the tests, and each test file's process is audited\n`,
        );
      }
      // A test runner (node --test, Vitest, Jest, or a script that runs one) exits 1 when dispatch-hook's reporter or a strict audit fails the run.
      const runner = testRunner || words.some((w) => /(^|[\\/])(vitest|jest)(\.[cm]?js)?$/.test(w) || w === "test");
      if (crashed && (audit.ok || !runner || (exit?.code ?? 0) > 128)) {
        io.out(
          `${style.red(`the program ${exit?.text}`)}: the audit above is what its processes recorded before they stopped, and proves nothing about what they did not reach\n`,
        );
      } else if (crashed) {
        // A test runner whose dispatch-hook reporter (or a strict audit) failed the run for the problems above exits non-zero too.
        io.out(
          `${style.red(`the program ${exit?.text}`)}, as a test run does when a test fails, or when dispatch-hook's reporter or a strict audit fails it for problems like those above; what its processes did not reach before they stopped is not in the audit\n`,
        );
      }
    }
    if (keep) io.err(`dispatch-hook audit: the run directory is kept at ${dir}\n`);
    if (crashed) return exit?.code ?? 1;
    if (!written) return 2;
    return audit.ok ? 0 : 1;
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Builds real fixture trees (a fake app with node_modules/<framework> and node_modules/<plugin>)
 * in a temporary directory, and runs real node processes on them.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
export const loader = join(repoRoot, "loader.mjs");
/** The node binary under test: the matrix script points this at Node 22, 24 and 26. */
export const nodeBinary = process.env.DISPATCH_HOOK_TEST_NODE || process.execPath;

export type Tree = Record<string, string | { readonly symlink: string }>;

/** The package.json of a fixture app named "app", with the fields given (dependencies, type, dispatchHook). */
export function appJson(fields: Record<string, unknown> = {}): string {
  return JSON.stringify({ name: "app", ...fields });
}

const trees: string[] = [];

/** Removes every tree this test file made (test/setup.ts calls it after each file). */
export function removeTrees(): void {
  for (const root of trees.splice(0)) rmSync(root, { recursive: true, force: true });
}

export function makeTree(files: Tree): string {
  const root = mkdtempSync(join(tmpdir(), "dispatch-hook-"));
  trees.push(root);
  for (const [path, content] of Object.entries(files)) {
    const target = join(root, path);
    mkdirSync(dirname(target), { recursive: true });
    if (typeof content === "string") writeFileSync(target, content);
    else if (content.symlink === "<repo>") symlinkSync(repoRoot, target, "dir");
    else symlinkSync(isAbsolute(content.symlink) ? content.symlink : join(root, content.symlink), target, "dir");
  }
  return root;
}

export interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function run(cwd: string, args: readonly string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(nodeBinary, args, { cwd, env: { ...process.env, NODE_OPTIONS: "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The version of the node binary under test, e.g. "20.20.2". */
export const nodeVersion =
  nodeBinary === process.execPath
    ? process.versions.node
    : execFileSync(nodeBinary, ["-p", "process.versions.node"], { encoding: "utf8" }).trim();

/** The JSON line a scenario prints last. */
export function lastJson(stdout: string): Record<string, unknown> {
  const line = stdout
    .trim()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .pop();
  if (line === undefined) throw new Error(`no JSON line in stdout:\n${stdout}`);
  return JSON.parse(line) as Record<string, unknown>;
}

/**
 * What users install: the project packed with `npm pack` (its prepack runs the full build, in a copy
 * of the sources, so the dist/ other tests run is left alone), installed into a fresh app from the
 * tarball, then: every exports target and its types exist and nothing else ships; a consumer
 * type-checks on the node16 and bundler resolutions, and internals are not part of the typed API;
 * the bin runs; the loader works from the installed copy.
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { appJson, makeTree, nodeBinary, repoRoot, run } from "./fixture.js";

const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const npx = process.platform === "win32" ? "npx.cmd" : "npx";
const tsc = join(repoRoot, "node_modules/typescript/bin/tsc");
let app = "";
let installed = "";
let tarball = "";

/** Packs a copy of the sources (prepack builds there) and installs the tarball into a fresh app. */
function packAndInstall(): void {
  const copy = makeTree({});
  for (const entry of [
    "src",
    "scripts",
    "package.json",
    "package-lock.json",
    "tsconfig.json",
    "tsconfig.build.json",
    "loader.mjs",
    "README.md",
    "CHANGELOG.md",
    "docs",
    "LICENSE",
  ]) {
    cpSync(join(repoRoot, entry), join(copy, entry), { recursive: true });
  }
  symlinkSync(join(repoRoot, "node_modules"), join(copy, "node_modules"), "dir");
  const out = makeTree({});
  // The prepack script (the full build) prints before npm's JSON.
  const stdout = execFileSync(npm, ["pack", "--json", "--pack-destination", out], {
    cwd: copy,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  const packed = JSON.parse(stdout.slice(stdout.search(/^\[/m))) as Array<{ filename: string }>;
  tarball = join(out, packed[0]?.filename ?? "");
  app = makeTree({
    "package.json": appJson({ type: "module", dependencies: { tensorkit: "file:./tensorkit", "kit-ops": "file:./kit-ops" } }),
    "tensorkit/package.json": JSON.stringify({
      name: "tensorkit",
      type: "module",
      exports: { "./*": "./*" },
      dependencies: { "dispatch-hook": "*" },
      dispatchHook: { backends: { "*": { module: "./backends/{backend}/table.js", export: "{backend}Table" } } },
    }),
    "tensorkit/backends/cpu/table.js":
      'import { Dispatcher } from "dispatch-hook";\nexport const cpuTable = new Dispatcher({ name: "cpuTable", backend: "cpu" });\n',
    "kit-ops/package.json": JSON.stringify({
      name: "kit-ops",
      type: "module",
      exports: { "./*": "./*" },
      dependencies: { tensorkit: "*", "dispatch-hook": "*" },
      dispatchHook: { registrations: { cpu: "./reg/cpu.js" }, expects: { cpu: ["Conv"] } },
    }),
    "kit-ops/ops.js": "export class Conv {}\n",
    "kit-ops/reg/cpu.js":
      'import { register } from "dispatch-hook";\nimport { Conv } from "../ops.js";\nregister("cpu", Conv, () => "conv on cpu");\n',
    "main.mjs": [
      'import { cpuTable } from "tensorkit/backends/cpu/table.js";',
      'import { Conv } from "kit-ops/ops.js";',
      "console.log(JSON.stringify({ result: cpuTable.resolve(new Conv())() }));",
    ].join("\n"),
  });
  execFileSync(npm, ["install", "--no-audit", "--no-fund", "--prefer-offline", "--ignore-scripts", tarball], { cwd: app, stdio: "ignore" });
  installed = join(app, "node_modules/dispatch-hook");
}

function targets(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (value !== null && typeof value === "object") return Object.values(value).flatMap(targets);
  return [];
}

function files(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name), base) : [join(dir, e.name).slice(base.length + 1)],
  );
}

describe("the packed package, installed", () => {
  beforeAll(packAndInstall, 240_000);

  it("has every exports target and its types, and ships only bundles, their maps, the public declarations and the loader", () => {
    const pkg = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as {
      exports: Record<string, unknown>;
      bin: Record<string, string>;
    };
    const missing = [...targets(pkg.exports), ...Object.values(pkg.bin)].filter((target) => !existsSync(join(installed, target)));
    expect(missing).toEqual([]);
    // Every entry with conditions names its types, first (TypeScript takes the first condition that matches).
    const conditional = Object.entries(pkg.exports).filter(([, entry]) => typeof entry === "object" && entry !== null);
    expect(conditional.map(([key]) => key)).toContain(".");
    expect(conditional.filter(([, entry]) => Object.keys(entry as object)[0] !== "types").map(([key]) => key)).toEqual([]);
    const shipped = files(installed);
    const unexpected = shipped.filter(
      (f) =>
        !/^dist\/bundle\/[\w-]+(\.script)?\.c?js(\.map)?$/.test(f) &&
        !/^dist\/types\/.*\.d\.ts$/.test(f) &&
        !/^docs\/[\w-]+\.md$/.test(f) &&
        !["loader.mjs", "package.json", "README.md", "CHANGELOG.md", "LICENSE"].includes(f),
    );
    expect(unexpected).toEqual([]);
    // Every relative link of the README and the docs names a file the package ships: they work from the npm page.
    const broken = shipped
      .filter((f) => f.endsWith(".md"))
      .flatMap((doc) =>
        [...readFileSync(join(installed, doc), "utf8").matchAll(/\]\(([^)#\s]+)[^)]*\)/g)]
          .map((m) => m[1] as string)
          .filter((target) => !/^[a-z]+:/.test(target))
          .map((target) => join(dirname(doc), target))
          .filter((target) => !shipped.includes(target))
          .map((target) => `${doc} → ${target}`),
      );
    expect(broken).toEqual([]);
    // Declarations only for the public surface: the command line's internals do not ship.
    expect(shipped.some((f) => f.startsWith("dist/types/cli/"))).toBe(false);
    expect(shipped).toContain("LICENSE");
  });

  for (const [resolution, options] of [
    ["node16", { module: "node16", moduleResolution: "node16" }],
    ["bundler", { module: "esnext", moduleResolution: "bundler" }],
  ] as const) {
    it(`type-checks a consumer on the ${resolution} resolution, and keeps internals out of the typed API`, () => {
      const consumer = [
        'import { createBackends, createRegistry, dispatchable, Dispatcher, threadAudit, type AuditReport } from "dispatch-hook";',
        'import { install } from "dispatch-hook/hooks";',
        "class Conv {}",
        'const table = new Dispatcher<() => string>({ name: "t", backend: "cpu" });',
        "const registry = createRegistry();",
        'registry.provide("cpu", table);',
        'const handle = registry.register("cpu", Conv, () => "conv");',
        'const backends = createBackends({ name: "consumer", discover: false });',
        "const add = dispatchable((x: number, y: number) => x + y, { args: [0, 1], backends });",
        "const sum: number = add(1, 2);",
        "const report: AuditReport = threadAudit();",
        "export const used = [handle.state, sum, report.ok, typeof install];",
      ].join("\n");
      writeFileSync(join(app, "consumer.mts"), consumer);
      writeFileSync(
        join(app, "internal.mts"),
        'import { registry } from "dispatch-hook";\nregistry.registerFrom(() => {}, "cpu", class {}, () => 1);\n',
      );
      const config = (file: string, nodeTypes = true) =>
        JSON.stringify({
          compilerOptions: {
            ...options,
            // Without @types/node and without esnext: the declarations bring the lib Disposable needs.
            target: "es2022",
            ...(nodeTypes ? {} : { lib: ["es2023"] }),
            strict: true,
            noEmit: true,
            skipLibCheck: false,
            // Without @types/node too: a consumer's project need not have it.
            types: nodeTypes ? ["node"] : [],
            typeRoots: nodeTypes ? [join(repoRoot, "node_modules/@types")] : [],
          },
          files: [file],
        });
      writeFileSync(join(app, "tsconfig.consumer.json"), config("consumer.mts"));
      writeFileSync(join(app, "tsconfig.internal.json"), config("internal.mts"));
      writeFileSync(join(app, "tsconfig.bare.json"), config("consumer.mts", false));
      const check = (project: string) => {
        try {
          execFileSync(nodeBinary, [tsc, "-p", project], { cwd: app, encoding: "utf8", stdio: "pipe" });
          return "";
        } catch (error) {
          return String((error as { stdout?: string }).stdout);
        }
      };
      expect(check("tsconfig.consumer.json")).toBe("");
      expect(check("tsconfig.bare.json")).toBe("");
      expect(check("tsconfig.internal.json")).toContain("Property 'registerFrom' does not exist");
      // Three full type-checks: well over the default timeout on a busy two-core machine.
    }, 120_000);
  }

  it("runs the README's quick start, as written, from the tarball in an empty directory", async () => {
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
    const from = readme.indexOf("## Quick start");
    const section = readme.slice(from, readme.indexOf("\n## ", from + 1)).trim();
    expect(section.split("\n").length).toBeLessThanOrEqual(40);
    const dir = makeTree({});
    const files = [...section.matchAll(/<!-- file: (\S+) -->\n```\w+\n([\s\S]*?)```/g)];
    expect(files.map((f) => f[1])).toEqual([
      "tensorkit/package.json",
      "tensorkit/backends/cpu.js",
      "kit-ops/package.json",
      "kit-ops/cpu.js",
      "app.mjs",
    ]);
    for (const [, file, text] of files) {
      mkdirSync(dirname(join(dir, file as string)), { recursive: true });
      writeFileSync(join(dir, file as string), text as string);
    }
    const commands = /```sh\n([\s\S]*?)```/.exec(section)?.[1]?.trim().split("\n") ?? [];
    expect(commands).toHaveLength(3);
    for (const line of commands) {
      const [command, expected] = line.split(/\s+# prints: /) as [string, string | undefined];
      // `npm install dispatch-hook` (the Install section) is the tarball here.
      const words = command.trim().split(/\s+/);
      const argv = words[0] === "npm" ? [...words.slice(1), "--no-audit", "--no-fund", "--prefer-offline", tarball] : words.slice(1);
      const output = execFileSync(words[0] === "node" ? nodeBinary : words[0] === "npm" ? npm : npx, argv, {
        cwd: dir,
        encoding: "utf8",
        env: { ...process.env, NODE_OPTIONS: "", NO_COLOR: "1" },
      });
      if (expected !== undefined) expect(output).toContain(expected.trim());
      // Every command the quick start runs says what it prints; installing is the one that need not.
      else expect(words[0]).toBe("npm");
    }
  }, 120_000);

  it("runs its bin, and its loader lands a plugin's registration from the installed copy", async () => {
    const doctor = await run(app, [join(installed, "dist/bundle/cli.js"), "doctor"]);
    expect(doctor.code).toBe(0);
    expect(doctor.stdout).toContain("kit-ops");
    const bin = await run(app, [join(app, "node_modules/.bin/dispatch-hook"), "doctor"]);
    expect(bin.stdout).toBe(doctor.stdout);
    const main = await run(app, ["--import", "dispatch-hook/loader.mjs", "main.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
    expect(main.stderr).not.toContain("Error");
    expect(main.stdout).toContain('{"result":"conv on cpu"}');
    expect(main.code).toBe(0);
  });
});

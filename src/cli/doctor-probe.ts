/**
 * What `dispatch-hook doctor --load` runs in a child instead of the app (see doctor-load.ts): its
 * audit record goes to the run directory, what failed to load to the file its second argument names.
 */
import { fs, nodeModule, url } from "../builtins.js";
import { asImplementation } from "../dispatchable/impl-table.js";
import { DispatchHookError } from "../registry/errors.js";
import { loadNamedType, type NamedTypeEntry, type TypeFinding } from "./doctor-types.js";

export interface ProbeInput {
  /** The app's directory: the loader reads its declarations from there, as it would for the app. */
  readonly root: string;
  /** Each declared dispatch module; `require`: loaded with require() (a CommonJS one the hooks see required). */
  readonly backends: ReadonlyArray<{ readonly backend: string; readonly file: string; readonly require: boolean }>;
  readonly lazy: ReadonlyArray<{
    readonly set: string;
    readonly backend: string;
    readonly fn: string;
    readonly label: string;
    readonly base: string;
    readonly declaredIn: string;
  }>;
  /** The backend sets' named types whose module resolves: their exports are checked. */
  readonly types: readonly NamedTypeEntry[];
}

export type ProbeFailure =
  | {
      readonly kind: "dispatch-module" | "implementation";
      readonly backend: string;
      readonly code: string | undefined;
      readonly message: string;
      /** The error's stack, so that the parent can tell which plugin's module threw. */
      readonly stack?: string;
      readonly declaredIn?: string;
    }
  | { readonly kind: "type"; readonly finding: TypeFinding };

function messageOf(error: unknown): { code: string | undefined; message: string; stack?: string } {
  if (error instanceof Error) return { code: (error as { code?: string }).code, message: error.message, stack: error.stack ?? "" };
  return { code: undefined, message: String(error) };
}

/** What the probe writes: what failed so far and, until it has finished, the backend whose dispatch module is loading. */
export interface ProbeOutput {
  readonly failures: readonly ProbeFailure[];
  readonly loading?: string;
}

/** `progress` gets what failed so far before each dispatch module loads, so that a module that ends the process is named. */
export async function probe(input: ProbeInput, progress: (output: ProbeOutput) => void = () => {}): Promise<ProbeFailure[]> {
  const failures: ProbeFailure[] = [];
  // The loader, installed for the app's directory (this file is not the app's entry), feeding the
  // default registry of this copy of dispatch-hook, which the plugins' `import "dispatch-hook"` reaches.
  const { registry } = (await import(new URL("./index.js", import.meta.url).href)) as typeof import("../index.js");
  const { install } = (await import(new URL("./install.js", import.meta.url).href)) as typeof import("../hooks/loader-entry.js");
  install({ root: input.root, registry });
  for (const { backend, file, require } of input.backends) {
    progress({ failures, loading: backend });
    try {
      if (require) nodeModule.createRequire(file)(file);
      else await import(url.pathToFileURL(file).href);
    } catch (error) {
      failures.push({ kind: "dispatch-module", backend, ...messageOf(error) });
    }
  }
  for (const lazy of input.lazy) {
    try {
      // Loaded now ("eager"); a label that is no "specifier#export" gives no stub at all.
      if (asImplementation(lazy.label, lazy.base, lazy.backend, lazy.fn, true) === undefined) {
        throw new DispatchHookError("ERR_DISPATCH_IMPL_LOAD", `${JSON.stringify(lazy.label)} is not "specifier#export".`);
      }
    } catch (error) {
      failures.push({ kind: "implementation", backend: `${lazy.backend} [${lazy.set}]`, declaredIn: lazy.declaredIn, ...messageOf(error) });
    }
  }
  for (const entry of input.types) {
    const finding = await loadNamedType(entry);
    if (finding !== undefined) failures.push({ kind: "type", finding });
  }
  return failures;
}

// Run as a program: node doctor-probe.js <input.json> <output.json>
const [input, output] = process.argv.slice(2);
if (input !== undefined && output !== undefined && import.meta.url === url.pathToFileURL(process.argv[1] ?? "").href) {
  const write = (result: ProbeOutput) => fs.writeFileSync(output, JSON.stringify(result));
  write({ failures: await probe(JSON.parse(fs.readFileSync(input, "utf8")) as ProbeInput, write) });
  // Done: what the modules left running (a timer, a pool's heartbeat) must not keep the pre-flight
  // waiting. Exiting writes this process's audit record (run-records.ts, on "exit").
  process.exit();
}

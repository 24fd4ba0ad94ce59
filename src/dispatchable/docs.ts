/** What a set says of itself: its backends (BackendSet.backends()), and its generated documentation. */
import type { Class } from "../registry/dispatcher.js";
import { implLabel } from "./impl-table.js";
import type { PlanBackend } from "./plan.js";

export interface BackendInfo {
  readonly name: string;
  readonly primaryTypes: readonly string[];
  readonly secondaryTypes: readonly string[];
  readonly requiresOptIn: boolean;
  /** Function name → how its implementation is named. */
  readonly functions: Readonly<Record<string, string>>;
  readonly declaredIn: string;
}

export interface FunctionInfo {
  readonly name: string;
  /** How the relevant arguments were given: "x, y", or "(chosen by a function)". */
  readonly relevant: string;
  readonly reference: string;
}

export function describeBackend(b: PlanBackend & { readonly declaredIn: string }, ops: ReadonlyMap<string, Class>): BackendInfo {
  const functions: Record<string, string> = {};
  for (const [fn, op] of ops) {
    const impl = b.implementation(op);
    if (impl !== undefined) functions[fn] = implLabel(impl);
  }
  const { primary, secondary } = b.types.labels;
  return {
    name: b.name,
    primaryTypes: primary,
    secondaryTypes: secondary,
    requiresOptIn: b.requiresOptIn,
    functions,
    declaredIn: b.declaredIn,
  };
}

/** Per function: what it dispatches on, each backend that implements it in the order they are tried, then the default. */
export function formatDocs(set: string, functions: readonly FunctionInfo[], backends: readonly BackendInfo[]): string {
  const out: string[] = [];
  for (const fn of functions) {
    out.push(
      `${fn.name}() [${set}]: dispatches on ${fn.relevant || "no argument (explicit types only: like(), backendOptions({ types }))"}`,
    );
    const implementing = backends.filter((b) => b.functions[fn.name] !== undefined);
    implementing.forEach((b, i) => {
      const types = [
        `primary: ${b.primaryTypes.join(", ") || "none"}`,
        ...(b.secondaryTypes.length > 0 ? [`secondary: ${b.secondaryTypes.join(", ")}`] : []),
      ];
      out.push(`  ${i + 1}. ${b.name}${b.requiresOptIn ? " (requires opt-in)" : ""}: ${b.functions[fn.name]}; ${types.join("; ")}`);
    });
    if (implementing.length === 0) out.push("  no backend implements it");
    out.push(`  default: ${fn.reference} (the reference implementation), when no backend accepts the arguments`);
  }
  return out.join("\n");
}

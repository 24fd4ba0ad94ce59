/**
 * Generated documentation for a set's dispatchable functions: for each, the arguments it dispatches
 * on, then every backend that implements it, in the order they are tried, with its types and its
 * implementation, then the default.
 */
/** A backend as a set describes it (BackendSet.backends()). */
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

export function formatDocs(set: string, functions: readonly FunctionInfo[], backends: readonly BackendInfo[]): string {
  const out: string[] = [];
  for (const fn of functions) {
    out.push(`${fn.name}() [${set}]: dispatches on ${fn.relevant}`);
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

/** What doctor finds: each finding with its kind and dispatch-hook's stable code (docs/json.md, docs/errors.md). */
import { fileURLToPath } from "node:url";
import type { HookConfig } from "../hooks/discovery.js";
import type { AuditReport, ProblemKind } from "../registry/audit-events.js";
import { type ErrorCode, errorCodes } from "../registry/errors.js";

export type FindingKind =
  | "config"
  | "dispatch-module"
  | "registration-module"
  | "implementation"
  | "conflict"
  | "failed"
  | "missing"
  | "pending"
  | "loader"
  | "type"
  | "declaration"
  | "table"
  | "other";

export interface Finding {
  readonly kind: FindingKind;
  readonly backend?: string;
  /** dispatch-hook's stable code for what was found (docs/errors.md). */
  readonly code: ErrorCode;
  /** The code of the error behind it, when that is not one of dispatch-hook's (ERR_MODULE_NOT_FOUND, ERR_REQUIRE_ASYNC_MODULE). */
  readonly cause?: string;
  readonly message: string;
  readonly fix?: string;
}

/** The code of each kind of problem the probe's audit reports. */
export const problemCodes: Record<ProblemKind, ErrorCode> = {
  pending: "ERR_DISPATCH_INCOMPLETE",
  missing: "ERR_DISPATCH_INCOMPLETE",
  failed: "ERR_DISPATCH_INCOMPLETE",
  conflict: "ERR_DISPATCH_CONFLICT",
  table: "ERR_DISPATCH_TABLE_SHAPE",
  stuck: "ERR_DISPATCH_TABLE_SHAPE",
  loader: "ERR_DISPATCH_LOADER",
  "no-loader": "ERR_DISPATCH_NO_LOADER",
  identity: "ERR_DISPATCH_NO_IMPL",
  declaration: "ERR_DISPATCH_BACKEND_DECLARATION",
  implementation: "ERR_DISPATCH_IMPL_LOAD",
  displaced: "ERR_DISPATCH_INCOMPLETE",
};

/** A failure's own code when it is dispatch-hook's, else `fallback`, with the failure's code as the cause. */
export function coded(fallback: ErrorCode, own: string | undefined): { code: ErrorCode; cause?: string } {
  if (own !== undefined && Object.hasOwn(errorCodes, own)) return { code: own as ErrorCode };
  return own === undefined ? { code: fallback } : { code: fallback, cause: own };
}

/** Findings without repeats: a backend with two dispatch modules fails the same way twice. */
export function distinct(findings: readonly Finding[]): Finding[] {
  const seen = new Set<string>();
  return findings.filter((f) => {
    const key = `${f.kind}\0${f.backend}\0${f.code}\0${f.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * A registration module that require() could not load (an ES module with a top-level await:
 * ERR_REQUIRE_ASYNC_MODULE), when the CommonJS dispatch module was required, as its framework does.
 */
export function unrequirable(plugin: AuditReport["plugins"][number], code: string, config: HookConfig): Finding {
  const file = plugin.module.startsWith("file:") ? fileURLToPath(plugin.module) : plugin.module;
  const declaredIn = config.plugins.find((p) => p.name === plugin.plugin)?.declaredIn ?? "its package.json";
  const awaits = code === "ERR_REQUIRE_ASYNC_MODULE";
  return {
    kind: "registration-module",
    backend: plugin.backend,
    ...coded("ERR_DISPATCH_REGISTRATION_MODULE", code),
    message:
      `${plugin.plugin}: the registration module for ${plugin.backend} (${file}) cannot be require()d${awaits ? ": it is an ES module with a top-level await" : ""}. ` +
      `Its backend's dispatch module is CommonJS, and when it is require()d (as a CommonJS framework loads it) it requires its registration modules: this one fails, and its registrations never land. ${plugin.error?.message.split("\n")[0] ?? ""}`.trimEnd(),
    fix: awaits
      ? `Remove the top-level await from ${file} (register first, or run the asynchronous work in a function), ship it as CommonJS, or point "registrations.${plugin.backend}" in ${declaredIn} at a module without one. A framework that import()s the dispatch module is not affected.`
      : `Make ${file} a module require() can load, or point "registrations.${plugin.backend}" in ${declaredIn} at one.`,
  };
}

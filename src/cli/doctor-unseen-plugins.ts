/**
 * What doctor --load finds by comparing the whole tree with what ran in its child: plugins the loader
 * could not know of before their backend loaded.
 */
import { fileURLToPath } from "node:url";
import type { HookConfig } from "../hooks/discovery.js";
import type { RunAudit } from "../hooks/run-fold.js";
import type { Finding } from "./doctor-findings.js";

type Reports = ReadonlyArray<NonNullable<RunAudit["processes"][number]["report"]>>;

/**
 * Plugins that reading the whole tree finds, whose registration module never ran in the child when their backend
 * loaded: the loader finds a plugin through the app's dependencies and those of packages that depend on a framework.
 */
export function unseenPlugins(
  config: HookConfig,
  outcomes: ReadonlyArray<{ readonly backend: string; readonly loaded: boolean }>,
  reports: Reports,
): Finding[] {
  return outcomes.flatMap(({ backend, loaded }) =>
    config.plugins.flatMap((p): Finding[] => {
      const module = p.registrations[backend];
      if (!loaded || module === undefined) return [];
      if (reports.some((r) => r.plugins.some((w) => w.plugin === p.name && w.backend === backend))) return [];
      return [
        {
          kind: "registration-module",
          backend,
          code: "ERR_DISPATCH_LOADER",
          message:
            `${p.name}: its registration module for ${backend} (${fileURLToPath(module)}) did not run when the backend loaded. ` +
            `The loader finds a plugin among the app's dependencies and those of packages that depend on a framework; ${p.name} is neither ` +
            `(doctor reads the whole tree, and found it through ${p.declaredIn})`,
          fix: `Add ${p.name} to the app's dependencies, so that the loader knows it before the backend loads.`,
        },
      ];
    }),
  );
}

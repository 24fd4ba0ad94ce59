/**
 * What doctor --load finds by comparing the whole tree with what ran in its child: plugins the loader
 * could not know of before their backend loaded, and (as notes) registrations for a misspelt backend.
 */
import { fileURLToPath } from "node:url";
import { declarationOf } from "../hooks/declared-backends.js";
import type { HookConfig } from "../hooks/discovery.js";
import type { RunAudit } from "../hooks/run-fold.js";
import { didYouMean } from "../registry/options.js";
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

/**
 * Notes, not findings: a registration a plugin's registration module made for a backend no declaration covers, a
 * typo away from one that does ("cpuu" beside "cpu"). It waits and never lands, unless the program announces that
 * backend's table itself (a framework's native route), which doctor cannot tell: so no failure, here or in the audit.
 */
export function misspeltBackends(config: HookConfig, reports: Reports): Finding[] {
  const declared = new Set(config.rules.flatMap((r) => (r.backend === undefined ? [] : [r.backend])));
  return reports.flatMap((r) =>
    r.registrations.flatMap((g): Finding[] => {
      if (g.state !== "pending" || g.origin === undefined || declarationOf(config.rules, g.backend) !== undefined) return [];
      const hint = didYouMean(
        g.backend,
        [...declared, ...r.backends.map((b) => b.backend)].filter((b) => b !== g.backend),
      );
      if (hint === "") return [];
      return [
        {
          kind: "pending",
          backend: g.backend,
          code: "ERR_DISPATCH_UNKNOWN_BACKEND",
          message: `${g.origin.plugin}'s registration module ${g.origin.module} registers ${g.op} for ${g.backend}, which no declaration covers${hint}: it waits, and lands only if the program announces a ${g.backend} table itself`,
          fix: `If it is a typo, correct the backend's name in ${g.origin.module}.`,
        },
      ];
    }),
  );
}

/** What a report is built from: the thread's facts, the scope asked about, and folded registries. */
import type { HostFacts, InstallationStatus, WindowFact } from "../channel.js";
import type { Fold } from "./audit-fold.js";

/** A table that exists in the thread, and the names of the op types it holds (when it can list them). */
export interface TableFact {
  readonly backend: string;
  readonly module: string | undefined;
  readonly names: ReadonlySet<string> | undefined;
  /** The host adapter whose facade announced the table, and what it knew of the backend's plugins. */
  readonly host?: HostFacts | undefined;
}

export interface ThreadFacts {
  readonly tables: readonly TableFact[];
  readonly loaders: readonly InstallationStatus[];
  readonly windows: readonly WindowFact[];
  /** Copies of the package whose hub handshake was refused: what they registered is out of sight. */
  readonly refusals?: readonly string[];
  /** Backends the program named to assertComplete() in this thread. */
  readonly asserted?: ReadonlySet<string>;
}

export interface ReportScope {
  /**
   * Whether the loaders' own facts count: their expectations, their plugins' registration modules
   * and "nothing to watch". True for the exit audit and for the registry a loader feeds; false for
   * an isolated registry, which answers only for itself.
   */
  readonly connected: boolean;
  readonly focus?: readonly string[] | undefined;
}

export interface NamedFold {
  readonly fold: Fold;
  /** Shown when a report covers several registries. */
  readonly name?: string;
}

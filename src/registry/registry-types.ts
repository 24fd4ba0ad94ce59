/** The registry's option and snapshot types. */
import type { TableAdapter } from "./table-adapter.js";

export interface RegisterOptions {
  /** Replace an existing implementation of the op type on this backend. */
  readonly override?: boolean;
}

export interface ProvideMeta {
  /** The URL of the module instance the table belongs to. */
  readonly module?: string;
  /** "hook" when a loader signalled the module; "native" (default) when the framework calls provide(). */
  readonly via?: "hook" | "native";
  /** How to read and write this table, when it is not a Dispatcher, a Map or register()-shaped. */
  readonly adapter?: TableAdapter;
}

export interface DeclareOptions {
  /** The adapter for every table of this backend. */
  readonly adapter?: TableAdapter;
}

export interface RegistryOptions {
  /** Record the caller's file:line for each registration (default true). */
  readonly callSites?: boolean;
  /** How the registry is named in a thread-wide audit (default "#n"). */
  readonly name?: string;
}

/** An opaque record of a registry's state, for restore(). */
export interface RegistrySnapshot {
  readonly live: ReadonlySet<number>;
  readonly sealed: ReadonlySet<string>;
}

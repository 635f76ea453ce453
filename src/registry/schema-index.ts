import type { Dialect } from "./index.js";
import type { EntryKind } from "./model.js";

/**
 * The shape of schema/index.json, the machine-readable list of the registry that codegen writes and
 * validation (and client tooling) reads. It describes the registry, so it lives with it: the writer
 * and the readers both depend on this file rather than on each other.
 */

export type DefinitionRole = "params" | "result" | "request" | "response" | "notification" | "message" | "payload" | "event";

export interface IndexEntry {
  dialect: Dialect;
  name: string;
  kind: EntryKind;
  direction: "client-to-server" | "server-to-client";
  versions: Array<number | string>;
  extension?: boolean;
  description: string;
  /** The bundle definitions describing this entry, by role. */
  definitions: Partial<Record<DefinitionRole, string>>;
}

/** One generated bundle: a dialect at one version, its schema file, its TypeScript types and its precompiled checks. */
export interface IndexBundle {
  dialect: Dialect;
  version: number | string;
  current: boolean;
  /** File name inside schema/. */
  schema: string;
  /** Path of the generated types, relative to schema/. */
  types: string;
  /** Path of the precompiled fast validation tier (a CommonJS module), relative to schema/. */
  validators: string;
}

export interface IndexErrorCode {
  dialect: Dialect;
  name: string;
  code: string | number;
  extension?: boolean;
  /** Versions the code exists in; absent = every version of the dialect. */
  versions?: Array<number | string>;
  description: string;
}

export interface SchemaIndex {
  description: string;
  bundles: IndexBundle[];
  entries: IndexEntry[];
  errors: IndexErrorCode[];
}

import type { Dialect } from "../registry/index.js";
import type { DialectRegistry, Sender } from "../registry/model.js";
import { eventName, messageName, methodTypeBase, notificationName, paramsName, payloadName, requestName, responseName, resultName } from "../registry/names.js";
import { inRange, type VersionRange } from "../registry/schema.js";
import type { IndexEntry, SchemaIndex } from "../registry/schema-index.js";
import { bundleBaseName } from "./bundle.js";
import { fastValidatorsPath } from "./fast-validators.js";

/**
 * schema/index.json: a machine-readable list of every method and message of both dialects with
 * its kind, direction, the versions it exists in and the definitions that describe it, so client
 * tooling can discover the surface without parsing the bundles.
 */
export function buildIndex(registries: readonly DialectRegistry<Dialect>[]): SchemaIndex {
  return {
    description: "Index of the tau-gateway registry. Generated; do not edit.",
    bundles: registries.flatMap((r) =>
      r.versions.map((v) => ({
        dialect: r.dialect,
        version: v,
        current: v === r.versions[r.versions.length - 1],
        schema: `${bundleBaseName(r.dialect, v)}.schema.json`,
        types: `../generated/${bundleBaseName(r.dialect, v)}.ts`,
        validators: `../${fastValidatorsPath(bundleBaseName(r.dialect, v))}`,
      })),
    ),
    entries: registries.flatMap((r): IndexEntry[] => {
      const versions = (range?: VersionRange) =>
        r.versions.filter((v) => typeof v !== "number" || !range || inRange(range, v));
      const direction = (sender: Sender): IndexEntry["direction"] => (sender === "client" ? "client-to-server" : "server-to-client");
      const common = (e: { name: string; description: string; versions?: VersionRange; extension?: boolean }) => ({
        dialect: r.dialect,
        name: e.name,
        versions: versions(e.versions),
        ...(e.extension ? { extension: true } : {}),
        description: e.description,
      });
      return [
        ...r.methods.map((m) => ({
          ...common(m),
          kind: m.kind,
          direction: direction(m.sender),
          definitions: { params: paramsName(methodTypeBase(m)), result: resultName(methodTypeBase(m)), request: requestName(methodTypeBase(m)), response: responseName(methodTypeBase(m)) },
        })),
        ...r.notifications.map((n) => ({
          ...common(n),
          kind: n.kind,
          direction: direction(n.sender),
          definitions: { params: paramsName(methodTypeBase(n)), notification: notificationName(methodTypeBase(n)) },
        })),
        ...r.serverMessages.map((s) => ({
          ...common(s),
          kind: s.kind,
          direction: "server-to-client" as const,
          definitions: { message: messageName(s.name) },
        })),
        ...r.events.map((e) => ({
          ...common(e),
          kind: e.kind,
          direction: "server-to-client" as const,
          definitions: { payload: payloadName(e.name), event: eventName(e.name) },
        })),
      ];
    }),
    errors: registries.flatMap((r) =>
      r.errors.map((e) => ({
        dialect: r.dialect,
        name: e.name,
        code: e.code,
        ...(e.extension ? { extension: true } : {}),
        ...(e.versions ? { versions: r.versions.filter((v) => typeof v !== "number" || inRange(e.versions!, v)) } : {}),
        description: e.description,
      })),
    ),
  };
}

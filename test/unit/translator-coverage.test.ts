import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  IGNORED_CHANGES,
  IGNORED_SERVER_MESSAGES,
  TRANSLATED_CHANGES,
  TRANSLATED_SERVER_MESSAGES,
} from "../../src/bridge/translation/translated-kinds.js";

/**
 * Every Tau change kind and server message type in the registry is either translated into Ask
 * events or deliberately ignored (DESIGN §4.3), read from the generated schema and index — so a
 * kind added upstream fails this suite instead of silently producing nothing.
 */

type Json = Record<string, any>;
const readJson = (file: string): Json => JSON.parse(readFileSync(new URL(`../../schema/${file}`, import.meta.url), "utf8"));
const tauSchema = readJson("tau-v18.schema.json");
const index = readJson("index.json");

/** Follows `$ref`s and unions down to object members and collects their `type` constants. */
function changeKinds(node: Json, seen = new Set<string>()): string[] {
  if (typeof node.$ref === "string") {
    const name = node.$ref.replace("#/$defs/", "");
    if (seen.has(name)) return [];
    seen.add(name);
    const target = tauSchema.$defs[name];
    if (!target) throw new Error(`unresolved $ref ${node.$ref}`);
    return changeKinds(target, seen);
  }
  const members = node.oneOf ?? node.anyOf;
  if (Array.isArray(members)) return members.flatMap((m: Json) => changeKinds(m, seen));
  const kind = node.properties?.type?.const;
  if (typeof kind !== "string") throw new Error(`a Change member has no type constant: ${JSON.stringify(node).slice(0, 200)}`);
  return [kind];
}

const registryChanges = changeKinds(tauSchema.$defs.Change);
const registryServerMessages: string[] = index.entries
  .filter((e: Json) => e.dialect === "tau" && e.kind === "server-message" && e.versions.includes(18))
  .map((e: Json) => e.name);

function expectPartition(registry: string[], translated: readonly string[], ignored: readonly string[]) {
  for (const kind of registry) {
    const places = [translated.includes(kind) ? "translated" : undefined, ignored.includes(kind) ? "ignored" : undefined].filter(Boolean);
    expect(places, `${kind} must be in exactly one list`).toHaveLength(1);
  }
  // Nothing listed that the registry does not know (a renamed kind would otherwise linger).
  expect([...translated, ...ignored].filter((k) => !registry.includes(k))).toEqual([]);
  expect(new Set([...translated, ...ignored]).size).toBe(translated.length + ignored.length);
}

describe("translator coverage of the Tau v18 registry", () => {
  it("reads a plausible set of kinds from the schema", () => {
    expect(registryChanges).toContain("message.content.append");
    expect(registryChanges).toContain("turn.set");
    expect(registryChanges.length).toBeGreaterThanOrEqual(19);
    expect(registryServerMessages).toEqual(expect.arrayContaining(["ready", "response", "session.delta", "session.ephemeral"]));
  });

  it("puts every Change kind in exactly one of TRANSLATED_CHANGES / IGNORED_CHANGES", () => {
    expectPartition(registryChanges, TRANSLATED_CHANGES, IGNORED_CHANGES);
  });

  it("puts every server message type in exactly one of TRANSLATED_SERVER_MESSAGES / IGNORED_SERVER_MESSAGES", () => {
    expectPartition(registryServerMessages, TRANSLATED_SERVER_MESSAGES, IGNORED_SERVER_MESSAGES);
  });
});

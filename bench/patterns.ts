import { Ajv2019, type ValidateFunction } from "ajv/dist/2019.js";
import type { SchemaIndex } from "../src/registry/schema-index.js";
import { readSchemaFile } from "../src/validation/schema-files.js";
import { AJV_OPTIONS } from "../src/validation/validator.js";
import { median, now, round } from "./stats.js";

/**
 * What a long hostile string costs schema validation: for every string field of every bundle in
 * schema/ that carries a `pattern`, the time ajv (set up as the gateway's validator) takes on the
 * slowest 1 MiB input found for that pattern, next to a plain 1 MiB string of "a". Inputs are a
 * run of one character followed by one other character: the shape that makes a backtracking
 * matcher retry every split point, i.e. the worst case of a superlinear pattern. Fields are
 * grouped by pattern; each group reports its slowest field.
 */

export interface PatternValidationResult {
  pattern: string;
  /** How many string fields (schema locations, all bundles) carry it. */
  fields: number;
  /** The slowest field, as bundle file + JSON pointer. */
  slowestField: string;
  /** The input, described: e.g. `"a"×1048576 + "\u0000"`. */
  worstInput: string;
  /** Median validation time of the worst input on the slowest field. */
  worstMs: number | null;
  /** Median validation time of the plain string on the same field. */
  plainMs: number;
  /** Why the 1 MiB worst case was not run (the probe was already too slow to be linear). */
  skipped?: string;
}

const MIB = 2 ** 20;
const PROBE_CHARS = 16 * 1024;
/** A linear matcher takes well under a millisecond on the probe; this is far into superlinear. */
const PROBE_LIMIT_MS = 50;
const RUN_CHARS = ["a", "A", "0", "-", ".", "/", "+", "_", " ", "\t", "\u00a0"];
const END_CHARS = ["", "\u0000", "\n", "\r", "\u2028", "!", " ", "="];

interface Field {
  where: string;
  validate: ValidateFunction;
}

export function measurePatternValidation(runs: number): PatternValidationResult[] {
  const plain = "a".repeat(MIB);
  const results: PatternValidationResult[] = [];
  for (const [pattern, { fields, distinct }] of patternFields()) {
    const probe = slowestCandidate(distinct[0]!.validate);
    const worstInput = `${JSON.stringify(probe.run)}×${MIB}${probe.end ? ` + ${JSON.stringify(probe.end)}` : ""}`;
    const base = { pattern, fields, worstInput };
    if (probe.ms > PROBE_LIMIT_MS) {
      const field = distinct[0]!;
      const skipped = `superlinear: ${round(probe.ms, 0)} ms already on ${PROBE_CHARS} characters`;
      results.push({ ...base, slowestField: field.where, worstMs: null, plainMs: round(timeOf(field.validate, plain, runs), 3), skipped });
      continue;
    }
    const worst = probe.run.repeat(MIB) + probe.end;
    // Pick the slowest field on a few runs, then time it afresh: the maximum of many noisy
    // medians would report the noise.
    let slowest = { field: distinct[0]!, ms: -1 };
    for (const field of distinct) {
      const ms = distinct.length === 1 ? 0 : timeOf(field.validate, worst, 3);
      if (ms > slowest.ms) slowest = { field, ms };
    }
    results.push({
      ...base,
      slowestField: slowest.field.where,
      worstMs: round(timeOf(slowest.field.validate, worst, runs), 3),
      plainMs: round(timeOf(slowest.field.validate, plain, runs), 3),
    });
  }
  return results.sort((a, b) => (b.worstMs ?? Infinity) - (a.worstMs ?? Infinity));
}

/**
 * Every schema location of type string with a pattern, grouped by pattern. Locations whose
 * keywords are the same (descriptions aside) validate alike, so each distinct one is compiled
 * and timed once.
 */
function patternFields(): Map<string, { fields: number; distinct: Field[] }> {
  const ajv = new Ajv2019(AJV_OPTIONS);
  const byPattern = new Map<string, { fields: number; distinct: Map<string, Field> }>();
  const index = readSchemaFile<SchemaIndex>("index.json");
  for (const bundle of index.bundles) {
    const schema = readSchemaFile<{ $id: string }>(bundle.schema);
    ajv.addSchema(schema);
    const visit = (node: unknown, pointer: string): void => {
      if (typeof node !== "object" || node === null) return;
      if (Array.isArray(node)) return node.forEach((item, i) => visit(item, `${pointer}/${i}`));
      const record = node as Record<string, unknown>;
      const types = Array.isArray(record.type) ? record.type : [record.type];
      if (typeof record.pattern === "string" && types.includes("string")) {
        const group = byPattern.get(record.pattern) ?? { fields: 0, distinct: new Map<string, Field>() };
        byPattern.set(record.pattern, group);
        group.fields++;
        const { description: _description, ...keywords } = record;
        const key = JSON.stringify(keywords);
        if (!group.distinct.has(key)) {
          const validate = ajv.getSchema(`${schema.$id}#${pointer}`);
          if (!validate) throw new Error(`${bundle.schema}: cannot compile ${pointer}`);
          group.distinct.set(key, { where: `${bundle.schema}#${pointer}`, validate });
        }
      }
      for (const [key, value] of Object.entries(record)) {
        // Values, not schemas.
        if (key === "const" || key === "enum" || key === "default" || key === "examples") continue;
        visit(value, `${pointer}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`);
      }
    };
    visit(schema, "");
  }
  return new Map([...byPattern].map(([pattern, group]) => [pattern, { fields: group.fields, distinct: [...group.distinct.values()] }]));
}

/** The run/end pair the field is slowest on, at probe size. */
function slowestCandidate(validate: ValidateFunction): { run: string; end: string; ms: number } {
  let slowest = { run: RUN_CHARS[0]!, end: END_CHARS[0]!, ms: -1 };
  for (const run of RUN_CHARS) {
    for (const end of END_CHARS) {
      const input = run.repeat(PROBE_CHARS) + end;
      const ms = timeOf(validate, input, 3);
      if (ms > slowest.ms) slowest = { run, end, ms };
      if (ms > PROBE_LIMIT_MS) return slowest;
    }
  }
  return slowest;
}

/** Median wall time of `runs` validations of `value`, in milliseconds. */
function timeOf(validate: ValidateFunction, value: string, runs: number): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = now();
    validate(value);
    times.push(now() - started);
  }
  return median(times);
}

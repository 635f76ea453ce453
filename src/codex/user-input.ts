import type { UserInput } from "../../generated/codex-v2.js";
import { invalidParams } from "./codex-errors.js";

/**
 * A Codex turn's input as the one text Tau takes (`session.submit`/`steer` carry text only): the
 * text items, one per line. Skills and mentions become their names; images and audio cannot reach
 * the Tau host this way and are refused naming the item, never dropped.
 */
export function inputText(input: UserInput[], field = "input"): string {
  const parts = input.map((item, index) => {
    switch (item.type) {
      case "text":
        return item.text;
      case "skill":
      case "mention":
        return `${item.type === "skill" ? "$" : "@"}${item.name}`;
      default:
        throw invalidParams(`${field}[${index}].type`, `${item.type} input is not supported: the Tau host takes text`);
    }
  });
  const text = parts.join("\n");
  if (text.trim() === "") throw invalidParams(field, "must contain text");
  return text;
}

import { any, arr, base64, byVersion, describe, during, int, literal, nonEmpty, obj, oneOfStrings, opt, ref, since, singleLine, str, union, until, type Schema } from "../schema.js";

/**
 * Client tools (spec §7): what a client advertises in `initialize`, the presentation overrides it
 * may send with ack/result, and the content of a successful result. Presentation objects, their
 * detail entries and the result's content blocks are strict in Tau, so they are strict here too.
 *
 * UTF-8 byte limits are bounded with `maxLength` on characters: every character is at least one
 * byte, so the bound is looser than Tau's and never rejects what Tau accepts.
 */

const KIB = 1024;
const MIB = 1024 * KIB;

export const PRESENTATION_SUBJECT_BYTES = 256 * KIB;
export const PRESENTATION_DETAIL_BYTES = 256 * KIB;
export const PRESENTATION_METADATA_VALUE_BYTES = 16 * KIB;
export const PRESENTATION_MAX_DETAILS = 1024;
export const PRESENTATION_MAX_METADATA = 1024;
export const CLIENT_TOOL_MAX_CONTENT_BLOCKS = 1024;
/** Tau's MODEL_IMAGE_MAX_BYTES per its docs (3.5 MiB decoded). */
export const CLIENT_TOOL_IMAGE_MAX_BYTES = 3.5 * MIB;

/** A successful result's content: ordered blocks, with a separate cap on how many are images. */
const contentBlocks = (maxImages: number): Schema =>
  describe(
    `Ordered text/image blocks: at most ${CLIENT_TOOL_MAX_CONTENT_BLOCKS} blocks, of which at most ${maxImages} images.`,
    {
      ...arr(ref("ContentBlock"), { max: CLIENT_TOOL_MAX_CONTENT_BLOCKS }),
      // `maxContains` without `minContains: 0` would demand at least one image.
      contains: { type: "object", properties: { type: { const: "image" } }, required: ["type"] },
      minContains: 0,
      maxContains: maxImages,
    },
  );

export const clientToolDefinitions: Record<string, Schema> = {
  ClientToolDefinition: obj({
    name: nonEmpty({ description: "Unique in the list and distinct from every host tool name." }),
    description: str(),
    parameters: any("JSON Schema of the tool arguments (object root), passed through to the model."),
    executionTimeoutMs: opt(int({ min: 1 })),
  }),

  Presentation: obj(
    {
      subject: opt(
        str({
          minLength: 1,
          pattern: "^[^\\r]*$",
          maxLength: PRESENTATION_SUBJECT_BYTES,
          description: "May contain line feeds but no carriage returns; at most 256 KiB of UTF-8.",
        }),
      ),
      subjectWrap: opt(ref("TextWrap")),
      details: opt(arr(ref("PresentationDetail"), { max: PRESENTATION_MAX_DETAILS })),
      metadata: opt(
        arr(
          singleLine({
            maxLength: PRESENTATION_METADATA_VALUE_BYTES,
            description: "One line, at most 16 KiB of UTF-8.",
          }),
          { max: PRESENTATION_MAX_METADATA },
        ),
      ),
    },
    {
      strict: true,
      description:
        "Partial tool-card override; omitted fields get host defaults and an empty details/metadata array " +
        "suppresses the default. The whole object is at most 1 MiB as UTF-8 JSON (not expressible here).",
    },
  ),

  PresentationDetail: obj(
    {
      text: singleLine({ maxLength: PRESENTATION_DETAIL_BYTES, description: "One line, at most 256 KiB of UTF-8." }),
      tone: opt(ref("DetailTone")),
      wrap: opt(ref("TextWrap")),
    },
    { strict: true },
  ),

  ContentBlock: union(ref("ContentTextBlock"), ref("ContentImageBlock")),

  ContentTextBlock: obj({ type: literal("text"), text: str(), textSignature: opt(str()) }, { strict: true }),

  ContentImageBlock: obj(
    {
      type: literal("image"),
      data: describe(
        "Padded base64, at most 3.5 MiB decoded (the length bound can overshoot by up to 2 bytes).",
        base64({ nonEmpty: true, maxDecodedBytes: CLIENT_TOOL_IMAGE_MAX_BYTES }),
      ),
      mimeType: oneOfStrings(["image/jpeg", "image/png", "image/webp"]),
    },
    { strict: true },
  ),
};

/** `content` of a successful `session.clientTool.result`: a plain string before v15, blocks after. */
export const clientToolContent = byVersion<Schema>(
  until(14, str({ description: "Model-visible result text." }), "a plain string before v15"),
  during({ since: 15, until: 15 }, contentBlocks(4)),
  since(16, contentBlocks(16), "image cap raised from 4 to 16 somewhere in 16–18"),
);

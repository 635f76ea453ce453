/** JSON Pointer (RFC 6901) segments: `~` and `/` inside a key are written `~0` and `~1`. */

/** A key as a pointer segment. */
export const escapePointerSegment = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1");

/** A pointer segment as the key it names (`~1` first, so `~01` stays `~1`). */
export const unescapePointerSegment = (segment: string) => segment.replace(/~1/g, "/").replace(/~0/g, "~");

/** The keys a pointer ("/a/b", "" for the whole document) names, in order. */
export const pointerKeys = (pointer: string): string[] => (pointer === "" ? [] : pointer.slice(1).split("/").map(unescapePointerSegment));

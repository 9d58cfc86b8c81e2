/**
 * Characters that a terminal acts on rather than shows, but for newline and tab: C0 and C1
 * controls (ESC starts a sequence that can recolour, clear or retitle the terminal; CR rewrites
 * a line), DEL, the Unicode line and paragraph separators, and the bidirectional embedding,
 * override and isolate controls (U+202A-U+202E, U+2066-U+2069), with which a terminal that lays
 * out right-to-left text shows the rest of a line reversed: "gpj.exe" read as "exe.jpg".
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const ACTED_ON = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text as it may safely reach a terminal: each such character becomes its \u escape. What the CLI
 * prints holds other people's text (receivers' answers, endpoint descriptions, payloads), and a raw
 * escape sequence in it would act on the operator's terminal. In JSON the escape means the same
 * string (JSON.stringify leaves C1 controls and the separators raw), so JSON output stays exact.
 */
export function terminalSafe(text: string): string {
  return text.replace(ACTED_ON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

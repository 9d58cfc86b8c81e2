/**
 * Characters that a terminal acts on rather than shows, but for newline and tab: C0 and C1
 * controls (ESC starts a sequence that can recolour, clear or retitle the terminal; CR rewrites
 * a line), DEL, and the Unicode line and paragraph separators.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const ACTED_ON = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g;

/**
 * Text as it may safely reach a terminal: each such character becomes its \u escape. What the CLI
 * prints holds other people's text (receivers' answers, endpoint descriptions, payloads), and a raw
 * escape sequence in it would act on the operator's terminal. In JSON the escape means the same
 * string (JSON.stringify leaves C1 controls and the separators raw), so JSON output stays exact.
 */
export function terminalSafe(text: string): string {
  return text.replace(ACTED_ON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

import assert from "node:assert/strict";
import { test } from "node:test";
import { terminalSafe } from "./terminal-safe.js";

test("bidirectional overrides and isolates are escaped, so no text is shown reordered", () => {
  // A receiver's answer that would show as "invoice_fdp.exe" reversed into "invoice_exe.pdf".
  const text = "invoice_\u202efdp.exe and \u2066isolated\u2069, \u202aembedded\u202c";
  assert.equal(
    terminalSafe(text),
    String.raw`invoice_\u202efdp.exe and \u2066isolated\u2069, \u202aembedded\u202c`,
  );
  // In JSON the escape is the same string.
  assert.equal(JSON.parse(terminalSafe(JSON.stringify(text))), text);
  // Right-to-left letters themselves are text, not controls.
  assert.equal(terminalSafe("שלום مرحبا"), "שלום مرحبا");
});

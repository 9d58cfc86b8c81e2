import { useState } from "react";

/** An id in monospace with a button that copies it. */
export function CopyId({ value, label = "id" }: { value: string; label?: string }) {
  const [done, setDone] = useState<"" | "copied" | "selected">("");
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setDone("copied");
    } catch {
      // Clipboard access needs a secure context; selecting the text lets the viewer copy by hand,
      // and saying "copied" then would leave them pasting whatever they copied before.
      const range = document.createRange();
      const node = document.getElementById(`id-${value}`);
      if (node) range.selectNodeContents(node);
      window.getSelection()?.removeAllRanges();
      window.getSelection()?.addRange(range);
      setDone("selected");
    }
    setTimeout(() => setDone(""), 3000);
  };
  return (
    <span className="copy-id">
      <code id={`id-${value}`} title={value}>
        {value}
      </code>
      <button type="button" className="link" onClick={copy} aria-label={`copy ${label} ${value}`}>
        {done === "copied" ? "copied" : done === "selected" ? "selected, press Ctrl+C" : "copy"}
      </button>
    </span>
  );
}

import { useState } from "react";

/** An id in monospace with a button that copies it. */
export function CopyId({ value, label = "id" }: { value: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
    } catch {
      // Clipboard access needs a secure context; selecting the text lets the viewer copy by hand.
      const range = document.createRange();
      const node = document.getElementById(`id-${value}`);
      if (node) range.selectNodeContents(node);
      window.getSelection()?.removeAllRanges();
      window.getSelection()?.addRange(range);
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  };
  return (
    <span className="copy-id">
      <code id={`id-${value}`} title={value}>
        {value}
      </code>
      <button type="button" className="link" onClick={copy} aria-label={`copy ${label} ${value}`}>
        {copied ? "copied" : "copy"}
      </button>
    </span>
  );
}

import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";

const LOCAL = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

/** A time in the viewer's zone; hovering (or focusing) shows it in UTC. */
export function Time({ value }: { value: Timestamp | Date | undefined }) {
  if (!value) return <span className="muted">—</span>;
  const date = value instanceof Date ? value : timestampDate(value);
  const utc = `${date
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, "")} UTC`;
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: focus shows the UTC time to keyboard users too
    <time dateTime={date.toISOString()} title={utc} tabIndex={0}>
      {LOCAL.format(date)}
    </time>
  );
}

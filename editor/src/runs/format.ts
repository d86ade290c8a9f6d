/** How the run view writes durations, times, tokens, cost and JSON. */

/** `840 ms`, `2.4 s`, `3 min 05 s`. */
export function duration(ms: number | null): string {
  if (ms === null) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${String(Math.round((ms % 60_000) / 1000)).padStart(2, "0")} s`;
}

/** Time of day with seconds (and milliseconds: steps are often faster than a second). */
export function clock(iso: string | null): string {
  if (!iso) return "—";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "—";
  return `${date.toLocaleTimeString([], { hour12: false })}.${String(date.getMilliseconds()).padStart(3, "0")}`;
}

/** `$0.0123` (cost in the spec's price unit, shown with a dollar sign as the spec's prices are). */
export function cost(value: number | null): string {
  return value === null ? "" : `$${value < 0.01 ? value.toFixed(4) : value.toFixed(2)}`;
}

export function tokens(input: number, output: number): string {
  return input + output === 0 ? "" : `${input + output} tok`;
}

/** Pretty JSON for a detail pane. */
export function json(value: unknown): string {
  return value === undefined ? "" : JSON.stringify(value, null, 2);
}

/** A one-line preview of a value (for folded arguments and results). */
export function preview(value: unknown, limit = 80): string {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? "");
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}

/** A date and time, short: `Dec 2, 23:12:53`. */
export function when(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "—";
  return date.toLocaleString([], { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
}

/** A time of day when it is today (`14:40:56`), else a date and time (`Dec 4, 09:00:00`). */
export function soon(iso: string, now: Date = new Date()): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "—";
  return date.toDateString() === now.toDateString() ? date.toLocaleTimeString([], { hour12: false }) : when(iso);
}

/** A size in bytes as people read it: `740 B`, `12.4 KB`, `3.1 MB`. */
export function bytes(size: number): string {
  if (size < 1000) return `${size} B`;
  if (size < 1_000_000) return `${(size / 1000).toFixed(1)} KB`;
  return `${(size / 1_000_000).toFixed(1)} MB`;
}

/**
 * The look of each node kind: colour, icon, shape class and the key fields the
 * node shows under its id. The per-kind components in index.tsx use these.
 */
export interface KindLook {
  label: string;
  icon: string;
  color: string;
  /** CSS class giving the kind its shape (see canvas.css). */
  shape: string;
  /** Short lines summarising the node's important fields. */
  summary: (fields: Record<string, unknown>) => string[];
}

const s = (v: unknown): string => (v === undefined || v === null ? "" : typeof v === "string" ? v : JSON.stringify(v));
const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(s) : []);
const clip = (text: string, max = 34) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
const lines = (...items: unknown[]) => items.filter((x): x is string => typeof x === "string" && x !== "").map((x) => clip(x));

export const KIND_LOOKS: Record<string, KindLook> = {
  agent: {
    label: "Agent",
    icon: "★",
    color: "#6d4fd8",
    shape: "shape-agent",
    summary: (f) =>
      lines(f.agent ? `agent: ${s(f.agent)}` : f.model ? `model: ${s(f.model)}` : null, list(f.tools).length > 0 && `tools: ${list(f.tools).join(", ")}`),
  },
  llm: {
    label: "LLM",
    icon: "✦",
    color: "#2f6fdf",
    shape: "shape-llm",
    summary: (f) => lines(f.model && `model: ${s(f.model)}`, f.schema !== undefined && "structured output"),
  },
  tool: {
    label: "Tool",
    icon: "⚒",
    color: "#1d8a5b",
    shape: "shape-tool",
    summary: (f) => lines(f.tool && `tool: ${s(f.tool)}`),
  },
  router: {
    label: "Router",
    icon: "◆",
    color: "#c77700",
    shape: "shape-router",
    summary: (f) => lines(f.label && `label: ${s(f.label)}`, list(f.labels).length > 0 && list(f.labels).join(" | ")),
  },
  map: {
    label: "Map",
    icon: "▦",
    color: "#0f8a9d",
    shape: "shape-map",
    summary: (f) => {
      const d = (f.do ?? {}) as Record<string, unknown>;
      return lines(f.items && `items: ${s(f.items)}`, d.kind ? `do: ${s(d.kind)} ${s(d.model ?? d.tool ?? d.function ?? d.ref ?? d.agent)}` : null);
    },
  },
  parallel: {
    label: "Parallel",
    icon: "⇉",
    color: "#4b5a6b",
    shape: "shape-parallel",
    summary: (f) => lines(list(f.branches).length > 0 && `branches: ${list(f.branches).join(", ")}`, f.join && `join: ${s(f.join)}`),
  },
  subgraph: {
    label: "Subgraph",
    icon: "⊞",
    color: "#8a4b9d",
    shape: "shape-subgraph",
    summary: (f) => lines(f.ref && `ref: ${s(f.ref)}`),
  },
  approval: {
    label: "Approval",
    icon: "✔",
    color: "#c0392b",
    shape: "shape-approval",
    summary: (f) => lines(f.action && `action: ${s(f.action)}`, f.expires_in && `expires in ${s(f.expires_in)}`),
  },
  wait: {
    label: "Wait",
    icon: "◷",
    color: "#7a6a2e",
    shape: "shape-wait",
    summary: (f) => lines(f.for !== undefined && `for ${s(f.for)}`, f.until && `until ${s(f.until)}`),
  },
  a2a: {
    label: "A2A agent",
    icon: "⇄",
    color: "#b5527a",
    shape: "shape-a2a",
    summary: (f) => lines(f.url && `url: ${s(f.url)}`, f.agent && `agent: ${s(f.agent)}`),
  },
  python: {
    label: "Python",
    icon: "λ",
    color: "#3a6e9e",
    shape: "shape-python",
    summary: (f) => lines(f.function && s(f.function)),
  },
};

export const UNKNOWN_LOOK: KindLook = {
  label: "Unknown kind",
  icon: "?",
  color: "#888",
  shape: "shape-unknown",
  summary: () => [],
};

export const lookOf = (kind: string): KindLook => KIND_LOOKS[kind] ?? UNKNOWN_LOOK;

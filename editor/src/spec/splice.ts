/**
 * Printing an edited Document by splicing only what changed into the text it
 * was parsed from (decision 68).
 *
 * The `yaml` package's `toString` reprints every scalar: a folded `>-` block
 * becomes one long line, two spaces before a `#` become one. Instead, each
 * node of the original Document is fingerprinted before the edit; after it,
 * the Document is walked and every node whose fingerprint is unchanged keeps
 * its source bytes. What changed is printed by `yaml` and put in place:
 *
 * - a scalar that changed replaces its own characters (its comment stays);
 * - a block collection keeps its unchanged items and gets removed items' lines
 *   cut, new items' lines inserted at its indentation, changed items patched;
 * - a flow collection that changed is printed again (it is one line);
 * - a value replaced by a new node is printed after its key.
 *
 * The result is checked: it must read back as the same data as the edited
 * Document, or the whole Document is printed the old way.
 */
import {
  Document,
  isCollection,
  isMap,
  isPair,
  isScalar,
  isSeq,
  parseDocument,
  Pair,
  Scalar,
  YAMLMap,
  YAMLSeq,
  type Node as YamlNode,
  type ParsedNode,
} from "yaml";

/** Print options: no re-folding of long lines, `{a: 1}` flow maps as most specs write them. */
export const PRINT_OPTIONS = { lineWidth: 0, flowCollectionPadding: false } as const;

type Item = Pair | YamlNode;

/** Fingerprints and item lists of a Document as parsed, to tell later what an edit changed. */
export interface Snapshot {
  fingerprints: WeakMap<object, string>;
  /** Each collection's items, and each pair's key and value, as parsed. */
  items: WeakMap<object, Item[]>;
  pairs: WeakMap<Pair, { key: unknown; value: unknown }>;
}

interface Patch {
  from: number;
  to: number;
  insert: string;
}

/** Take a snapshot of a freshly parsed Document (before an edit changes it). */
export function snapshot(doc: Document): Snapshot {
  const snap: Snapshot = { fingerprints: new WeakMap(), items: new WeakMap(), pairs: new WeakMap() };
  const record = (node: unknown): void => {
    if (isPair(node)) {
      snap.pairs.set(node, { key: node.key, value: node.value });
      record(node.key);
      record(node.value);
    } else if (isCollection(node)) {
      snap.items.set(node, [...(node.items as Item[])]);
      for (const item of node.items) record(item);
    }
  };
  record(doc.contents);
  fingerprint(doc.contents, snap.fingerprints);
  return snap;
}

/** A short hash of a string (cyrb53): fingerprints stay small whatever the subtree's size. */
function hash(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}

/** Fingerprint of a node (everything that printing it depends on), memoised into `into`. */
function fingerprint(node: unknown, into: WeakMap<object, string>): string {
  if (node === null || node === undefined || typeof node !== "object") return `v${JSON.stringify(node ?? null)}`;
  let parts: string;
  if (isPair(node)) parts = `P${fingerprint(node.key, into)}:${fingerprint(node.value, into)}`;
  else {
    const n = node as YamlNode & { type?: string; flow?: boolean; anchor?: string; tag?: string };
    const common = `${n.comment ?? ""}|${n.commentBefore ?? ""}|${n.spaceBefore ? 1 : 0}|${n.tag ?? ""}|${n.anchor ?? ""}`;
    if (isScalar(node)) parts = `S${node.type ?? ""}|${JSON.stringify(node.value)}|${common}`;
    else if (isCollection(node))
      parts = `${isMap(node) ? "M" : "Q"}${n.flow ? "f" : "b"}|${common}|${(node.items as unknown[]).map((i) => fingerprint(i, into)).join(",")}`;
    else parts = `A${String(node)}|${common}`;
  }
  const fp = hash(parts);
  into.set(node as object, fp);
  return fp;
}

/** `text` with the edits made to `doc` (parsed from it, snapshotted as `snap`) spliced in. */
export function printEdited(text: string, doc: Document, snap: Snapshot): string {
  const printed = doc.toString(PRINT_OPTIONS);
  let spliced: string | null;
  try {
    spliced = splice(text, doc, snap);
  } catch {
    spliced = null;
  }
  if (spliced !== null && sameData(spliced, doc)) return spliced;
  return printed;
}

function sameData(text: string, doc: Document): boolean {
  const back = parseDocument(text);
  return back.errors.length === 0 && JSON.stringify(back.toJSON()) === JSON.stringify(doc.toJSON());
}

function splice(text: string, doc: Document, snap: Snapshot): string | null {
  const now = new WeakMap<object, string>();
  fingerprint(doc.contents, now);
  const root = doc.contents as ParsedNode | null;
  if (!root || !snap.items.has(root)) return null; // the whole document was replaced
  const patches: Patch[] = [];
  const ctx: Ctx = { text, snap, now, patches, step: indentStep(text) };
  diffNode(ctx, root, "value", 0);
  patches.sort((a, b) => b.from - a.from || b.to - a.to);
  let out = text;
  let last = Infinity;
  for (const p of patches) {
    if (p.to > last) return null; // overlapping patches: not a case this printer knows
    out = out.slice(0, p.from) + p.insert + out.slice(p.to);
    last = p.from;
  }
  return out;
}

interface Ctx {
  text: string;
  snap: Snapshot;
  now: WeakMap<object, string>;
  patches: Patch[];
  /** Spaces per nesting level in this text. */
  step: number;
}

/** The most common indentation step of the text (2 when it has no nesting). */
function indentStep(text: string): number {
  const counts = new Map<number, number>();
  let previous = 0;
  for (const line of text.split("\n")) {
    if (!line.trim() || line.trimStart().startsWith("#")) continue;
    const indent = line.length - line.trimStart().length;
    if (indent > previous) counts.set(indent - previous, (counts.get(indent - previous) ?? 0) + 1);
    previous = indent;
  }
  let best = 2;
  let seen = 0;
  for (const [step, count] of counts) if (count > seen) [best, seen] = [step, count];
  return best;
}

const unchanged = (ctx: Ctx, node: object): boolean => {
  const before = ctx.snap.fingerprints.get(node);
  return before !== undefined && before === ctx.now.get(node);
};

const rangeOf = (node: unknown): [number, number, number] | null =>
  ((node as { range?: [number, number, number] | null } | null)?.range as [number, number, number]) ?? null;

function lineStart(text: string, pos: number): number {
  return text.lastIndexOf("\n", pos - 1) + 1;
}

function endOfLine(text: string, pos: number): number {
  const i = text.indexOf("\n", pos);
  return i < 0 ? text.length : i;
}

function column(text: string, pos: number): number {
  return pos - lineStart(text, pos);
}

/** Where an item's text ends (before the newline of its last line, trailing comment included). */
function itemEnd(text: string, item: Item): number {
  const node = isPair(item) ? ((item.value as YamlNode | null) ?? (item.key as YamlNode)) : item;
  const range = rangeOf(node);
  if (!range) throw new Error("no range");
  const end = range[1] > range[0] && text[range[1] - 1] === "\n" ? range[1] - 1 : range[1];
  return endOfLine(text, end);
}

function itemStart(item: Item): number {
  const range = rangeOf(isPair(item) ? item.key : item);
  if (!range) throw new Error("no range");
  return range[0];
}

/** Where a node sits: a map's value or key, or a list's item. */
type Slot = "value" | "key" | "item";

/**
 * Patch a node that exists in the original text; `indent` is the column of
 * its key (a value) or of its dash (a list item).
 */
function diffNode(ctx: Ctx, node: ParsedNode, slot: Slot, indent: number): void {
  if (unchanged(ctx, node)) return;
  const range = rangeOf(node);
  if (!range) throw new Error("no range");
  const replace = (): void => {
    ctx.patches.push({ from: range[0], to: range[1] - trailingNewline(ctx.text, range), insert: renderInSlot(node, slot, indent) });
  };
  if (isScalar(node)) return replace();
  if (!isCollection(node)) throw new Error("alias changed");
  const before = ctx.snap.items.get(node) ?? [];
  // Flow collections are printed again whole (they are one line); so is an emptied block.
  if ((node as YAMLMap).flow || node.items.length === 0 || before.length === 0) return replace();
  diffBlock(ctx, node as YAMLMap | YAMLSeq, before);
}

function trailingNewline(text: string, range: [number, number, number]): number {
  return range[1] > range[0] && text[range[1] - 1] === "\n" ? 1 : 0;
}

function diffBlock(ctx: Ctx, node: YAMLMap | YAMLSeq, before: Item[]): void {
  const { text } = ctx;
  const items = node.items as Item[];
  const kept = new Set(items);
  // Where new items start: a map's keys, or a list's dashes.
  const column0 = column(text, isSeq(node) ? (rangeOf(node) ?? [itemStart(before[0])])[0] : itemStart(before[0]));
  // Removed items: their lines go (with comment lines right above them).
  before.forEach((item, i) => {
    if (kept.has(item)) return;
    ctx.patches.push(removal(text, item, before[i + 1] ?? null, isSeq(node)));
  });
  // New and changed items, in order; new ones go after the item before them.
  const original = new Set(before);
  let anchor: Item | null = null;
  let pending: Item[] = [];
  const flush = (next: Item | null) => {
    if (pending.length === 0) return;
    const lines = pending.map((item) => renderItem(item, isSeq(node), column0, ctx.step)).join("\n");
    if (anchor) ctx.patches.push({ from: itemEnd(text, anchor), to: itemEnd(text, anchor), insert: `\n${lines}` });
    else if (next) {
      const at = lineStart(text, itemStart(next));
      ctx.patches.push({ from: at, to: at, insert: `${lines}\n` });
    } else throw new Error("no place for new items");
    pending = [];
  };
  for (const item of items) {
    if (!original.has(item)) {
      pending.push(item);
      continue;
    }
    flush(item);
    anchor = item;
    if (isPair(item)) diffPair(ctx, item, column0);
    else diffNode(ctx, item as ParsedNode, "item", column0);
  }
  flush(null);
}

function diffPair(ctx: Ctx, pair: Pair, indent: number): void {
  if (unchanged(ctx, pair)) return;
  const was = ctx.snap.pairs.get(pair);
  if (!was) throw new Error("unknown pair");
  if (pair.key !== was.key) throw new Error("key replaced");
  if (!unchanged(ctx, pair.key as object)) diffNode(ctx, pair.key as ParsedNode, "key", indent);
  if (pair.value === was.value && pair.value && typeof pair.value === "object") {
    const value = pair.value as ParsedNode;
    const old = ctx.snap.items.get(value);
    // An empty flow value (`nodes: {}`) that got items becomes a block, printed after its key.
    if (isCollection(value) && (value as YAMLMap).flow && old && old.length === 0 && value.items.length > 0) {
      (value as YAMLMap).flow = false;
      replaceValue(ctx, pair, indent);
    } else if (isCollection(value) && !(value as YAMLMap).flow && value.items.length === 0) {
      replaceValue(ctx, pair, indent); // emptied: `key: {}` on the key's line
    } else diffNode(ctx, value, "value", indent);
    return;
  }
  if (pair.value !== was.value) replaceValue(ctx, pair, indent);
}

/** Print `pair`'s (new) value after its key, in place of the old value's text. */
function replaceValue(ctx: Ctx, pair: Pair, indent: number): void {
  const { text } = ctx;
  const keyRange = rangeOf(pair.key);
  const was = ctx.snap.pairs.get(pair);
  if (!keyRange || !was) throw new Error("no key range");
  const colon = text.indexOf(":", keyRange[1]);
  if (colon < 0 || text.slice(keyRange[1], colon).trim() !== "") throw new Error("no colon");
  const oldRange = rangeOf(was.value);
  let to = colon + 1;
  if (oldRange && oldRange[1] > oldRange[0]) to = oldRange[1] - trailingNewline(text, oldRange);
  const printed = renderItem(pair, false, 0, ctx.step);
  const afterKey = printed.slice(printed.indexOf(":", printAlone(pair.key).length) + 1);
  ctx.patches.push({ from: colon + 1, to, insert: indentLines(afterKey, indent) });
}

function removal(text: string, item: Item, next: Item | null, inSeq: boolean): Patch {
  const start = itemStart(item);
  let from = lineStart(text, start);
  const before = text.slice(from, start);
  const clean = inSeq ? /^\s*-\s*$/.test(before) || before.trim() === "" : before.trim() === "";
  if (!clean) {
    // A pair after `- ` (the first key of a list item's map): cut up to the next key.
    if (!next) throw new Error("cannot remove");
    return { from: start, to: itemStart(next), insert: "" };
  }
  // Comment lines right above the item belong to it.
  while (from > 0) {
    const prev = lineStart(text, from - 1);
    if (
      !text
        .slice(prev, from - 1)
        .trimStart()
        .startsWith("#")
    )
      break;
    from = prev;
  }
  const end = itemEnd(text, item);
  return { from, to: Math.min(text.length, end + 1), insert: "" };
}

/** `text`'s lines after the first, indented by `indent` more spaces. */
function indentLines(text: string, indent: number): string {
  const pad = " ".repeat(indent);
  return text
    .split("\n")
    .map((line, i) => (i === 0 || line === "" ? line : pad + line))
    .join("\n");
}

function printAlone(contents: unknown, options: object = PRINT_OPTIONS): string {
  const tiny = new Document();
  tiny.contents = contents as YamlNode;
  return tiny.toString(options).replace(/\n$/, "");
}

/**
 * A node printed to go in place of its own characters in `slot`: as the value
 * of a one-key map or the item of a one-item list (so block scalars get their
 * indentation), its comments left where they are in the text.
 */
function renderInSlot(node: YamlNode, slot: Slot, indent: number): string {
  const bare = node.clone() as YamlNode;
  bare.comment = null;
  bare.commentBefore = null;
  bare.spaceBefore = false;
  if (slot === "key") return printAlone(bare);
  // A folded block that changed is folded again at 80 columns, not written as one long line.
  const folded = isScalar(bare) && bare.type === "BLOCK_FOLDED";
  const options = folded ? { ...PRINT_OPTIONS, lineWidth: Math.max(40, 80 - indent) } : PRINT_OPTIONS;
  const holder = slot === "item" ? new YAMLSeq() : new YAMLMap();
  if (slot === "item") (holder as YAMLSeq).items.push(bare);
  else (holder as YAMLMap).items.push(new Pair(new Scalar("k"), bare));
  const printed = printAlone(holder, options);
  const head = slot === "item" ? "- " : "k: ";
  const body = printed.startsWith(head) ? printed.slice(head.length) : printed.slice(head.length - 1);
  return indentLines(body, indent);
}

/** A map pair or list item printed on its own, indented to `indent`. */
function renderItem(item: Item, inSeq: boolean, indent: number, step: number): string {
  const holder = inSeq ? new YAMLSeq() : new YAMLMap();
  holder.items.push(item as never);
  const printed = printAlone(holder, { ...PRINT_OPTIONS, indent: step });
  const pad = " ".repeat(indent);
  return printed
    .split("\n")
    .map((line) => (line === "" ? line : pad + line))
    .join("\n");
}

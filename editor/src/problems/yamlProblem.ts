/**
 * A YAML syntax error as one clear problem: where the mistake is (not where
 * the parser gave up), what is wrong in words, a fix, and a one-click fix
 * when the fix is mechanical.
 *
 * The `yaml` package reports one Backspace in an indentation as several
 * errors ("Nested mappings are not allowed in compact mappings", "Implicit
 * keys need to be on a single line", ...) on lines after the mistake, and an
 * unclosed `[` where the list ran into the next key. So the text is first
 * scanned line by line for the usual causes (indentation that lines up with
 * nothing, a key deeper than a sibling that has a value, a tab, an unclosed
 * bracket or quote); a cause at or before the parser's first error wins.
 * Otherwise the parser's first error is put in words by its code.
 */

import { parseDocument } from "yaml";

/** A text edit a one-click fix applies. */
export interface TextChange {
  from: number;
  to: number;
  insert: string;
}

export interface QuickFix {
  label: string;
  changes: TextChange[];
}

export interface YamlProblem {
  /** 1-based. */
  line: number;
  column: number;
  /** Offsets in the text. */
  from: number;
  to: number;
  message: string;
  fix: string;
  code: string;
  quickFix: QuickFix | null;
}

/** What the `yaml` package reports (its `YAMLParseError`). */
export interface ParserError {
  code: string;
  message: string;
  pos: [number, number];
}

interface Line {
  index: number;
  /** Offset of the line's first character. */
  start: number;
  text: string;
}

function linesOf(text: string): Line[] {
  const out: Line[] = [];
  let start = 0;
  text.split("\n").forEach((line, index) => {
    out.push({ index, start, text: line });
    start += line.length + 1;
  });
  return out;
}

const indentOf = (line: string) => line.length - line.trimStart().length;
const isBlank = (line: string) => line.trim() === "" || line.trimStart().startsWith("#");
/** `key:` (with a value or not) or `- ...` at the start of a line's content. */
const KEY = /^(?:- +)?(?:"[^"]*"|'[^']*'|[^\s#'"{[\]}:,][^:#]*?)\s*:(?:\s|$)/;
const keyName = (content: string) =>
  content
    .replace(/^- +/, "")
    .replace(/^[{[]\s*/, "")
    .split(":")[0]
    .trim()
    .replace(/^["']|["']$/g, "");

/** The content of a line without a trailing comment (outside quotes), and what opens or closes on it. */
function scanLine(text: string, open: Opener[], lineStart: number): { content: string } {
  let quote: '"' | "'" | null =
    open.length && (open[open.length - 1].char === '"' || open[open.length - 1].char === "'") ? (open[open.length - 1].char as '"' | "'") : null;
  let end = text.length;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (quote === '"' && ch === "\\") i++;
      else if (ch === quote) {
        if (quote === "'" && text[i + 1] === "'") i++;
        else {
          quote = null;
          open.pop();
        }
      }
      continue;
    }
    if (ch === "#" && (i === 0 || /\s/.test(text[i - 1]))) {
      end = i;
      break;
    }
    if (ch === '"' || ch === "'") {
      // A quote starts a quoted scalar only where a value starts (not inside `it's`).
      const before = text.slice(0, i).trimEnd();
      if (before === "" || /[:\-[{,?]$/.test(before)) {
        quote = ch;
        open.push({ char: ch, offset: lineStart + i });
      }
    } else if (ch === "[" || ch === "{") {
      const before = text.slice(0, i).trimEnd();
      if (before === "" || /[:\-[{,?]$/.test(before) || open.some((o) => o.char === "[" || o.char === "{")) open.push({ char: ch, offset: lineStart + i });
    } else if ((ch === "]" || ch === "}") && open.length && open[open.length - 1].char === (ch === "]" ? "[" : "{")) open.pop();
  }
  return { content: text.slice(0, end).trimEnd() };
}

interface Opener {
  char: string;
  offset: number;
}

interface Level {
  indent: number;
  line: Line;
  key: string;
  /** The line ends with `key:` (a block follows) or is a bare `-`. */
  opens: boolean;
  /** Column of a map that starts on a `- key: value` line (its next keys line up there). */
  inner: number | null;
  /** The first line at this level under its parent, and how many lines share it. */
  first: Line;
  count: number;
}

function problemAt(line: Line, column: number, message: string, fix: string, code: string, quickFix: QuickFix | null): YamlProblem {
  const from = line.start + column - 1;
  return { line: line.index + 1, column, from, to: Math.max(from + 1, line.start + line.text.length), message, fix, code, quickFix };
}

/** Re-indent a line to `indent` spaces (a one-click fix). */
function reindent(line: Line, indent: number): QuickFix {
  const current = indentOf(line.text);
  return {
    label: `Indent line ${line.index + 1} to column ${indent + 1}`,
    changes: [{ from: line.start, to: line.start + current, insert: " ".repeat(indent) }],
  };
}

/**
 * What the line scan found: a problem, or an indentation slip given as the
 * lines that may be the mistake, likeliest first, each a problem whose
 * one-click fix re-indents it (`explainYaml` picks the first that parses).
 */
export type Finding = { kind: "problem"; problem: YamlProblem } | { kind: "indentation"; candidates: YamlProblem[] };

const keyLabel = (key: string, line: Line) => (key ? `\`${key}\` on line ${line.index + 1}` : `line ${line.index + 1}`);

function blameOther(level: Level, to: number, because: Line, becauseKey: string): YamlProblem {
  return problemAt(
    level.first,
    level.indent + 1,
    `${keyLabel(keyName(level.first.text.trim()), level.first)} is indented to column ${level.indent + 1}, but ${keyLabel(becauseKey, because)}, at the same level, is at column ${to + 1}`,
    `indent it to column ${to + 1}: YAML nests keys by their indentation`,
    "yaml-indentation",
    reindent(level.first, to),
  );
}

function linesUpWithNothing(line: Line, indent: number, key: string, found: number[]): YamlProblem[] {
  const levels = [...new Set(found)].sort((a, b) => a - b);
  // Nearest levels first; on a tie the deeper one (a sibling is likelier than a parent).
  const order = [...levels].sort((a, b) => Math.abs(a - indent) - Math.abs(b - indent) || b - a).slice(0, 2);
  return order.map((target) =>
    problemAt(
      line,
      indent + 1,
      `${keyLabel(key, line)} is indented to column ${indent + 1}, which lines up with no key above it`,
      `indent it to column ${target + 1}${levels.length > 1 ? ` (the keys around it are at columns ${levels.map((l) => l + 1).join(", ")})` : ""}: YAML nests keys by their indentation`,
      "yaml-indentation",
      reindent(line, target),
    ),
  );
}

const levelsOf = (stack: Level[]) => [...stack.map((l) => l.indent), ...stack.map((l) => l.inner).filter((i): i is number => i !== null)];

/** The first structural mistake the line scan finds, or null. */
export function scanStructure(text: string, step = 2): Finding | null {
  const lines = linesOf(text);
  const stack: Level[] = [];
  const open: Opener[] = [];
  let blockScalarOf: number | null = null; // indent of the key whose `|` / `>` block is being read
  let openedOn: Line | null = null;
  for (const line of lines) {
    const raw = line.text;
    if (blockScalarOf !== null) {
      if (raw.trim() === "" || indentOf(raw) > blockScalarOf) continue;
      blockScalarOf = null;
    }
    if (open.length > 0) {
      // Inside an unclosed bracket or quote: a new key at or left of where it opened means it never closed.
      const starter = openedOn ? indentOf(openedOn.text) : 0;
      if (!isBlank(raw) && indentOf(raw) <= starter && KEY.test(raw.trimStart()) && openedOn)
        return { kind: "problem", problem: unclosed(lines, open[0], line) };
      scanLine(raw, open, line.start);
      continue;
    }
    if (isBlank(raw)) continue;
    const lead = raw.slice(0, raw.length - raw.trimStart().length);
    if (lead.includes("\t")) {
      const spaces = lead.replace(/\t/g, " ".repeat(step));
      return {
        kind: "problem",
        problem: problemAt(
          line,
          1,
          `a tab in the indentation of line ${line.index + 1}`,
          "YAML indents with spaces only: replace the tab with spaces",
          "yaml-tab",
          {
            label: "Replace the tab with spaces",
            changes: [{ from: line.start, to: line.start + lead.length, insert: spaces }],
          },
        ),
      };
    }
    const indent = lead.length;
    const { content: full } = scanLine(raw, open, line.start);
    if (open.length > 0) openedOn = line;
    const content = full.trim();
    const isItem = content.startsWith("- ") || content === "-";
    const key = keyName(content);
    const opens = /:$/.test(content) || content === "-";
    if (/:\s*[|>][-+0-9]*$/.test(content) || /^-\s*[|>][-+0-9]*$/.test(content)) blockScalarOf = indent;
    const inner = isItem && KEY.test(content) && !opens ? indent + (content.length - content.replace(/^- +/, "").length) : null;
    const level = (): Level => ({ indent, line, key, opens, inner, first: line, count: 1 });

    let popped: Level | null = null;
    while (stack.length && stack[stack.length - 1].indent > indent && stack[stack.length - 1].inner !== indent) popped = stack.pop()!;
    const top = stack[stack.length - 1];
    if (popped && top && indent > top.indent && top.inner !== indent) {
      // Left of a level just closed, right of its parent: this line, or a lone line of that level, is off.
      const candidates = linesUpWithNothing(line, indent, key, [...levelsOf(stack), popped.indent]);
      if (popped.count === 1) candidates.unshift(blameOther(popped, indent, line, key));
      if (top.count === 1 && stack.length > 1) candidates.splice(1, 0, blameOther(top, indent, line, key));
      return { kind: "indentation", candidates };
    }
    if (top && indent > top.indent) {
      const fits = top.opens || top.inner === indent || (!KEY.test(content) && !isItem); // a plain value going on
      if (!fits) {
        // Its place is beside the key above it (on a `- key:` line, beside that key).
        const beside = top.inner ?? top.indent;
        const deeper = problemAt(
          line,
          indent + 1,
          `${keyLabel(key, line)} is indented ${indent > beside ? "deeper" : "less"} (column ${indent + 1}) than \`${top.key}\` on line ${top.line.index + 1} (column ${beside + 1}), which already has a value`,
          `indent it to column ${beside + 1} to go on with the keys of line ${top.line.index + 1}: YAML reads a deeper line as part of the value above`,
          "yaml-indentation",
          reindent(line, beside),
        );
        // A lone first key under its parent may be the one that is off (one Backspace before it).
        const shift = top.inner !== null ? top.inner - top.indent : 0;
        const candidates = top.count === 1 && stack.length > 1 ? [blameOther(top, indent - shift, line, key), deeper] : [deeper];
        return { kind: "indentation", candidates };
      }
      stack.push(level());
      continue;
    }
    if (top && indent === top.indent) {
      stack[stack.length - 1] = { ...level(), first: top.first, count: top.count + 1 };
      continue;
    }
    if (top && top.inner === indent) {
      stack.push(level());
      continue;
    }
    if (top && indent < top.indent) return { kind: "indentation", candidates: linesUpWithNothing(line, indent, key, levelsOf(stack)) };
    if (!top && indent > 0) {
      return {
        kind: "problem",
        problem: problemAt(
          line,
          indent + 1,
          `line ${line.index + 1} is indented, but nothing above it opens a block`,
          "start top-level keys at column 1",
          "yaml-indentation",
          reindent(line, 0),
        ),
      };
    }
    stack.push(level());
  }
  if (open.length > 0) return { kind: "problem", problem: unclosed(lines, open[0], null) };
  return null;
}

function unclosed(lines: Line[], opener: Opener, ranInto: Line | null): YamlProblem {
  const line = lines.find((l) => opener.offset >= l.start && opener.offset <= l.start + l.text.length)!;
  const column = opener.offset - line.start + 1;
  const where = ranInto ? `, and YAML read on into line ${ranInto.index + 1}` : ", and YAML read on to the end of the text";
  const closer = { "[": "]", "{": "}", '"': '"', "'": "'" }[opener.char] ?? opener.char;
  const what = opener.char === "[" ? "list" : opener.char === "{" ? "mapping" : "quoted text";
  // The fix: close it at the end of the line it opened on (before a comment).
  const { content } = scanLine(line.text, [], line.start);
  const at = line.start + content.length;
  return {
    line: line.index + 1,
    column,
    from: opener.offset,
    to: opener.offset + 1,
    message: `the \`${opener.char}\` opened on line ${line.index + 1}, column ${column} is never closed${where}`,
    fix:
      opener.char === "[" || opener.char === "{"
        ? `close the ${what} with \`${closer}\`, or quote the value if the \`${opener.char}\` is meant as text`
        : `end the text with a closing \`${closer}\` (a \`${closer}\` inside it is written ${closer === '"' ? '`\\"`' : "`''`"})`,
    code: "yaml-unclosed",
    quickFix: { label: `Close it with ${closer} at the end of line ${line.index + 1}`, changes: [{ from: at, to: at, insert: closer }] },
  };
}

/** The parser's error put in words, by its code. */
function fromParser(text: string, error: ParserError): YamlProblem {
  const lines = linesOf(text);
  const offset = Math.min(error.pos[0], Math.max(0, text.length - 1));
  const line = lines.find((l) => offset >= l.start && offset <= l.start + l.text.length) ?? lines[lines.length - 1];
  const column = offset - line.start + 1;
  const base = (message: string, fix: string, code: string, quickFix: QuickFix | null = null) => problemAt(line, column, message, fix, code, quickFix);
  const content = line.text.trimStart();
  switch (error.code) {
    case "DUPLICATE_KEY": {
      const key = keyName(content);
      return base(
        `\`${key}\` appears twice in the same mapping`,
        `keep one \`${key}\` and remove or rename the other; YAML would silently keep only one`,
        "yaml-duplicate-key",
      );
    }
    case "BLOCK_AS_IMPLICIT_KEY":
    case "MULTILINE_IMPLICIT_KEY": {
      const m = /^(\s*(?:- +)?[^\s:#][^:#]*?:\s+)(.*?)\s*(#.*)?$/.exec(line.text);
      if (m && m[2].includes(": ")) {
        const from = line.start + m[1].length;
        return base(
          "a `: ` inside an unquoted value starts a new mapping",
          "quote the whole value; a CEL conditional needs quotes too: `route: \"state.ok ? 'yes' : 'no'\"`",
          "yaml-syntax",
          { label: "Quote the value", changes: [{ from, to: from + m[2].length, insert: JSON.stringify(m[2]) }] },
        );
      }
      return base("this line does not fit the mapping above it", "check its indentation, and quote values that contain `: `", "yaml-syntax");
    }
    case "MULTIPLE_DOCS":
      return base(
        "the text holds more than one YAML document (`---`)",
        "keep one spec per file: remove the `---` and what follows, or move it to a file of its own",
        "yaml-multiple-documents",
      );
    case "BAD_DQ_ESCAPE":
      return base(
        "an escape inside double quotes that YAML does not know (like `\\d`)",
        "write `\\\\` for a backslash, or use single quotes, where `\\` is just a character",
        "yaml-syntax",
      );
    case "BAD_SCALAR_START":
      return base("an unquoted value cannot start with this character (`@`, a backtick, `%`...)", "quote the value", "yaml-syntax");
    case "TAB_AS_INDENT":
      return base("a tab in the indentation", "YAML indents with spaces only: replace the tab with spaces", "yaml-tab");
    case "MISSING_CHAR":
      return base("a bracket or quote is not closed", "close it where the value ends", "yaml-unclosed");
    default:
      return base(
        `invalid YAML: ${error.message.split("\n")[0]}`,
        "check the indentation and quoting of this line (quote values that contain `: ` or ` #`)",
        "yaml-syntax",
      );
  }
}

/** A problem's one-click fix applied to `text`. */
export function applyQuickFix(text: string, fix: QuickFix): string {
  let out = text;
  for (const c of [...fix.changes].sort((a, b) => b.from - a.from)) out = out.slice(0, c.from) + c.insert + out.slice(c.to);
  return out;
}

const parses = (text: string) => parseDocument(text, { prettyErrors: false }).errors.length === 0;

/** One problem for a text the parser refused (`errors` non-empty). */
export function explainYaml(text: string, errors: readonly ParserError[], step = 2): YamlProblem {
  const first = [...errors].sort((a, b) => a.pos[0] - b.pos[0])[0];
  const found = scanStructure(text, step);
  if (!found) return fromParser(text, first);
  // A tab or an unclosed bracket is the cause wherever the parser noticed it.
  if (found.kind === "problem") return found.problem;
  // An indentation slip: the likeliest line whose re-indenting makes the text parse,
  // preferring one that lands on the document's step (people indent regularly).
  const offStep = (c: YamlProblem) => (c.quickFix!.changes[0].insert.length % step === 0 ? 0 : 1);
  const ordered = [...found.candidates].sort((a, b) => offStep(a) - offStep(b));
  const works = ordered.find((c) => parses(applyQuickFix(text, c.quickFix!)));
  if (works) return works;
  const firstLine = text.slice(0, first.pos[0]).split("\n").length;
  const guess = found.candidates[0];
  return guess.line <= firstLine + 1 ? { ...guess, quickFix: null } : fromParser(text, first);
}

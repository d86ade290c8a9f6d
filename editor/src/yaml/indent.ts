/** Indentation of the YAML pane's new lines. */

/** The indentation of a new line: one step deeper after `key:` or `- key:`, else as the line above. */
export function yamlIndent(previous: string, step = 2): number {
  const content = previous.replace(/\s+#.*$/, "").trimEnd();
  const indent = previous.length - previous.trimStart().length;
  if (content.endsWith(":") || /:\s*[|>][-+0-9]*$/.test(content) || content.trim() === "-") return indent + step;
  const item = /^(\s*)- +(?=\S)/.exec(content);
  if (item && /^(\s*)- +[^\s#][^:]*:\s+\S/.test(content)) return item[0].length; // the item's other keys line up
  return indent;
}

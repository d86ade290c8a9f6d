/**
 * Hover texts of the YAML pane in words: a field's description and what it
 * takes ("one of: replace, append", "a node: agent, llm, ..."), instead of
 * codemirror-json-schema's raw schema (`oneOf: #/$defs/AgentNode, ...`).
 */
import type { FoundCursorData } from "codemirror-json-schema";

type Schema = { [key: string]: unknown };

/** `#/$defs/AgentNode` -> "agent node". */
function refName(ref: string): string {
  const name = ref.split("/").pop() ?? ref;
  return name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase();
}

/** What a schema accepts, in a few words. */
export function describeType(schema: Schema): string {
  if (Array.isArray(schema.enum)) return `one of: ${schema.enum.map(String).join(", ")}`;
  if (schema.const !== undefined) return `always ${JSON.stringify(schema.const)}`;
  const discriminator = schema.discriminator as { mapping?: Record<string, string> } | undefined;
  if (discriminator?.mapping) return `one of the kinds: ${Object.keys(discriminator.mapping).join(", ")}`;
  const variants = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
  if (Array.isArray(variants)) {
    const optional = variants.some((v) => v.type === "null");
    const parts = [...new Set(variants.filter((v) => v.type !== "null").map((v) => (typeof v.$ref === "string" ? refName(v.$ref) : describeType(v))))];
    return `${parts.join(" or ")}${optional ? " (optional)" : ""}`;
  }
  if (typeof schema.$ref === "string") return refName(schema.$ref);
  switch (schema.type) {
    case "string":
      return "text";
    case "integer":
      return "a whole number";
    case "number":
      return "a number";
    case "boolean":
      return "true or false";
    case "array": {
      const items = (schema.items ?? {}) as Schema;
      return `a list of ${describeType(items) || "values"}`;
    }
    case "object":
      return "a mapping";
    default:
      return "";
  }
}

/** The hover's texts: what the field is for, and what it takes. */
export function hoverTexts(data: FoundCursorData): { message: string; typeInfo: string } {
  const schema = data.schema as unknown as Schema;
  const title = typeof schema.title === "string" ? schema.title : "";
  const description = typeof schema.description === "string" ? schema.description : "";
  const field = data.pointer.split("/").pop() ?? "";
  return { message: description || title || field, typeInfo: describeType(schema) };
}

/** The hover's element: plain text, no markdown (short and readable). */
export function formatHover({ message, typeInfo }: { message: string; typeInfo: string }): HTMLElement {
  const box = document.createElement("div");
  box.className = "plait-hover";
  const text = document.createElement("div");
  text.textContent = message;
  box.append(text);
  if (typeInfo) {
    const type = document.createElement("div");
    type.className = "plait-hover-type";
    type.textContent = `Takes ${typeInfo}.`;
    box.append(type);
  }
  return box;
}

/**
 * The text of a new graph: the blank template or another graph's spec, under
 * a new name and version (only those two scalars change in a template).
 */
import { applyEdit } from "../spec/edit";

/** `metadata.name` as the spec schema allows it. */
export const GRAPH_NAME_PATTERN = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;
/** `metadata.version`: a semantic version. */
export const VERSION_PATTERN = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;
export const DEFAULT_VERSION = "0.1.0";

/** Why `name` cannot name a new graph (null: it can). */
export function graphNameProblem(name: string, taken: readonly string[]): string | null {
  if (!name) return "give the graph a name";
  if (name.length > 63) return "a graph name has at most 63 characters";
  if (!GRAPH_NAME_PATTERN.test(name)) return "lowercase letters, digits and `-` (not at the start or end), e.g. `refund-desk`";
  if (taken.includes(name)) return `there is already a graph ${name}: pick another name, or open it from the Graphs page`;
  return null;
}

export function versionProblem(version: string): string | null {
  return VERSION_PATTERN.test(version) ? null : 'a semantic version such as "0.1.0"';
}

/** A graph to start from nothing: state in and out, a scripted model that runs offline, no nodes yet. */
export function blankSpec(name: string, version: string): string {
  return `# yaml-language-server: $schema=../schemas/plait-v1.schema.json
apiVersion: plait/v1
kind: Graph
metadata:
  name: ${name}
  version: "${version}"
spec:
  state:
    text: {type: string, description: What the graph is given.}
    answer: {type: string, description: What it gives back.}
  input: [text]
  output: [answer]

  models:
    assistant:
      provider: scripted
      script:
        - content: A scripted reply. Use a real provider (e.g. openai:gpt-4o-mini) when you are ready.

  nodes: {}
  edges: []
`;
}

/** `text` (another graph's spec) as graph `name` at `version`; everything else as written. */
export function fromTemplate(text: string, name: string, version: string): string {
  return applyEdit(text, (doc) => {
    doc.setIn(["metadata", "name"], name);
    doc.setIn(["metadata", "version"], version);
  }).text;
}

/**
 * The node palette: drag a kind onto the canvas (HTML5 drag and drop), or
 * click it to add the node below the selection.
 */
import specSchema from "../../../schemas/plait-v1.schema.json";
import { nodeKindSchema } from "../properties/schemaForm";
import type { JsonSchema } from "../properties/schemaForm";
import { NODE_KINDS } from "../spec/model";
import { lookOf } from "./nodes/kinds";

export const KIND_MIME = "application/x-plait-kind";

/** Only kinds the spec language defines can be added (the canvas still draws every kind). */
const ADDABLE_KINDS = NODE_KINDS.filter((kind) => nodeKindSchema(specSchema as JsonSchema, kind) !== null);

export function Palette({ onAdd }: { onAdd: (kind: string) => void }) {
  return (
    <div className="plait-palette" data-testid="palette">
      <div className="plait-panel-title">Nodes</div>
      {ADDABLE_KINDS.map((kind) => {
        const look = lookOf(kind);
        return (
          <div
            key={kind}
            className="plait-palette-item"
            data-testid={`palette-${kind}`}
            draggable
            title={`Drag onto the canvas (or click) to add a ${look.label} node`}
            style={{ ["--kind-color" as string]: look.color }}
            onDragStart={(e) => {
              e.dataTransfer.setData(KIND_MIME, kind);
              e.dataTransfer.effectAllowed = "copy";
            }}
            onClick={() => onAdd(kind)}
          >
            <span className="plait-node-icon">{look.icon}</span>
            {look.label}
          </div>
        );
      })}
    </div>
  );
}

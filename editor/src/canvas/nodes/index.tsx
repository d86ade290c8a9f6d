/**
 * Canvas node components: one per kind (sharing a shell that draws the icon,
 * id, key fields, problem badge, run status, visit count and diff mark), plus
 * the START and END terminals.
 *
 * Every card has the same fixed size (spec/layout.ts NODE_SIZE, which elk lays
 * out): what a run adds (`extra`) gets one clipped line at the bottom, so a
 * run never grows a card onto its neighbours.
 */
import { Handle, Position, type Node, type NodeProps, type NodeTypes } from "@xyflow/react";
import type { ReactNode } from "react";
import { editorHash } from "../../routes";
import type { GraphNode } from "../../spec/model";
import type { NodeDiffMark, NodeRunStatus } from "../../store/editorStore";
import { KIND_LOOKS, lookOf } from "./kinds";

export interface SpecNodeData extends Record<string, unknown> {
  node: GraphNode;
  issues: string[];
  status?: NodeRunStatus;
  diff?: NodeDiffMark;
  extra?: ReactNode;
  /** Times the node ran in the run shown. */
  visits?: number;
}

export type SpecFlowNode = Node<SpecNodeData>;

function NodeShell({ data, selected, children }: { data: SpecNodeData; selected?: boolean; children?: ReactNode }) {
  const { node, issues, status, diff, extra, visits } = data;
  const look = lookOf(node.kind);
  const classes = ["plait-node", look.shape, selected ? "selected" : "", status ? `status-${status}` : "", diff ? `diff-${diff}` : ""];
  return (
    <div
      className={classes.filter(Boolean).join(" ")}
      style={{ ["--kind-color" as string]: look.color }}
      data-testid={`node-${node.id}`}
      data-kind={node.kind}
      data-status={status ?? ""}
      data-diff={diff ?? ""}
    >
      {/* The approval's cut-corner outline is drawn by this layer, so the card itself keeps its status ring. */}
      {look.shape === "shape-approval" && <div className="plait-node-frame" aria-hidden />}
      <Handle type="target" position={Position.Top} />
      <div className="plait-node-head">
        <span className="plait-node-icon" aria-hidden>
          {look.icon}
        </span>
        <span className="plait-node-id">{node.id}</span>
        {visits !== undefined && visits > 1 && (
          <span className="plait-node-visits" data-testid={`node-visits-${node.id}`} title={`Ran ${visits} times in this run`}>
            ×{visits}
          </span>
        )}
        <span className="plait-node-kind">{look.label}</span>
        {issues.length > 0 && (
          <span className="plait-node-badge" data-testid={`node-badge-${node.id}`} title={issues.join("\n")}>
            {issues.length}
          </span>
        )}
      </div>
      <div className="plait-node-body">
        {look.summary(node.fields).map((line, i) => (
          <div key={i} className="plait-node-field">
            {line}
          </div>
        ))}
        {children}
      </div>
      <div className="plait-node-foot">
        {status && (
          <span className="plait-node-status" data-testid={`node-status-${node.id}`}>
            {status}
          </span>
        )}
        {extra && <div className="plait-node-extra nodrag nowheel">{extra}</div>}
      </div>
      <Handle type="source" position={Position.Bottom} />
    </div>
  );
}

/** A subgraph node: its `ref` (name@version) opens in the editor. */
function SubgraphNode({ data, selected }: NodeProps<SpecFlowNode>) {
  const ref = typeof data.node.fields.ref === "string" ? data.node.fields.ref : "";
  const at = ref.lastIndexOf("@");
  const target = at > 0 ? editorHash(ref.slice(0, at), ref.slice(at + 1)) : null;
  return (
    <NodeShell data={data} selected={selected}>
      {target && (
        <button
          className="plait-node-open nodrag"
          data-testid={`open-subgraph-${data.node.id}`}
          onClick={(e) => {
            e.stopPropagation();
            window.location.hash = target;
          }}
        >
          Open {ref} ↗
        </button>
      )}
    </NodeShell>
  );
}

function makeKindNode(kind: string) {
  function KindNode({ data, selected }: NodeProps<SpecFlowNode>) {
    return <NodeShell data={data} selected={selected} />;
  }
  KindNode.displayName = `${kind}Node`;
  return KindNode;
}

/** START and END: small terminals (START only emits, END only receives). */
function TerminalNode({ id }: NodeProps) {
  return (
    <div className={`plait-terminal terminal-${id.toLowerCase()}`} data-testid={`node-${id}`}>
      {id !== "START" && <Handle type="target" position={Position.Top} />}
      {id}
      {id !== "END" && <Handle type="source" position={Position.Bottom} />}
    </div>
  );
}

export const nodeTypes: NodeTypes = {
  ...Object.fromEntries(Object.keys(KIND_LOOKS).map((kind) => [kind, makeKindNode(kind)])),
  subgraph: SubgraphNode,
  unknown: makeKindNode("unknown"),
  terminal: TerminalNode,
};

/** The React Flow node type for a spec node kind. */
export const nodeTypeOf = (kind: string): string => (kind in KIND_LOOKS ? kind : "unknown");

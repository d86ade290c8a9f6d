/**
 * Canvas node components: a card per spec node (a shell that draws the icon,
 * id, key fields, problem badge, run status, visit count and diff mark; a
 * subgraph's adds a link to open it), plus the START and END terminals.
 *
 * Every card has the same fixed size (spec/layout.ts NODE_SIZE, which elk lays
 * out): what a run adds gets one clipped line at the bottom, so a run never
 * grows a card onto its neighbours.
 *
 * A node's `data` is its spec and problems. On the editor's canvas each card
 * selects its run state and diff mark from the editor store by its own id, as
 * React Flow's examples do, so a run's progress re-renders only the cards it
 * changes; the diff view's canvas (no run) gets its marks with the node.
 */
import { Handle, Position, type Node, type NodeProps, type NodeTypes } from "@xyflow/react";
import { Fragment, type ComponentType, type ReactNode } from "react";
import { editorHash } from "../../routes";
import { ApprovalAnchor } from "../../runs/ApprovalAnchor";
import type { GraphNode } from "../../spec/model";
import { useShallow } from "zustand/shallow";
import { useEditorStore, type NodeDiffMark, type NodeRunStatus } from "../../store/editorStore";
import { KIND_LOOKS, lookOf } from "./kinds";

export interface SpecNodeData extends Record<string, unknown> {
  node: GraphNode;
  issues: string[];
  /** The version diff mark, given only by the diff view's canvas (the editor's cards select theirs). */
  diff?: NodeDiffMark;
}

export type SpecFlowNode = Node<SpecNodeData>;

/** What a card shows beyond its spec. */
interface NodeMarks {
  status?: NodeRunStatus;
  diff?: NodeDiffMark;
  /** Times the node ran in the run shown. */
  visits?: number;
}

/** A spec node's card; `children` go in its body (a subgraph's link). */
interface CardProps {
  id: string;
  data: SpecNodeData;
  selected: boolean;
  children?: ReactNode;
}

function NodeShell({
  data,
  selected,
  marks,
  run,
  children,
}: {
  data: SpecNodeData;
  selected: boolean;
  marks: NodeMarks;
  run?: ReactNode;
  children?: ReactNode;
}) {
  const { node, issues } = data;
  const { status, diff, visits } = marks;
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
      <div className={`plait-node-foot${status === "waiting" ? " wraps" : ""}`}>
        {status && (
          <span className="plait-node-status" data-testid={`node-status-${node.id}`}>
            {status}
          </span>
        )}
        {run}
      </div>
      <Handle type="source" position={Position.Bottom} />
    </div>
  );
}

const STREAMING_TITLE = "streaming: the run panel's node inspector shows it all";
/** A done node's line: the items its map lost (runs/runStore.ts `lossLines`). */
const LOST_TITLE = "items of this map failed and the run went on without them: the step's detail says which and why";
/** A line that starts with it says what a tool call waits for (runs/timeline.ts `waitingShort`). */
const WAITING_MARK = "waits: ";
const WAITING_TITLE = "a tool call waits for its turn under the tool's limits: the step's detail says which";
/** A waiting node's line that starts with it says until when a `wait` node waits (runs/runStore.ts `runLines`). */
const TIMER_MARK = "until ";
const TIMER_TITLE = "a durable timer resumes the run at this time, unless someone resumes it earlier";
/** A waiting node's other line says which tool's MCP task it waits for (runs/runStore.ts `runLines`). */
const TOOL_TITLE = "the tool runs this call as an MCP task; the server resumes the run when the task ends";

/**
 * What a card's line says, in full, and why, for its tooltip: a waiting node's line is whole
 * sentence with its status word (`waiting for server/tool`); streamed tokens change too often.
 */
function lineTitle(line: string, status: NodeRunStatus): string {
  if (status === "waiting") return `waiting ${line}: ${line.startsWith(TIMER_MARK) ? TIMER_TITLE : TOOL_TITLE}`;
  return line.startsWith(WAITING_MARK) ? `${line}: ${WAITING_TITLE}` : STREAMING_TITLE;
}

/** `server/tool` may break after its slash when it wraps, not in the middle of a name. */
function breakable(line: string): ReactNode {
  return line.split("/").map((part, i) => (
    <Fragment key={i}>
      {i > 0 && (
        <>
          /<wbr />
        </>
      )}
      {part}
    </Fragment>
  ));
}

/**
 * The line a running or waiting node's card shows after its status word; its own component, so
 * streamed tokens re-render only it (drawn only while the node runs or waits: idle cards keep one
 * store subscription, not two). A running node's is one clipped line; a waiting node's (which tool
 * or until when) wraps under the status word, so a long tool name is read whole (the foot grows
 * into the body, never the card: cards keep their size).
 */
function RunLine({ id, status }: { id: string; status: NodeRunStatus }) {
  const line = useEditorStore((s) => s.nodeRunLine[id]);
  if (line === undefined) return null;
  return (
    <div className="plait-node-extra nodrag nowheel">
      <div className="node-tokens" data-testid="node-tokens" title={lineTitle(line, status)}>
        {status === "waiting" ? breakable(line) : line}
      </div>
    </div>
  );
}

/** A card on the editor's canvas: run state and diff mark selected by id; a waiting node anchors its approval card. */
function EditorCard({ id, data, selected, children }: CardProps) {
  // One subscription per card (a 300-node graph mounts 300 of them), compared field by field.
  // A done map's line (the items it lost) comes with the status: no second subscription.
  const { status, diff, visits, lost } = useEditorStore(
    useShallow((s) => ({
      status: s.nodeStatus[id],
      diff: s.nodeDiff[id],
      visits: s.nodeVisits[id],
      lost: s.nodeStatus[id] === "done" ? s.nodeRunLine[id] : undefined,
    })),
  );
  return (
    <NodeShell
      data={data}
      selected={selected}
      marks={{ status, diff, visits }}
      run={
        <>
          {(status === "running" || status === "waiting") && <RunLine id={id} status={status} />}
          {lost !== undefined && (
            <div className="plait-node-extra nodrag nowheel">
              <div className="node-tokens lost" data-testid="node-lost" title={LOST_TITLE}>
                {lost}
              </div>
            </div>
          )}
          {status === "waiting" && <ApprovalAnchor nodeId={id} />}
        </>
      }
    >
      {children}
    </NodeShell>
  );
}

/** A card on the diff view's canvas: no run, and the diff mark its node came with. */
function DiffCard({ data, selected, children }: CardProps) {
  return (
    <NodeShell data={data} selected={selected} marks={{ diff: data.diff }}>
      {children}
    </NodeShell>
  );
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

/** The node types of a canvas whose spec nodes are drawn by `Card`. */
function nodeTypesOf(Card: ComponentType<CardProps>): NodeTypes {
  function KindNode({ id, data, selected }: NodeProps<SpecFlowNode>) {
    return <Card id={id} data={data} selected={selected} />;
  }
  /** A subgraph node: its `ref` (name@version) opens in the editor. */
  function SubgraphNode({ id, data, selected }: NodeProps<SpecFlowNode>) {
    const ref = typeof data.node.fields.ref === "string" ? data.node.fields.ref : "";
    const at = ref.lastIndexOf("@");
    const target = at > 0 ? editorHash(ref.slice(0, at), ref.slice(at + 1)) : null;
    return (
      <Card id={id} data={data} selected={selected}>
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
      </Card>
    );
  }
  return {
    ...Object.fromEntries(Object.keys(KIND_LOOKS).map((kind) => [kind, KindNode])),
    subgraph: SubgraphNode,
    unknown: KindNode,
    terminal: TerminalNode,
  };
}

/** The editor's canvas. */
export const nodeTypes = nodeTypesOf(EditorCard);
/** The diff view's canvas (versions/DiffGraph). */
export const diffNodeTypes = nodeTypesOf(DiffCard);

/** The React Flow node type for a spec node kind. */
export const nodeTypeOf = (kind: string): string => (kind in KIND_LOOKS ? kind : "unknown");

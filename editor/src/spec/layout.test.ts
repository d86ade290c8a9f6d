import { readFileSync } from "node:fs";
import ELK from "elkjs/lib/elk.bundled.js";
import { describe, expect, it } from "vitest";
import { applyEdit, addNode, connect } from "./edit";
import {
  canvasNodeIds,
  edgeLabels,
  fromElkResult,
  NODE_SIZE,
  placeNewNode,
  placeNewNodes,
  shiftRoutes,
  sizeOf,
  toElkGraph,
  type RoutedLayout,
  type XY,
} from "./layout";
import { loopSpec } from "./loopSpec.testdata";
import { parseSpec, type GraphModel } from "./model";

const text = readFileSync(new URL("../../../specs/refund-approval.yaml", import.meta.url), "utf8");
const model = (t: string) => parseSpec(t).model!;

describe("layout", () => {
  it("builds an elk graph elk can lay out (START and END included)", async () => {
    const m = model(text);
    const graph = toElkGraph(m);
    expect(graph.children!.map((c) => c.id)).toEqual(canvasNodeIds(m));
    const result = await new ELK().layout(graph);
    const ys = Object.fromEntries(result.children!.map((c) => [c.id, c.y!]));
    // Top to bottom: START above assess above the approval above END.
    expect(ys.START).toBeLessThan(ys.assess);
    expect(ys.assess).toBeLessThan(ys.approve);
    expect(ys.approve).toBeLessThan(ys.END);
  });

  it("places only new nodes, below their predecessor, without overlaps", () => {
    const positions = {
      START: { x: 0, y: 0 },
      assess: { x: 0, y: 100 },
      approve: { x: 0, y: 250 },
      refund: { x: 0, y: 400 },
      decline: { x: 300, y: 400 },
      END: { x: 0, y: 550 },
    };
    let t = applyEdit(text, (doc) => addNode(doc, "tool", "extra")).text;
    t = applyEdit(t, (doc) => connect(doc, "assess", "extra")).text;
    const fresh = placeNewNodes(model(t), positions);
    expect(Object.keys(fresh)).toEqual(["extra"]);
    const p = fresh.extra;
    expect(p.y).toBeGreaterThan(positions.assess.y);
    for (const q of Object.values(positions)) {
      const apart = Math.abs(p.x - q.x) >= NODE_SIZE.width || Math.abs(p.y - q.y) >= NODE_SIZE.height;
      expect(apart).toBe(true);
    }
    // Nothing to place: nothing changes.
    expect(placeNewNodes(model(t), { ...positions, ...fresh })).toEqual({});
  });

  it("moves a node dropped on another one to the nearest free spot", () => {
    const positions = { START: { x: 0, y: 0 }, a: { x: 0, y: 100 }, b: { x: 250, y: 100 } };
    const wanted = { x: 10, y: 110 }; // right on top of `a`
    const p = placeNewNode("new", wanted, positions);
    for (const q of Object.values(positions)) {
      const apart = Math.abs(p.x - q.x) >= NODE_SIZE.width + 20 || Math.abs(p.y - q.y) >= NODE_SIZE.height + 20;
      expect(apart).toBe(true);
    }
    expect(Math.hypot(p.x - wanted.x, p.y - wanted.y)).toBeLessThan(200);
    expect(placeNewNode("new", { x: 600, y: 600 }, positions)).toEqual({ x: 600, y: 600 });
  });
});

const spec = (name: string) => readFileSync(new URL(`../../../specs/${name}.yaml`, import.meta.url), "utf8");
const laidOut = async (m: GraphModel): Promise<RoutedLayout> => fromElkResult(await new ELK().layout(toElkGraph(m)));

interface Box {
  l: number;
  t: number;
  r: number;
  b: number;
}
const boxOf = (id: string, p: XY): Box => ({ l: p.x, t: p.y, r: p.x + sizeOf(id).width, b: p.y + sizeOf(id).height });
const intersects = (a: Box, b: Box) => a.l < b.r && b.l < a.r && a.t < b.b && b.t < a.b;
/** Whether the axis-parallel segment a-b passes through the inside of `box`. */
const crosses = (a: XY, b: XY, box: Box) =>
  Math.max(a.x, b.x) > box.l && Math.min(a.x, b.x) < box.r && Math.max(a.y, b.y) > box.t && Math.min(a.y, b.y) < box.b;

/** What a reader of the canvas would object to: overlapping cards, edges or labels through cards. */
function problems(m: GraphModel, laid: RoutedLayout): string[] {
  const out: string[] = [];
  const boxes = Object.entries(laid.positions).map(([id, p]) => [id, boxOf(id, p)] as const);
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) if (intersects(boxes[i][1], boxes[j][1])) out.push(`${boxes[i][0]} overlaps ${boxes[j][0]}`);
  for (const edge of m.edges) {
    const route = laid.routes[edge.id];
    if (!route) {
      out.push(`${edge.id} has no route`);
      continue;
    }
    for (const [id, box] of boxes) {
      if (id === edge.source || id === edge.target) continue;
      if (route.points.some((p, i) => i > 0 && crosses(route.points[i - 1], p, box))) out.push(`${edge.id} runs through ${id}`);
      const l = route.label;
      if (l && intersects({ l: l.x, t: l.y, r: l.x + l.width, b: l.y + l.height }, box)) out.push(`${edge.id}'s label covers ${id}`);
    }
  }
  return out;
}

describe("elk layout and routes", () => {
  it("asks elk for START first, END last, depth-first cycle breaking and orthogonal routes between the handles", () => {
    const graph = toElkGraph(model(spec("planner-team")));
    expect(graph.layoutOptions?.["elk.edgeRouting"]).toBe("ORTHOGONAL");
    expect(graph.layoutOptions?.["elk.layered.cycleBreaking.strategy"]).toBe("DEPTH_FIRST");
    const start = graph.children!.find((c) => c.id === "START")!;
    const end = graph.children!.find((c) => c.id === "END")!;
    expect(start.layoutOptions?.["elk.layered.layering.layerConstraint"]).toBe("FIRST_SEPARATE");
    expect(end.layoutOptions?.["elk.layered.layering.layerConstraint"]).toBe("LAST_SEPARATE");
    const planner = graph.children!.find((c) => c.id === "planner")!;
    expect(planner.ports).toEqual([
      expect.objectContaining({ id: "planner:in", x: NODE_SIZE.width / 2, y: 0 }),
      expect.objectContaining({ id: "planner:out", x: NODE_SIZE.width / 2, y: NODE_SIZE.height }),
    ]);
    expect(graph.edges!.find((e) => e.id === "e3:route:revise")).toMatchObject({ sources: ["reviewer:out"], targets: ["executor:in"] });
  });

  it("lays planner-team out top to bottom with its revise loop drawn back up, around the cards", async () => {
    const m = model(spec("planner-team"));
    const laid = await laidOut(m);
    const y = (id: string) => laid.positions[id].y;
    expect(y("START")).toBeLessThan(y("planner"));
    expect(y("planner")).toBeLessThan(y("executor"));
    // The reviewer is below the executor, not beside the planner.
    expect(y("executor")).toBeLessThan(y("reviewer"));
    expect(y("reviewer")).toBeLessThan(y("END"));
    expect(problems(m, laid)).toEqual([]);
    const back = laid.routes["e3:route:revise"].points;
    expect(back[back.length - 1].y).toBeLessThan(back[0].y); // ends above where it starts
  });

  it.each(["refund-approval", "research-team", "support-subgraph", "mcp-tools", "summarize", "a2a-expense-agent"])(
    "lays %s out with no overlaps and no edge or label through a card",
    async (name) => {
      const m = model(spec(name));
      const laid = await laidOut(m);
      expect(problems(m, laid)).toEqual([]);
      for (const id of canvasNodeIds(m).filter((id) => id !== "START")) expect(laid.positions.START.y).toBeLessThan(laid.positions[id].y);
    },
  );

  it("puts START above and END below every node of a 30-node graph with a loop", async () => {
    const m = model(loopSpec(30));
    const laid = await laidOut(m);
    const nodes = m.nodes.map((n) => boxOf(n.id, laid.positions[n.id]));
    expect(boxOf("START", laid.positions.START).b).toBeLessThanOrEqual(Math.min(...nodes.map((b) => b.t)));
    expect(boxOf("END", laid.positions.END).t).toBeGreaterThanOrEqual(Math.max(...nodes.map((b) => b.b)));
    expect(laid.positions.n0.y).toBeLessThan(laid.positions.n29.y);
    expect(problems(m, laid)).toEqual([]);
  });

  it("gives grouped labels to the first edge of a source-target pair", () => {
    const m = model(spec("planner-team"));
    expect(edgeLabels(m)).toEqual({ "e3:route:approve": "approve", "e3:route:revise": "revise" });
  });

  it("moves routes with the stored layout they belong to", () => {
    const routes = {
      e0: {
        points: [
          { x: 1, y: 2 },
          { x: 1, y: 20 },
        ],
        label: { x: 5, y: 6, width: 10, height: 4 },
      },
    };
    expect(shiftRoutes(routes, { x: 10, y: -2 })).toEqual({
      e0: {
        points: [
          { x: 11, y: 0 },
          { x: 11, y: 18 },
        ],
        label: { x: 15, y: 4, width: 10, height: 4 },
      },
    });
  });
});

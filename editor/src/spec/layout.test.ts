import { readFileSync } from "node:fs";
import ELK from "elkjs/lib/elk.bundled.js";
import { describe, expect, it } from "vitest";
import { applyEdit, addNode, connect } from "./edit";
import { canvasNodeIds, NODE_SIZE, placeNewNode, placeNewNodes, toElkGraph } from "./layout";
import { parseSpec } from "./model";

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
    const positions = { START: { x: 0, y: 0 }, assess: { x: 0, y: 100 }, approve: { x: 0, y: 250 }, refund: { x: 0, y: 400 }, decline: { x: 300, y: 400 }, END: { x: 0, y: 550 } };
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

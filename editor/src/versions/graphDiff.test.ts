import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { addNode, applyEdit, connect, disconnect, removeNodes, setField } from "../spec/edit";
import { parseSpec } from "../spec/model";
import { edgeMarks, graphDiff, nodeMarks } from "./graphDiff";

const TEXT = readFileSync(new URL("../../../specs/refund-approval.yaml", import.meta.url), "utf8");
const model = (t: string) => parseSpec(t).model!;

describe("graph diff of two versions", () => {
  it("finds nothing between a version and itself", () => {
    const d = graphDiff(model(TEXT), model(TEXT));
    expect(d.nodes).toEqual({ added: [], removed: [], changed: {} });
    expect(d.edges).toEqual({ added: [], removed: [], changed: [] });
  });

  it("marks added, removed and changed nodes, and says what changed in a node", () => {
    let t = applyEdit(TEXT, (doc) => addNode(doc, "python", "audit")).text;
    t = applyEdit(t, (doc) => setField(doc, "approve", ["expires_in"], "2h")).text;
    t = applyEdit(t, (doc) => setField(doc, "approve", ["on_expire"], undefined)).text;
    t = applyEdit(t, (doc) => removeNodes(doc, ["decline"])).text;
    const d = graphDiff(model(TEXT), model(t));
    expect(d.nodes.added).toEqual(["audit"]);
    expect(d.nodes.removed).toEqual(["decline"]);
    expect(d.nodes.changed).toEqual({
      approve: [
        { field: "expires_in", before: "24h", after: "2h" },
        { field: "on_expire", before: "reject", after: undefined },
      ],
    });
    expect(nodeMarks(d)).toEqual({ audit: "added", decline: "removed", approve: "changed" });
  });

  it("marks added, removed and changed edges", () => {
    const before = model(TEXT);
    let t = applyEdit(TEXT, (doc) => connect(doc, "decline", "refund")).text; // added
    const byId = (id: string) => model(t).edges.find((e) => e.id === id)!;
    const refundEnd = model(t).edges.find((e) => e.source === "refund" && e.target === "END")!;
    t = applyEdit(t, (doc) => disconnect(doc, [byId(refundEnd.id)])).text; // removed
    // The approval's route: the label `reject` now goes to refund instead of decline (changed ends),
    // and the switch's condition is rewritten (same ends, another condition).
    t = t.replace("reject: decline", "reject: refund").replace("state.assessment.risk == 'high'", "state.assessment.risk != 'low'");
    const d = graphDiff(before, model(t));
    const show = (edges: { source: string; target: string; label: string | null }[]) => edges.map((e) => `${e.source}>${e.target}:${e.label ?? ""}`).sort();
    expect(show(d.edges.added)).toEqual(["approve>refund:reject", "decline>refund:"]);
    expect(show(d.edges.removed)).toEqual(["approve>decline:reject", "refund>END:"]);
    expect(d.edges.changed.map((c) => [c.before.label, c.after.label])).toEqual([["state.assessment.risk == 'high'", "state.assessment.risk != 'low'"]]);
    const marks = edgeMarks(d);
    expect(Object.values(marks).sort()).toEqual(["added", "added", "changed"]);
  });
});

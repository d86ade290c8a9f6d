import { describe, expect, it } from "vitest";
import { reduce } from "./runStore";

type Snap = Parameters<typeof reduce>[0];

function run(events: [string, unknown][]): Snap {
  let state: Snap = {
    runId: null,
    phase: "starting",
    error: null,
    nodeStatus: { assess: "pending", approve: "pending", refund: "pending" },
    tokens: {},
    steps: [],
    approvals: {},
    log: [],
  };
  for (const [event, data] of events) state = { ...state, ...reduce(state, { event, data, id: null }) };
  return state;
}

describe("run reducer", () => {
  it("tracks node status from tasks events and parks on an approval interrupt", () => {
    const state = run([
      ["metadata", { run_id: "r1" }],
      ["tasks", { id: "t1", name: "assess", input: {} }],
      ["tasks", { id: "t1", name: "assess", result: {}, error: null, interrupts: [] }],
      ["values", { amount: 180 }],
      ["tasks", { id: "t2", name: "approve", input: {} }],
      [
        "updates",
        {
          __interrupt__: [
            {
              id: "i1",
              value: { kind: "approval", node: "approve", action: "issue_refund", arguments: { amount: 180 }, reason: "high", expires_at: null },
            },
          ],
        },
      ],
      ["end", null],
    ]);
    expect(state.runId).toBe("r1");
    expect(state.nodeStatus).toEqual({ assess: "done", approve: "waiting", refund: "pending" });
    expect(state.approvals.approve).toMatchObject({ interruptId: "i1", action: "issue_refund", arguments: { amount: 180 } });
    expect(state.phase).toBe("waiting");
    expect(state.steps).toEqual([{ step: 1, after: ["assess"], values: { amount: 180 } }]);
  });

  it("streams tokens into the node named by the message metadata and fails running nodes on error", () => {
    const state = run([
      ["tasks", { id: "t1", name: "assess", input: {} }],
      ["messages", [{ content: "Hel" }, { langgraph_node: "assess" }]],
      ["messages", [{ content: [{ type: "text", text: "lo" }] }, { langgraph_node: "assess" }]],
      ["error", { error: "NodeError", message: "boom" }],
    ]);
    expect(state.tokens.assess).toBe("Hello");
    expect(state.nodeStatus.assess).toBe("failed");
    expect(state.phase).toBe("error");
    expect(state.error).toBe("NodeError: boom");
  });
});

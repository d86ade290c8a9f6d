import { describe, expect, it } from "vitest";
import type { RolloutInfo } from "../api/client";
import { roleLabel, rolloutSummary, runsLabel, versionRole } from "./rollout";

const CANARY: RolloutInfo = { graph: "g", stable: "1.0.0", canary: "1.1.0", share: 25, updated_at: "2026-12-03T12:00:00Z" };
const STABLE_ONLY: RolloutInfo = { ...CANARY, canary: null, share: 0 };

describe("rollout labels", () => {
  it("names each version's part and its share of new threads", () => {
    expect(versionRole(CANARY, "1.1.0")).toBe("canary");
    expect(versionRole(CANARY, "1.0.0")).toBe("stable");
    expect(versionRole(CANARY, "0.9.0")).toBeNull();
    expect(roleLabel(CANARY, "1.1.0")).toBe("canary · 25%");
    expect(roleLabel(CANARY, "1.0.0")).toBe("stable · 75%");
    expect(roleLabel(STABLE_ONLY, "1.0.0")).toBe("stable");
    expect(roleLabel(null, "1.0.0")).toBeNull();
  });

  it("says where new threads go", () => {
    expect(rolloutSummary(CANARY)).toBe("25% of new threads start on the canary 1.1.0, 75% on the stable 1.0.0.");
    expect(rolloutSummary(STABLE_ONLY)).toBe("New threads start on 1.0.0 (stable; no canary).");
    expect(rolloutSummary({ ...CANARY, stable: null, canary: null, share: 0 })).toBe("No rollout: new threads start on the newest version.");
  });

  it("counts runs and threads", () => {
    expect(runsLabel(undefined)).toBe("no runs");
    expect(runsLabel({ runs: 1, threads: 1 })).toBe("1 run on 1 thread");
    expect(runsLabel({ runs: 5, threads: 3 })).toBe("5 runs on 3 threads");
  });
});

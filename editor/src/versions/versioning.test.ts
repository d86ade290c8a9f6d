import { describe, expect, it } from "vitest";
import { bumpPatch, nextFreeVersion, specVersion, withVersion } from "./versioning";

const SPEC = `# header comment
apiVersion: plait/v1
kind: Graph
metadata:
  name: demo
  version: "1.0.9"   # bump me
  description: >-
    folded text
spec: {nodes: {a: {kind: python, function: "m:f"}}}
`;

describe("versioning", () => {
  it("bumps the patch number", () => {
    expect(bumpPatch("1.0.9")).toBe("1.0.10");
    expect(bumpPatch("2.3.4-rc.1")).toBe("2.3.5");
  });

  it("skips versions already stored", () => {
    expect(nextFreeVersion("1.0.0", ["1.0.0", "1.0.1", "1.0.2"])).toBe("1.0.3");
  });

  it("reads and sets metadata.version without touching the rest", () => {
    expect(specVersion(SPEC)).toBe("1.0.9");
    const next = withVersion(SPEC, "1.0.10");
    expect(specVersion(next)).toBe("1.0.10");
    expect(next).toBe(SPEC.replace('"1.0.9"', '"1.0.10"'));
  });
});

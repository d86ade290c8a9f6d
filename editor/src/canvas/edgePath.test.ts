import { describe, expect, it } from "vitest";
import { attachRoute, labelPoint, roundedPath, routeMeets } from "./edgePath";

describe("edge paths", () => {
  it("joins points with straight segments and rounds each corner", () => {
    const path = roundedPath([
      { x: 0, y: 0 },
      { x: 0, y: 40 },
      { x: 30, y: 40 },
    ]);
    expect(path).toBe("M 0 0 L 0 32 Q 0 40 8 40 L 30 40");
  });

  it("rounds less where a segment is too short, and drops repeated points", () => {
    const path = roundedPath([
      { x: 0, y: 0 },
      { x: 0, y: 0 },
      { x: 0, y: 6 },
      { x: 20, y: 6 },
    ]);
    expect(path).toBe("M 0 0 L 0 3 Q 0 6 3 6 L 20 6");
  });

  it("draws a route only while it meets both handles", () => {
    const route = {
      points: [
        { x: 100, y: 50 },
        { x: 100, y: 120 },
      ],
    };
    expect(routeMeets(route, { x: 101, y: 53 }, { x: 100, y: 117 })).toBe(true);
    // The target was dragged away: the route no longer meets it.
    expect(routeMeets(route, { x: 100, y: 53 }, { x: 160, y: 117 })).toBe(false);
    expect(routeMeets({ points: [{ x: 0, y: 0 }] }, { x: 0, y: 0 }, { x: 0, y: 0 })).toBe(false);
  });

  it("moves a route's ends onto the handles, keeping the first and last segments vertical", () => {
    const points = [
      { x: 100, y: 50 },
      { x: 100, y: 70 },
      { x: 200, y: 70 },
      { x: 200, y: 120 },
    ];
    expect(attachRoute(points, { x: 101, y: 53 }, { x: 199, y: 117 })).toEqual([
      { x: 101, y: 53 },
      { x: 101, y: 70 },
      { x: 199, y: 70 },
      { x: 199, y: 117 },
    ]);
  });
});

describe("label points", () => {
  it("puts a label in the middle of the route's longest segment", () => {
    expect(
      labelPoint([
        { x: 0, y: 0 },
        { x: 0, y: 20 },
        { x: 300, y: 20 },
        { x: 300, y: 40 },
      ]),
    ).toEqual({ x: 150, y: 20 });
  });
});

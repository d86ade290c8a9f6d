import { describe, expect, it } from "vitest";
import { SseParser } from "./sse";

describe("SseParser", () => {
  it("parses events split across chunks, with ids, JSON data and comments", () => {
    const parser = new SseParser();
    expect(parser.push(': keep-alive\n\nid: 1\nevent: metadata\ndata: {"run_id"')).toEqual([]);
    const messages = parser.push(': "r1"}\n\nid: 2\r\nevent: end\r\ndata: null\r\n\r\n');
    expect(messages).toEqual([
      { event: "metadata", data: { run_id: "r1" }, id: "1" },
      { event: "end", data: null, id: "2" },
    ]);
    expect(parser.lastEventId).toBe("2");
  });

  it("joins multi-line data and keeps non-JSON text", () => {
    const parser = new SseParser();
    expect(parser.push("data: a\ndata: b\n\n")).toEqual([{ event: "message", data: "a\nb", id: null }]);
  });
});

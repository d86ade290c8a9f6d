/** Hash routes: `#/` graphs, `#/graphs/<name>/<version>` editor, `#/approvals`. */
import { useSyncExternalStore } from "react";

export type Route =
  | { page: "graphs" }
  | { page: "editor"; name: string; version: string }
  | { page: "approvals" }
  | { page: "missing"; hash: string };

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, "") || "/";
  if (path === "/" || path === "") return { page: "graphs" };
  if (path === "/approvals") return { page: "approvals" };
  const m = /^\/graphs\/([^/]+)\/([^/]+)$/.exec(path);
  if (m) return { page: "editor", name: decodeURIComponent(m[1]), version: decodeURIComponent(m[2]) };
  return { page: "missing", hash };
}

export const editorHash = (name: string, version: string) => `#/graphs/${encodeURIComponent(name)}/${encodeURIComponent(version)}`;

const subscribe = (notify: () => void) => {
  window.addEventListener("hashchange", notify);
  return () => window.removeEventListener("hashchange", notify);
};

/** The current hash (re-renders on change). */
export function useHash(): string {
  return useSyncExternalStore(subscribe, () => window.location.hash);
}

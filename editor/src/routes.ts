/**
 * Hash routes: `#/` (or `#/graphs`) graphs, `#/graphs/<name>/<version>[?thread=<id>]` editor
 * (with the run on that thread open), `#/approvals` the approvals inbox.
 */
import { useSyncExternalStore } from "react";

export type Route =
  { page: "graphs" } | { page: "editor"; name: string; version: string; thread: string | null } | { page: "approvals" } | { page: "missing"; hash: string };

export function parseRoute(hash: string): Route {
  const [path, query = ""] = (hash.replace(/^#/, "") || "/").split("?", 2);
  if (path === "/" || path === "" || path === "/graphs" || path === "/graphs/") return { page: "graphs" };
  if (path === "/approvals") return { page: "approvals" };
  const m = /^\/graphs\/([^/]+)\/([^/]+)$/.exec(path);
  if (m)
    return {
      page: "editor",
      name: decodeURIComponent(m[1]),
      version: decodeURIComponent(m[2]),
      thread: new URLSearchParams(query).get("thread") || null,
    };
  return { page: "missing", hash };
}

/** Which page `route` is (the run a thread names is part of its page, not another page). */
export function pageKey(route: Route): string {
  if (route.page === "editor") return `editor ${route.name}@${route.version}`;
  return route.page === "missing" ? `missing ${route.hash}` : route.page;
}

/** The editor of `name@version`; with `thread`, the run on that thread opens in it (a shareable link). */
export function editorHash(name: string, version: string, thread?: string | null): string {
  const base = `#/graphs/${encodeURIComponent(name)}/${encodeURIComponent(version)}`;
  return thread ? `${base}?thread=${encodeURIComponent(thread)}` : base;
}

/**
 * Name the run on screen in the URL (null: none), without a new history entry
 * and without a `hashchange` (nothing reopens). Only while the editor of
 * `name@version` is the page (when given), so a late call cannot rewrite another page's URL.
 */
export function setThreadInUrl(threadId: string | null, name?: string, version?: string): void {
  const route = parseRoute(window.location.hash);
  if (route.page !== "editor" || route.thread === threadId) return;
  if ((name !== undefined && route.name !== name) || (version !== undefined && route.version !== version)) return;
  const url = new URL(window.location.href);
  url.hash = editorHash(route.name, route.version, threadId);
  window.history.replaceState(window.history.state, "", url);
}

const subscribe = (notify: () => void) => {
  window.addEventListener("hashchange", notify);
  return () => window.removeEventListener("hashchange", notify);
};

/** The current hash (re-renders on change). */
export function useHash(): string {
  return useSyncExternalStore(subscribe, () => window.location.hash);
}

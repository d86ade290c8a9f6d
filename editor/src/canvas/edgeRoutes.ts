/**
 * The edge routes of the last elk layout of a graph (by edge id). Not saved:
 * a graph opened with stored positions gets them again from elk (spec/layout.ts
 * `routesFor`), and a route is drawn only while it meets its edge's handles.
 * Kept per graph (`name@version`) so the canvas, remounted on the same graph,
 * draws them at once, and never draws another graph's.
 */
import { create } from "zustand";
import type { EdgeRoute } from "../spec/layout";

interface EdgeRoutesState {
  graph: string | null;
  routes: Record<string, EdgeRoute>;
  setRoutes: (graph: string, routes: Record<string, EdgeRoute>) => void;
}

export const useEdgeRoutes = create<EdgeRoutesState>()((set) => ({
  graph: null,
  routes: {},
  setRoutes: (graph, routes) => set({ graph, routes }),
}));

const NONE: Record<string, EdgeRoute> = {};

/** The routes of `graph` (none while the store holds another graph's). */
export const useRoutesOf = (graph: string): Record<string, EdgeRoute> => useEdgeRoutes((s) => (s.graph === graph ? s.routes : NONE));

/**
 * The edge routes of the last elk layout (by edge id). Not saved: a graph
 * opened with stored positions gets them again from elk (spec/layout.ts
 * `routesFor`), and a route is drawn only while it meets its edge's handles.
 */
import { create } from "zustand";
import type { EdgeRoute } from "../spec/layout";

interface EdgeRoutesState {
  routes: Record<string, EdgeRoute>;
  setRoutes: (routes: Record<string, EdgeRoute>) => void;
}

export const useEdgeRoutes = create<EdgeRoutesState>()((set) => ({
  routes: {},
  setRoutes: (routes) => set({ routes }),
}));

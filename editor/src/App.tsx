/**
 * The app shell: header navigation (with the count of pending approvals and
 * the outcome of the last decision made here) and hash routes — `#/` graphs
 * list, `#/graphs/<name>/<version>[?thread=<id>]` editor, `#/approvals` the inbox.
 */
import { ApiKeyControl, useApiKeyState } from "./apikey/ApiKeyControl";
import { ApprovalsPage } from "./approvals/ApprovalsPage";
import { LatestDecision } from "./approvals/DecisionNote";
import { PendingBadge } from "./approvals/PendingBadge";
import { EditorPage } from "./graphs/EditorPage";
import { GraphsPage } from "./graphs/GraphsPage";
import { pageKey, parseRoute, useHash } from "./routes";

export function App() {
  const route = parseRoute(useHash());
  // A key changed by hand remounts the lists so they load with it; the editor keeps its unsaved edits.
  const { generation } = useApiKeyState();
  return (
    <>
      <header className="plait-header" data-testid="app-header">
        <a className="plait-logo" href="#/">
          Plait
        </a>
        <a href="#/" data-testid="nav-graphs" className={route.page === "graphs" ? "active" : ""}>
          Graphs
        </a>
        <a href="#/approvals" data-testid="nav-approvals" className={route.page === "approvals" ? "active" : ""}>
          Approvals
          <PendingBadge />
        </a>
        <span className="plait-spacer" />
        {route.page !== "approvals" && <LatestDecision page={pageKey(route)} />}
        <ApiKeyControl />
      </header>
      <main className="plait-main">
        {route.page === "graphs" && <GraphsPage key={generation} />}
        {route.page === "editor" && <EditorPage key={`${route.name}`} name={route.name} version={route.version} />}
        {route.page === "approvals" && <ApprovalsPage key={generation} />}
        {route.page === "missing" && (
          <p className="plait-page">
            Nothing at {route.hash}. <a href="#/">Graphs</a>
          </p>
        )}
      </main>
    </>
  );
}

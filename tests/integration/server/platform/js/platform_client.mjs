// A client written against @langchain/langgraph-sdk 1.15, unchanged, pointed at a
// Plait server with API keys: `node platform_client.mjs <url> <key> <other key>`
// uses the store and crons as two tenants and prints one JSON object with what
// each call returned; tests/integration/server/platform/test_js_sdk.py checks it.
import { Client } from "@langchain/langgraph-sdk";

const [url, key, otherKey] = process.argv.slice(2);
if (!otherKey) {
  console.error("usage: node platform_client.mjs <server url> <api key> <other tenant's key>");
  process.exit(2);
}
const mine = new Client({ apiUrl: url, apiKey: key });
const theirs = new Client({ apiUrl: url, apiKey: otherKey });
const results = {};

// Store: put, get, search, list namespaces, delete; the other tenant sees none of it.
await mine.store.putItem(["users", "ada", "prefs"], "theme", { color: "teal" });
await mine.store.putItem(["users", "bob", "prefs"], "theme", { color: "red" });
results.item = await mine.store.getItem(["users", "ada", "prefs"], "theme");
results.red = await mine.store.searchItems(["users"], { filter: { color: "red" } });
results.namespaces = await mine.store.listNamespaces({ prefix: ["users"], maxDepth: 2 });
results.theirItem = await theirs.store.getItem(["users", "ada", "prefs"], "theme");
results.theirSearch = await theirs.store.searchItems(["users"]);
await mine.store.deleteItem(["users", "ada", "prefs"], "theme");
results.deleted = await mine.store.getItem(["users", "ada", "prefs"], "theme");

// Crons: create (stateless and on a thread), search, count, update, delete.
const thread = await mine.threads.create();
const daily = await mine.crons.create("store-notes", {
  schedule: "0 9 * * *",
  input: { user: "ada", note: "daily" },
  metadata: { team: "ops" },
});
const onThread = await mine.crons.createForThread(thread.thread_id, "store-notes", {
  schedule: "30 8 * * 1-5",
  input: { user: "ada", note: "weekdays" },
});
results.crons = { daily, onThread, threadId: thread.thread_id };
results.found = await mine.crons.search({ metadata: { team: "ops" } });
results.count = await mine.crons.count({ threadId: thread.thread_id });
results.updated = await mine.crons.update(daily.cron_id, { schedule: "15 10 * * *", enabled: false });
results.theirCount = await theirs.crons.count();
await mine.crons.delete(daily.cron_id);
results.left = await mine.crons.search();

console.log(JSON.stringify(results));

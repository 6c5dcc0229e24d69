// Checks every result the conformance suite wrote against the not-applicable
// list, the extension scenarios (tasks) included: the suite's own
// --expected-failures leaves extensions out, so a failing or newly passing
// tasks check would otherwise go unseen.
//
// Usage: node baseline.mjs RESULTS_DIR LIST.yml   (exit 1 on any mismatch)
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";

const [dir, listFile] = process.argv.slice(2);
const listed = new Set(parse(readFileSync(listFile, "utf8")).server ?? []);
const seen = new Map();
for (const entry of readdirSync(dir)) {
  const file = join(dir, entry, "checks.json");
  if (!existsSync(file)) continue;
  // RESULTS_DIR/server-SCENARIO-2026-11-26T05-00-44-499Z/checks.json
  const scenario = entry.replace(/^server-/, "").replace(/-\d{4}-\d{2}-\d{2}T[\dZ-]+$/, "");
  for (const check of JSON.parse(readFileSync(file, "utf8"))) {
    const key = `${scenario}:${check.id}`;
    // A check id may repeat in a scenario; its worst status counts.
    const failed = check.status === "FAILURE" || check.status === "WARNING";
    if (failed || !seen.has(key)) seen.set(key, { status: check.status, message: check.errorMessage });
  }
}
const problems = [];
for (const [key, { status, message }] of seen) {
  const failed = status === "FAILURE" || status === "WARNING";
  if (failed && !listed.has(key)) problems.push(`failed, not listed: ${key}: ${message ?? status}`);
  if (status === "SUCCESS" && listed.has(key)) problems.push(`listed, but passes now (remove it): ${key}`);
}
for (const key of listed) if (!seen.has(key)) console.log(`note: listed check not run: ${key}`);
const passed = [...seen.values()].filter((c) => c.status === "SUCCESS").length;
console.log(`baseline: ${seen.size} checks, ${passed} passed, ${listed.size} listed not applicable`);
for (const problem of problems) console.error(`baseline: ${problem}`);
process.exit(problems.length ? 1 : 0);

// The scenario both TypeScript clients run (scenario.json): each step's
// arguments filled from earlier results, the call made through the SDK's own
// callTool (which validates structuredContent against the tool's outputSchema
// and throws when it does not match), and the outcome checked.
import { readFileSync } from "node:fs";

const here = new URL(".", import.meta.url).pathname;
export const scenario = JSON.parse(readFileSync(`${here}scenario.json`, "utf8"));

function lookup(saved, path) {
  let value = saved;
  for (const key of path.split(".")) {
    if (value === undefined || value === null) return undefined;
    value = value[key];
  }
  return value;
}

export function fill(value, saved) {
  if (typeof value === "string") {
    return value.replace(/\{\{([^}]+)\}\}/g, (_, path) => {
      const found = lookup(saved, path);
      if (found === undefined) throw new Error(`no value for {{${path}}}`);
      return String(found);
    });
  }
  if (Array.isArray(value)) return value.map((v) => fill(v, saved));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, saved)]));
  }
  return value;
}

function mentionsNull(schema) {
  const stack = [schema];
  while (stack.length) {
    const v = stack.pop();
    if (v === "null") return true;
    if (v && typeof v === "object") stack.push(...Object.values(v));
  }
  return false;
}

/// Runs the scenario on a connected client; throws with the tool, the path and
/// the SDK's message on the first step that fails.
export async function run(client, label, vars) {
  const { tools } = await client.listTools();
  const names = new Set(tools.map((t) => t.name));
  const covered = new Set(scenario.steps.map((s) => s.tool));
  for (const tool of tools) {
    if (!covered.has(tool.name)) throw new Error(`${label}: tool ${tool.name} is not in scenario.json`);
    if (!tool.outputSchema) throw new Error(`${label}: tool ${tool.name} has no outputSchema`);
    if (mentionsNull(tool.outputSchema) || mentionsNull(tool.inputSchema)) {
      throw new Error(`${label}: tool ${tool.name}'s schema allows null`);
    }
  }
  const saved = { ...vars };
  let passed = 0;
  for (const [n, step] of scenario.steps.entries()) {
    if (!names.has(step.tool)) throw new Error(`${label}: the server lists no ${step.tool}`);
    const where = `${label} step ${n} ${step.tool} (${step.expect})`;
    const args = fill(step.args, saved);
    let result;
    try {
      result = await client.callTool({ name: step.tool, arguments: args }, undefined, { timeout: 60000 });
    } catch (err) {
      throw new Error(`${where}: the SDK rejected the result: ${err.message}`);
    }
    const text = (result.content ?? []).map((c) => c.text ?? "").join(" ");
    if (step.expect === "ok" && result.isError) throw new Error(`${where}: failed: ${text}`);
    if (step.expect === "error" && !result.isError) {
      throw new Error(`${where}: succeeded: ${JSON.stringify(result.structuredContent)}`);
    }
    if (step.expect === "ok") {
      const out = result.structuredContent;
      if (!out) throw new Error(`${where}: no structuredContent`);
      for (const [key, want] of Object.entries(fill(step.check ?? {}, saved))) {
        if (JSON.stringify(out[key]) !== JSON.stringify(want)) {
          throw new Error(`${where}: ${key} is ${JSON.stringify(out[key])}, expected ${JSON.stringify(want)}`);
        }
      }
      for (const key of step.absent ?? []) {
        if (key in out) throw new Error(`${where}: ${key} should be left out: ${JSON.stringify(out)}`);
      }
      if (step.save) saved[step.save] = out;
    } else if (!text.trim()) {
      throw new Error(`${where}: an error result without a message`);
    }
    passed += 1;
  }
  return passed;
}

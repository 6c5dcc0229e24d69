// Drives fugue-mcp through an official TypeScript SDK client over stdio or
// Streamable HTTP and runs scenario.json.
//   node ts-client.mjs SDK ERA TRANSPORT TARGET...
//   SDK: v1 (@modelcontextprotocol/sdk) | v2 (@modelcontextprotocol/client)
//   ERA: legacy (2025-11-25) | 2026-07-28 (v2 only)
//   TRANSPORT: stdio COMMAND ARG... | http URL
// Env: FAKE_AGENT (the stand-in agent), SESSION (a fresh session name), REPO (a git repository).
// Prints "PASS <label>: N steps" or the failing step, and exits non-zero on failure.
import { run } from "./scenario.mjs";

const [sdk, era, transport, ...target] = process.argv.slice(2);
const label = `ts-${sdk} ${era} ${transport}`;
const vars = { FAKE_AGENT: process.env.FAKE_AGENT, SESSION: process.env.SESSION, REPO: process.env.REPO };

async function connect() {
  const info = { name: `fugue-test-${sdk}`, version: "1.0.0" };
  if (sdk === "v1") {
    if (era !== "legacy") throw new Error("@modelcontextprotocol/sdk 1.x speaks only the 2025-11-25 era");
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const client = new Client(info);
    let t;
    if (transport === "stdio") {
      const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
      t = new StdioClientTransport({ command: target[0], args: target.slice(1), env: process.env, stderr: "inherit" });
    } else {
      const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
      t = new StreamableHTTPClientTransport(new URL(target[0]));
    }
    await client.connect(t);
    return client;
  }
  const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
  const versionNegotiation = era === "legacy" ? "legacy" : { pin: era };
  const client = new Client(info, { versionNegotiation });
  let t;
  if (transport === "stdio") {
    const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
    t = new StdioClientTransport({ command: target[0], args: target.slice(1), env: process.env, stderr: "inherit" });
  } else {
    t = new StreamableHTTPClientTransport(new URL(target[0]));
  }
  await client.connect(t);
  return client;
}

try {
  const client = await connect();
  const passed = await run(client, label, vars);
  await client.close();
  console.log(`PASS ${label}: ${passed} steps`);
  process.exit(0);
} catch (err) {
  console.log(`FAIL ${err.message}`);
  process.exit(1);
}

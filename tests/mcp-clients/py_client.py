"""Drives fugue-mcp through the official MCP Python SDK (`mcp`, pinned in
requirements.txt) over stdio or Streamable HTTP and runs scenario.json.

    python py_client.py ERA TRANSPORT TARGET...
    ERA: legacy (2025-11-25) | 2026-07-28
    TRANSPORT: stdio COMMAND ARG... | http URL

The SDK's call_tool validates structuredContent against the tool's outputSchema
and raises when it does not match. Env: FAKE_AGENT, SESSION, REPO. Prints
"PASS <label>: N steps" or the failing step, and exits non-zero on failure.
"""

import json
import os
import pathlib
import re
import sys

import anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

HERE = pathlib.Path(__file__).resolve().parent
SCENARIO = json.loads((HERE / "scenario.json").read_text())


def lookup(saved, path):
    value = saved
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            raise KeyError(f"no value for {{{{{path}}}}}")
        value = value[key]
    return value


def fill(value, saved):
    if isinstance(value, str):
        return re.sub(r"\{\{([^}]+)\}\}", lambda m: str(lookup(saved, m.group(1))), value)
    if isinstance(value, list):
        return [fill(v, saved) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, saved) for k, v in value.items()}
    return value


def mentions_null(schema):
    stack = [schema]
    while stack:
        v = stack.pop()
        if v == "null":
            return True
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


async def run(client, label):
    tools = (await client.list_tools()).tools
    names = {t.name for t in tools}
    covered = {s["tool"] for s in SCENARIO["steps"]}
    for tool in tools:
        if tool.name not in covered:
            raise RuntimeError(f"{label}: tool {tool.name} is not in scenario.json")
        if not tool.output_schema:
            raise RuntimeError(f"{label}: tool {tool.name} has no outputSchema")
        if mentions_null(tool.output_schema) or mentions_null(tool.input_schema):
            raise RuntimeError(f"{label}: tool {tool.name}'s schema allows null")
    saved = {name: os.environ.get(name, "") for name in ("FAKE_AGENT", "SESSION", "REPO")}
    passed = 0
    for n, step in enumerate(SCENARIO["steps"]):
        tool = step["tool"]
        if tool not in names:
            raise RuntimeError(f"{label}: the server lists no {tool}")
        where = f"{label} step {n} {tool} ({step['expect']})"
        args = fill(step["args"], saved)
        try:
            result = await client.call_tool(tool, args, read_timeout_seconds=60)
        except Exception as err:  # the SDK's validation error, or a protocol error
            raise RuntimeError(f"{where}: the SDK rejected the result: {err}") from None
        text = " ".join(getattr(c, "text", "") for c in result.content)
        if step["expect"] == "ok" and result.is_error:
            raise RuntimeError(f"{where}: failed: {text}")
        if step["expect"] == "error" and not result.is_error:
            raise RuntimeError(f"{where}: succeeded: {result.structured_content}")
        if step["expect"] == "ok":
            out = result.structured_content
            if out is None:
                raise RuntimeError(f"{where}: no structuredContent")
            for key, want in fill(step.get("check", {}), saved).items():
                if out.get(key) != want:
                    raise RuntimeError(f"{where}: {key} is {out.get(key)!r}, expected {want!r}")
            for key in step.get("absent", []):
                if key in out:
                    raise RuntimeError(f"{where}: {key} should be left out: {out}")
            if "save" in step:
                saved[step["save"]] = out
        elif not text.strip():
            raise RuntimeError(f"{where}: an error result without a message")
        passed += 1
    return passed


def leaves(err):
    """The messages of the errors inside anyio's task-group wrappers."""
    stack, out = [err], []
    while stack:
        e = stack.pop()
        if isinstance(e, BaseExceptionGroup):
            stack.extend(e.exceptions)
        else:
            out.append(str(e))
    return out


async def main():
    era, transport, *target = sys.argv[1:]
    label = f"python {era} {transport}"
    if transport == "stdio":
        server = StdioServerParameters(command=target[0], args=target[1:], env=dict(os.environ))
    else:
        server = target[0]
    try:
        async with Client(server, mode=era) as client:
            passed = await run(client, label)
    except Exception as err:
        print(f"FAIL {'; '.join(leaves(err))}", flush=True)
        sys.exit(1)
    print(f"PASS {label}: {passed} steps", flush=True)


if __name__ == "__main__":
    anyio.run(main)

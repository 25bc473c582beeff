"""Drives `context-pilot mcp` with the official MCP Python SDK, as an agent would.

Usage: python3 client_test.py BINARY PROJECT_DIR

Run by crates/context-pilot/tests/mcp_client.rs. Exits non-zero with a message on the first
failed expectation. When the callbacks module is registered (`Callback_upsert` is listed),
it also checks that callbacks created over MCP fire on File_write: blocking results inside
the tool result, background results on the next call.
"""

import asyncio
import os
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

BINARY, PROJECT = sys.argv[1], sys.argv[2]


def field(obj, snake, camel):
    """SDK 1.x exposes camelCase attributes, 2.x snake_case."""
    return getattr(obj, snake, None) if hasattr(obj, snake) else getattr(obj, camel, None)


def text_of(result):
    return "\n".join(getattr(c, "text", "") for c in result.content)


def check(cond, message):
    if not cond:
        print(f"FAIL: {message}", file=sys.stderr)
        sys.exit(1)


async def call(session, name, args):
    result = await session.call_tool(name, args)
    return bool(field(result, "is_error", "isError")), text_of(result)


async def main():
    params = StdioServerParameters(
        command=BINARY,
        args=["mcp", "--project", PROJECT, "--worker", "mcp-test"],
        env={**os.environ, "CP_LOG": "debug"},
        cwd=PROJECT,
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            info = field(init, "server_info", "serverInfo")
            check(info.name == "context-pilot", f"server name is {info.name!r}")
            check(info.version, "server has no version")

            tools = {t.name: t for t in (await session.list_tools()).tools}
            for name in ["File_read", "File_edit", "File_write", "File_delete"]:
                check(name in tools, f"{name} not listed: {sorted(tools)}")
            schema = field(tools["File_write"], "input_schema", "inputSchema")
            check(
                sorted(schema.get("required", [])) == ["content", "file_path"],
                f"File_write schema: {schema}",
            )
            print("tools:", ",".join(sorted(tools)))

            # Bad arguments: an MCP tool error with the registry's own message.
            err, text = await call(session, "File_write", {"file_path": "x.txt"})
            check(err, f"missing argument was not an error: {text}")
            check(
                text == "File_write: missing required parameter 'content'",
                f"unexpected error text: {text!r}",
            )
            err, text = await call(session, "File_edit", {"file_path": "missing.txt",
                                                           "old_string": "a", "new_string": "b"})
            check(err and "missing.txt" in text, f"edit of a missing file: {text!r}")
            err, text = await call(session, "No_such_tool", {})
            check(err and "unknown tool 'No_such_tool'" in text, f"unknown tool: {text!r}")

            # A write really writes, and reading it back goes through the same tools.
            err, text = await call(session, "File_write",
                                   {"file_path": "notes/a.txt", "content": "one\ntwo\n"})
            check(not err, f"File_write failed: {text}")
            with open(os.path.join(PROJECT, "notes/a.txt")) as f:
                check(f.read() == "one\ntwo\n", "file content differs")
            err, text = await call(session, "File_read", {"file_path": "notes/a.txt"})
            check(not err and "two" in text, f"File_read: {text!r}")

            if "Callback_upsert" in tools:
                await callbacks(session)
            else:
                print("callbacks module not registered: callback checks skipped")
    print("ok")


async def callbacks(session):
    err, text = await call(session, "Callback_upsert", {
        "action": "create", "name": "shout", "pattern": ["*.txt"],
        "script_content": "echo \"SHOUT saw $CP_CHANGED_FILES\"", "blocking": True,
        "timeout": 60,
    })
    check(not err, f"Callback_upsert (blocking) failed: {text}")
    err, text = await call(session, "File_write", {"file_path": "b.txt", "content": "hi\n"})
    check(not err, f"File_write failed: {text}")
    check("shout" in text, f"blocking callback result missing from the write: {text!r}")

    err, text = await call(session, "Callback_upsert", {
        "action": "create", "name": "later", "pattern": ["*.md"],
        "script_content": "exit 3", "blocking": False,
    })
    check(not err, f"Callback_upsert (background) failed: {text}")
    err, text = await call(session, "File_write", {"file_path": "c.md", "content": "# c\n"})
    check(not err and "started in background" in text, f"background start not reported: {text!r}")
    # The run's result comes with the first call after it ended, whatever the tool: a later
    # one, or the write itself when the run ended before the write's result was made.
    deadline = time.monotonic() + 60
    while "Background results" not in text:
        check(time.monotonic() < deadline, f"background result never delivered: {text!r}")
        await asyncio.sleep(0.5)
        err, text = await call(session, "File_read", {"file_path": "c.md"})
    result = text.split("Background results", 1)[1]
    check("later" in result and "FAILED" in result, f"not the failed run of 'later': {text!r}")
    print("callbacks: blocking and background results delivered")


asyncio.run(main())

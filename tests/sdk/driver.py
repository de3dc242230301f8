"""A line-driven MCP client on the official Python SDK (`mcp`, pinned in requirements.txt),
for scimcp's end-to-end tests (tests/tests/it/tasks.rs).

The test writes one JSON command per line on stdin and reads one JSON answer per line on
stdout. The driver launches the real `scimcp` over stdio through the SDK's own
`StdioServerParameters`, so every message on the wire is the SDK's:

  {"op": "connect", "server": {command, args, env, cwd} | "url": "http://…/mcp",
   "mode": "2026-07-28" | "legacy", "tasks": true, "elicit": "accept" | "decline" | null}
  {"op": "answer", "elicit": "accept" | "decline" | "cancel"}  -> how later forms are answered
  {"op": "call", "tool": NAME, "args": {...}}   -> {"kind": "task", "task": {...}}
                                                   or {"kind": "result", "result": {...}}
  {"op": "get", "taskId": ID}                    -> the `tasks/get` result as sent
  {"op": "cancel", "taskId": ID}                 -> the `tasks/cancel` ack
  {"op": "close"}                                -> the client ends; the server exits
  {"op": "quit"}

Every answer also lists the elicitation forms the server asked ("elicitations") since the
last command. The SDK has no tasks client of its own in 2.3.0, so the tasks extension is a
`ClientExtension` here: its identifier (declared in every request's capabilities) and a
claim on `resultType: "task"`; `tasks/get` and `tasks/cancel` go out through the SDK
session's `send_request`.
"""

from __future__ import annotations

import json
import sys
import traceback
from contextlib import AsyncExitStack
from typing import Any, Literal

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.extension import ClientExtension, ResultClaim
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, ElicitResult, Request, RequestParams, Result
from pydantic import TypeAdapter

TASKS = "io.modelcontextprotocol/tasks"


class CreatedTask(Result):
    """`CreateTaskResult` of the tasks extension (flattened task)."""

    result_type: Literal["task"]
    task_id: str
    status: str
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    poll_interval_ms: int | None = None


class TaskIdParams(RequestParams):
    task_id: str


class GetTask(Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskIdParams
    name_param = "taskId"


class CancelTask(Request[TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskIdParams
    name_param = "taskId"


async def _never_resolve(result: CreatedTask, _ctx: Any) -> CallToolResult:
    raise RuntimeError("the driver reads tasks itself (session.call_tool with allow_claimed)")


class TasksExtension(ClientExtension):
    identifier = TASKS

    def claims(self):
        return (ResultClaim(result_type="task", model=CreatedTask, resolve=_never_resolve),)


RAW = TypeAdapter(dict[str, Any])


class Driver:
    def __init__(self) -> None:
        self.stack: AsyncExitStack | None = None
        self.client: Client | None = None
        self.elicit: str | None = None
        self.seen: list[dict[str, Any]] = []

    async def on_elicit(self, _context: Any, params: Any) -> ElicitResult:
        self.seen.append(params.model_dump(by_alias=True, mode="json", exclude_none=True))
        if self.elicit == "accept":
            return ElicitResult(action="accept", content={"approve": True})
        return ElicitResult(action=self.elicit or "cancel")

    async def connect(self, cmd: dict[str, Any]) -> dict[str, Any]:
        await self.close()
        if "url" in cmd:
            params: StdioServerParameters | str = cmd["url"]
        else:
            s = cmd["server"]
            params = StdioServerParameters(command=s["command"], args=s["args"], env=s["env"], cwd=s["cwd"])
        self.elicit = cmd.get("elicit")
        self.stack = AsyncExitStack()
        client = Client(
            params,
            mode=cmd.get("mode", "2026-07-28"),
            extensions=[TasksExtension()] if cmd.get("tasks") else None,
            elicitation_callback=self.on_elicit if self.elicit else None,
            read_timeout_seconds=120,
        )
        self.client = await self.stack.enter_async_context(client)
        return {"protocol_version": self.client.protocol_version}

    async def close(self) -> dict[str, Any]:
        if self.stack is not None:
            await self.stack.aclose()
        self.stack, self.client = None, None
        return {"closed": True}

    async def call(self, cmd: dict[str, Any]) -> dict[str, Any]:
        assert self.client is not None, "connect first"
        if cmd.get("raw"):
            # One round as sent, no MRTR driving: what a client without a form handler gets.
            out = await self.client.session.call_tool(
                cmd["tool"], cmd.get("args"), allow_input_required=True, allow_claimed=True
            )
            return {"kind": "raw", "result": out.model_dump(by_alias=True, mode="json", exclude_none=True)}
        # The SDK drives input rounds (elicitation through on_elicit); a claimed task stops it.
        first = await self.client.session.call_tool(
            cmd["tool"], cmd.get("args"), allow_input_required=True, allow_claimed=True
        )
        final = await self.client._drive_input_required(first, self._retry(cmd))  # noqa: SLF001
        if isinstance(final, CreatedTask):
            return {"kind": "task", "task": final.model_dump(by_alias=True, mode="json", exclude_none=False)}
        return {"kind": "result", "result": final.model_dump(by_alias=True, mode="json", exclude_none=True)}

    def _retry(self, cmd: dict[str, Any]):
        async def retry(responses: Any, state: str | None):
            assert self.client is not None
            return await self.client.session.call_tool(
                cmd["tool"],
                cmd.get("args"),
                input_responses=responses,
                request_state=state,
                allow_input_required=True,
                allow_claimed=True,
            )

        return retry

    async def task(self, request: Request[Any, Any]) -> dict[str, Any]:
        assert self.client is not None, "connect first"
        return await self.client.session.send_request(request, RAW)

    async def serve(self) -> None:
        while True:
            line = await anyio.to_thread.run_sync(sys.stdin.readline)
            if not line:
                break
            cmd = json.loads(line)
            op = cmd["op"]
            try:
                if op == "quit":
                    break
                elif op == "connect":
                    out = await self.connect(cmd)
                elif op == "answer":
                    self.elicit = cmd["elicit"]
                    out = {"elicit": self.elicit}
                elif op == "close":
                    out = await self.close()
                elif op == "call":
                    out = await self.call(cmd)
                elif op == "get":
                    out = await self.task(GetTask(params=TaskIdParams(task_id=cmd["taskId"])))
                elif op == "cancel":
                    out = await self.task(CancelTask(params=TaskIdParams(task_id=cmd["taskId"])))
                else:
                    out = {"error": f"unknown op {op}"}
            except MCPError as e:
                out = {"error": str(e), "code": e.error.code, "data": e.error.data}
            except Exception as e:  # noqa: BLE001 - every failure goes back to the test as data
                out = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}
            out["elicitations"], self.seen = self.seen, []
            sys.stdout.write(json.dumps(out) + "\n")
            sys.stdout.flush()
        await self.close()


if __name__ == "__main__":
    anyio.run(Driver().serve)

"""The benchmark peer: an MCP server written with the official Python MCP SDK (low-level
`mcp.server.lowlevel.Server`), serving the same tool names with the same input and output
schemas as `scimcp serve --adapter refsci`: the benchmark hands it the `tools/list` of the
very scimcp binary it measures (`SCIMCP_BENCH_TOOLS`, a file it writes), so tools added to
scimcp never make the two drift apart; `tools.json` beside this file is that list as of the
last full `bench/run.sh` (which rewrites it), for running the peer alone. Tools it does not
implement answer an error, as start/cancel/wait do.

What it does, so the comparison stays honest:

- starts like a typical SDK server: imports the SDK, reads the refsci manifest and its
  parameter schemas from `adapters/`, compiles one JSON Schema validator per workflow and per
  tool input schema;
- every `tools/call` validates its arguments against the tool's input schema (scimcp parses
  them strictly);
- `get_capabilities`: builds the same structure from the manifest on every call, hashing
  each workflow's parameter schema (canonical JSON, SHA-256);
- `validate_analysis`: checks the parameters against the workflow schema, applies the
  defaults, resolves the dataset below the start directory (refusing `..` and paths
  outside it), streams it through SHA-256, renders the argv from the manifest's template and
  hashes the plan and the request;
- `list_runs`: lists the runs directory of `SCIMCP_HOME`, reads and parses every run's
  `status.json`, sorts newest first and returns one page, as scimcp does;
- `get_run_status`: reads one run's `status.json`;
- `get_run_result`: waits up to `wait_s` (default 45) for the run's `status.json` to show an
  ended state, reading it every 250 ms without blocking other requests, then answers its
  state (and `result.json` once ended);
- `resources/read` of `scimcp://runs/{run_id}/result`: that run's `result.json`, as text;
- over HTTP with `SCIMCP_BENCH_TOKENS` (a file of bearer secrets, one a line, as
  `scimcp token add` printed them): every request needs one of them (`Authorization:
  Bearer …`, compared by SHA-256 as scimcp does), else 401.

What it does not do: start or cancel runs (those tools answer an error), the
hardening scimcp adds (opening datasets below their root without following links, secret
places, control characters, hard links, size limits, response ceilings, paging hashes),
or probing the runtime.

    python python_sdk_server.py                  # stdio
    python python_sdk_server.py --http PORT      # Streamable HTTP at http://127.0.0.1:PORT/mcp
"""

import argparse
import hashlib
import json
import os
import sys
import tomllib
from pathlib import Path

import anyio
import jsonschema
import mcp_types as types
from mcp.server.lowlevel.server import Server

HERE = Path(__file__).resolve().parent
ADAPTERS = HERE.parent.parent / "adapters"
TOOLS = json.loads(Path(os.environ.get("SCIMCP_BENCH_TOOLS", HERE / "tools.json")).read_text())
VALIDATORS = {t["name"]: jsonschema.Draft202012Validator(t["inputSchema"]) for t in TOOLS}
MANIFEST_BYTES = (ADAPTERS / "refsci.toml").read_bytes()
MANIFEST = tomllib.loads(MANIFEST_BYTES.decode())
SCHEMAS = {
    wf["id"]: json.loads((ADAPTERS / wf["parameters"]).read_text()) for wf in MANIFEST["workflow"]
}
WORKFLOW_VALIDATORS = {wid: jsonschema.Draft202012Validator(s) for wid, s in SCHEMAS.items()}
START_DIR = Path.cwd().resolve()
HOME = Path(os.environ.get("SCIMCP_HOME", Path.home() / ".local/share/scimcp"))
RUNS = HOME / "runs"
PYTHON = os.environ.get("SCIMCP_PYTHON", sys.executable)


def canonical(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


ADAPTER_SHA256 = sha256_text(canonical({"manifest": MANIFEST, "schemas": SCHEMAS}))


class ToolFailure(Exception):
    def __init__(self, code: str, message: str, field: str | None = None):
        super().__init__(message)
        self.envelope = {"error": {"code": code, "message": message, "field": field}}


def get_capabilities(args):
    wanted = args.get("workflow")
    full = args.get("detail") == "full" or wanted is not None
    workflows = [wf for wf in MANIFEST["workflow"] if wanted is None or wf["id"] == wanted]
    if wanted is not None and not workflows:
        raise ToolFailure("unknown_workflow", f"adapter 'refsci' has no workflow '{wanted}'", "workflow")
    out = []
    for wf in workflows:
        schema = SCHEMAS[wf["id"]]
        entry = {
            "id": wf["id"],
            "summary": wf["summary"],
            "parameters_schema_sha256": sha256_text(canonical(schema)),
            "artifacts": [
                {"id": a["id"], "path": a["path"], "media_type": a["media_type"], "required": a.get("required", True)}
                for a in wf.get("artifact", [])
            ],
        }
        if full:
            entry["parameters_schema"] = schema
        out.append(entry)
    return {
        "server": {"name": "python-sdk-peer", "version": "0.1.0"},
        "adapter": {
            "name": MANIFEST["name"],
            "version": MANIFEST["version"],
            "summary": MANIFEST["summary"],
            "sha256": ADAPTER_SHA256,
        },
        "runtime": {"ready": Path(PYTHON).is_file()},
        "limits": MANIFEST.get("limits", {}),
        "workflows": out,
        "builtin_dataset_prefix": "builtin:",
    }


def resolve_dataset(reference: str) -> Path:
    given = Path(reference)
    if ".." in given.parts:
        raise ToolFailure("dataset_outside_roots", f"dataset path '{reference}' contains '..'", "dataset")
    path = (given if given.is_absolute() else START_DIR / given).resolve()
    if not path.is_relative_to(START_DIR):
        raise ToolFailure("dataset_outside_roots", f"dataset '{reference}' is not inside an allowed directory", "dataset")
    if not path.is_file():
        raise ToolFailure("dataset_not_found", f"no dataset '{reference}'", "dataset")
    return path


def sha256_file(path: Path) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as f:
        while chunk := f.read(64 * 1024):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def render(template: str, values: dict) -> str:
    for name, value in values.items():
        template = template.replace("{" + name + "}", value)
    return template


def text_of(value) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return canonical(value)
    return json.dumps(value)


def validate_analysis(args):
    wf = next((w for w in MANIFEST["workflow"] if w["id"] == args["workflow"]), None)
    if wf is None:
        raise ToolFailure("unknown_workflow", f"adapter 'refsci' has no workflow '{args['workflow']}'", "workflow")
    params = dict(args.get("parameters") or {})
    errors = list(WORKFLOW_VALIDATORS[wf["id"]].iter_errors(params))
    if errors:
        raise ToolFailure("invalid_parameters", errors[0].message, "parameters")
    for name, prop in SCHEMAS[wf["id"]].get("properties", {}).items():
        if name not in params and "default" in prop:
            params[name] = prop["default"]
    path = resolve_dataset(args["dataset"])
    sha256, size = sha256_file(path)
    expected = args.get("expected_dataset_sha256")
    if expected and expected.lower() != sha256:
        raise ToolFailure("dataset_changed", "the dataset's sha256 differs", "expected_dataset_sha256")
    values = {"dataset": f"inputs/{path.name}", "output_dir": "output"}
    values.update({k: text_of(v) for k, v in params.items()})
    argv = MANIFEST["runtime"]["launch"] + [render(a, values) for a in wf["argv"]]
    for option in wf.get("options", []):
        if option["param"] in params:
            argv += [option["flag"], text_of(params[option["param"]])]
    plan = {
        "adapter": MANIFEST["name"],
        "adapter_version": MANIFEST["version"],
        "adapter_sha256": ADAPTER_SHA256,
        "workflow": wf["id"],
        "program": PYTHON,
        "args": argv,
        "stdin": [render(s, values) for s in wf.get("stdin", [])],
        "env": MANIFEST["runtime"].get("env", {}),
        "working_dir": "work",
        "output_dir": "output",
        "dataset": {"reference": args["dataset"], "run_path": values["dataset"], "sha256": sha256, "size_bytes": size},
        "artifacts": wf.get("artifact", []),
        "timeout_s": MANIFEST.get("limits", {}).get("run_timeout_s", 3600),
    }
    plan_sha256 = sha256_text(canonical(plan))
    request_sha256 = sha256_text(canonical({"workflow": wf["id"], "dataset": args["dataset"], "parameters": params}))
    validation_id = "val-" + sha256_text(f"{ADAPTER_SHA256}\n{request_sha256}\n{sha256}\n{plan_sha256}")[:16]
    return {
        "validation_id": validation_id,
        "ready": True,
        "blockers": [],
        "workflow": wf["id"],
        "resolved_parameters": params,
        "dataset": {"reference": args["dataset"], "source": "file", "path": str(path), "file_name": path.name,
                    "size_bytes": size, "sha256": sha256},
        "request_sha256": request_sha256,
        "plan_sha256": plan_sha256,
        "adapter_sha256": ADAPTER_SHA256,
        "plan": plan,
    }


def read_status(run_id: str):
    with open(RUNS / run_id / "status.json", "rb") as f:
        return json.load(f)


def is_run_id(name: str) -> bool:
    hexpart = name[4:]
    return name.startswith("run-") and len(hexpart) == 16 and all(c in "0123456789abcdef" for c in hexpart)


def list_runs(args):
    offset, limit = args.get("offset", 0), args.get("limit", 20)
    runs = []
    for entry in os.scandir(RUNS) if RUNS.is_dir() else []:
        if not is_run_id(entry.name):
            continue
        try:
            s = read_status(entry.name)
        except (OSError, ValueError):
            continue
        summary = {k: s[k] for k in ("run_id", "state", "workflow", "adapter", "created_at")}
        for k in ("reason", "ended_at"):
            if s.get(k) is not None:
                summary[k] = s[k]
        runs.append(summary)
    runs.sort(key=lambda r: r["run_id"])
    runs.sort(key=lambda r: r["created_at"], reverse=True)
    items = runs[offset : offset + limit]
    page = {"items": items, "offset": offset, "limit": limit, "total": len(runs), "truncated": len(items) < len(runs)}
    if offset + limit < len(runs):
        page["next_offset"] = offset + limit
    return {"runs": page}


def get_run_status(args):
    if not is_run_id(args["run_id"]):
        raise ToolFailure("unknown_run", f"no run '{args['run_id']}'", "run_id")
    try:
        return read_status(args["run_id"])
    except OSError:
        raise ToolFailure("unknown_run", f"no run '{args['run_id']}'", "run_id") from None


ENDED = {"succeeded", "failed", "cancelled", "partial_failure"}


async def get_run_result(args):
    run_id = args["run_id"]
    if not is_run_id(run_id):
        raise ToolFailure("unknown_run", f"no run '{run_id}'", "run_id")
    wait_s = min(float(args.get("wait_s", 45)), 300.0)
    start = anyio.current_time()
    while True:
        try:
            status = read_status(run_id)
        except OSError:
            raise ToolFailure("unknown_run", f"no run '{run_id}'", "run_id") from None
        waited = anyio.current_time() - start
        if status["state"] in ENDED or waited >= wait_s:
            break
        await anyio.sleep(0.25)
    out = {"run_id": run_id, "state": status["state"], "terminal": status["state"] in ENDED,
           "waited_s": round(waited, 3)}
    if out["terminal"]:
        with open(RUNS / run_id / "result.json", "rb") as f:
            out["result"] = json.load(f)
    else:
        out["retry_after_s"] = 0
    return out


def get_environment(_args):
    return {"python": PYTHON}


HANDLERS = {
    "get_capabilities": get_capabilities,
    "validate_analysis": validate_analysis,
    "list_runs": list_runs,
    "get_run_status": get_run_status,
    "get_environment": get_environment,
}
ASYNC_HANDLERS = {"get_run_result": get_run_result}


async def on_list_tools(ctx, params) -> types.ListToolsResult:
    return types.ListToolsResult.model_validate({"tools": TOOLS})


async def on_call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    try:
        errors = list(VALIDATORS[params.name].iter_errors(args)) if params.name in VALIDATORS else []
        if params.name not in VALIDATORS:
            raise ToolFailure("unknown_tool", f"tool not found: {params.name}")
        if errors:
            raise ToolFailure("invalid_arguments", errors[0].message)
        if params.name in ASYNC_HANDLERS:
            value, is_error = await ASYNC_HANDLERS[params.name](args), False
        else:
            handler = HANDLERS.get(params.name)
            if handler is None:
                raise ToolFailure("not_implemented", f"{params.name} is not implemented by the benchmark peer")
            value, is_error = handler(args), False
    except ToolFailure as failure:
        value, is_error = failure.envelope, True
    text = json.dumps(value)
    return types.CallToolResult.model_validate(
        {"content": [{"type": "text", "text": text}], "structuredContent": value, "isError": is_error}
    )


async def on_read_resource(ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    uri = str(params.uri)
    prefix, suffix = "scimcp://runs/", "/result"
    run_id = uri[len(prefix) : -len(suffix)] if uri.startswith(prefix) and uri.endswith(suffix) else ""
    if not is_run_id(run_id):
        raise ValueError(f"unknown resource {uri}")
    text = (RUNS / run_id / "result.json").read_text()
    return types.ReadResourceResult.model_validate(
        {"contents": [{"uri": uri, "mimeType": "application/json", "text": text}]}
    )


server = Server(
    "python-sdk-peer",
    version="0.1.0",
    on_list_tools=on_list_tools,
    on_call_tool=on_call_tool,
    on_read_resource=on_read_resource,
)


def with_tokens(app, path: str):
    """Wrap an ASGI app: every HTTP request needs a bearer secret whose SHA-256 is among those
    of the file at `path`."""
    hashes = {sha256_text(line.strip()) for line in Path(path).read_text().splitlines() if line.strip()}

    async def guarded(scope, receive, send):
        if scope["type"] == "http":
            header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
            secret = header[7:] if header.startswith("Bearer ") else ""
            if sha256_text(secret) not in hashes:
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b""})
                return
        await app(scope, receive, send)

    return guarded


async def serve_stdio() -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, metavar="PORT")
    port = parser.parse_args().http
    if port is None:
        anyio.run(serve_stdio)
        return
    import uvicorn

    app = server.streamable_http_app(host="127.0.0.1")
    tokens = os.environ.get("SCIMCP_BENCH_TOKENS")
    if tokens:
        app = with_tokens(app, tokens)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()

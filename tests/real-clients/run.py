"""The real-client lane: Claude Code, Gemini CLI and Codex CLI against scimcp, offline.

For each client, in a fresh fake HOME: `scimcp-setup` registers scimcp (stdio), the client's
own list command must say connected, and a one-shot session against a fake model API on
127.0.0.1 (fakemodel.py) must show the client handing the model every tool scimcp serves.
Then the same with `--remote` against a real `scimcp serve --transport http` that requires a
token, and with a wrong token (the client must fail: no scimcp tool reaches the model).
Finally one client runs an analysis end to end from an installed release bundle.

Every check prints `PASS name` or `FAIL name: why`; the last line is `N passed, M failed`.
scripts/real-clients.sh installs the pinned clients and runs this.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fakemodel import Call, Conversation, FakeModel, Final  # noqa: E402

# Every client run is bounded; a hung client fails its check instead of the lane.
CLIENT_TIMEOUT_S = 120
# The end-to-end analysis (runtime calls, a short regression) gets longer.
ANALYSIS_TIMEOUT_S = 300
LOCAL = "scimcp-refsci"
REMOTE = "scimcp-lab"
TOKEN_VAR = "SCIMCP_LANE_TOKEN"
SCHEMA_NOISE = re.compile(r'unknown format "[^"]*"')


class Report:
    def __init__(self, only: str | None):
        self.passed = 0
        self.failed = 0
        self.only = re.compile(only) if only else None

    def wanted(self, name: str) -> bool:
        return self.only is None or bool(self.only.search(name))

    def check(self, name: str, ok: bool, why: str = ""):
        if ok:
            self.passed += 1
            print(f"PASS {name}", flush=True)
        else:
            self.failed += 1
            why = " ".join(why.split())[:600]
            print(f"FAIL {name}: {why}", flush=True)
        return ok


@dataclass
class Run:
    code: int | None
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + "\n" + self.err

    def tail(self, n: int = 400) -> str:
        return f"exit {self.code}; output: ...{self.text.strip()[-n:]}"


def run(cmd: list[str], env: dict, cwd: Path, timeout: float = CLIENT_TIMEOUT_S) -> Run:
    try:
        p = subprocess.run(
            cmd, env=env, cwd=cwd, capture_output=True, text=True, errors="replace",
            timeout=timeout, stdin=subprocess.DEVNULL,
        )
        return Run(p.returncode, p.stdout, p.stderr)
    except subprocess.TimeoutExpired as e:
        def s(x):
            return x.decode("utf-8", "replace") if isinstance(x, bytes) else (x or "")
        return Run(None, s(e.stdout), s(e.stderr) + f"\n(timed out after {timeout:.0f} s)")


# -- scimcp's own view of its tools -------------------------------------------------------

def served_tools(scimcp: Path, home: Path) -> list[str]:
    """tools/list straight from `scimcp serve` over stdio: what every client must hand on."""
    env = {"PATH": os.environ["PATH"], "SCIMCP_HOME": str(home), "HOME": str(home)}
    p = subprocess.Popen([str(scimcp), "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, env=env, text=True)
    try:
        def send(msg):
            p.stdin.write(json.dumps(msg) + "\n")
            p.stdin.flush()
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "real-clients-lane", "version": "1"}}})
        p.stdout.readline()
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        while True:
            msg = json.loads(p.stdout.readline())
            if msg.get("id") == 2:
                return sorted(t["name"] for t in msg["result"]["tools"])
    finally:
        p.stdin.close()
        p.wait(timeout=10)


# -- the three clients ----------------------------------------------------------------------

@dataclass
class Client:
    id: str  # scimcp-setup's client id
    program: str

    def tool(self, server: str, tool: str) -> str:
        """The name the client gives `tool` of `server` when it hands it to the model."""
        if self.id == "claude-code":
            return f"mcp__{server}__{tool}"
        if self.id == "gemini":
            return f"mcp_{server}_{tool}"
        # Codex puts a server's tools in a namespace whose name has `-` replaced by `_`.
        return f"mcp__{server.replace('-', '_')}.{tool}"

    def prepare_home(self, home: Path, project: Path):
        """What a person who uses this client has: its folder (so scimcp-setup detects it),
        and for Gemini a trusted folder with API-key auth (untrusted folders disable MCP)."""
        if self.id == "claude-code":
            (home / ".claude").mkdir(parents=True, exist_ok=True)
        elif self.id == "gemini":
            (home / ".gemini").mkdir(parents=True, exist_ok=True)
            (home / ".gemini" / "trustedFolders.json").write_text(
                json.dumps({str(project): "TRUST_FOLDER"}))
            (project / ".gemini").mkdir(parents=True, exist_ok=True)
            (project / ".gemini" / "settings.json").write_text(
                json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))
        else:
            (home / ".codex").mkdir(parents=True, exist_ok=True)

    def list_cmd(self) -> list[str]:
        return [self.program, "mcp", "list"]

    def listed(self, out: str, server: str) -> tuple[str, str]:
        """(verdict, line) for `server` in the list output: connected, failed, config or missing."""
        lines = [l for l in out.splitlines() if server in l]
        if not lines:
            return "missing", ""
        line = lines[0]
        if self.id == "codex":
            # Codex's list shows the configuration only; it never connects.
            return ("config" if "enabled" in line else "missing"), line
        if "Connected" in line and "Disconnected" not in line and "Failed" not in line:
            return "connected", line
        return "failed", line

    def session(self, fake: FakeModel, prompt: str, env: dict, servers: list[str]) -> tuple[list[str], dict]:
        env = dict(env)
        if self.id == "claude-code":
            env.update(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="sk-ant-fake-lane",
                       CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1")
            allowed = ",".join(f"mcp__{s}__*" for s in servers)
            return [self.program, "-p", prompt, "--allowedTools", allowed], env
        if self.id == "gemini":
            env.update(GOOGLE_GEMINI_BASE_URL=fake.url, GEMINI_API_KEY="fake-lane-key")
            # A model named on the command line skips Gemini's model router (side requests).
            return [self.program, "-p", prompt, "--approval-mode", "yolo", "-m", "gemini-2.5-flash"], env
        env.update(FAKE_LANE_KEY="fake-lane-key")
        provider = ('{name="fake",base_url="%s/v1",env_key="FAKE_LANE_KEY",wire_api="responses"}' % fake.url)
        return [self.program, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
                "--disable", "plugins", "--disable", "remote_plugin",
                "-c", "model_provider=fake", "-c", f"model_providers.fake={provider}", "-c", "model=fake-model",
                prompt], env


CLIENTS = [Client("claude-code", "claude"), Client("gemini", "gemini"), Client("codex", "codex")]


# -- scripts for the fake model ---------------------------------------------------------------

def plan(client: Client, server: str, expected: list[str], steps: list[tuple[str, Callable[[list], dict]]]):
    """A script: make the client load `server`'s tools (Claude Code's ToolSearch), then call
    each step's tool with the arguments its function computes from the results so far, then
    end. A step whose tool the client did not offer ends the session (the check then fails)."""
    names = [client.tool(server, t) for t in expected]

    def script(conv: Conversation):
        offered = set(conv.tools)
        ours = [r for r in conv.results if r[0] != "ToolSearch"]
        if client.id == "claude-code" and not offered.issuperset(names):
            searched = any(r[0] == "ToolSearch" for r in conv.results)
            if not searched and names[0] in conv.raw:
                return Call("ToolSearch", {"query": "select:" + ",".join(names), "max_results": len(names)})
        if len(ours) < len(steps):
            tool, args = steps[len(ours)]
            name = client.tool(server, tool)
            if name in offered:
                return Call(name, args(ours))
            return Final(f"{name} was not offered")
        return Final("done")

    return script


def result_json(results: list, tool_suffix: str) -> dict:
    """The JSON a scimcp tool answered, from the text the client sent back to the model."""
    for name, text in reversed(results):
        if name.endswith(tool_suffix):
            start, end = text.find("{"), text.rfind("}")
            if start >= 0:
                try:
                    return json.loads(text[start:end + 1])
                except ValueError:
                    return {"unparsed": text[:300]}
    return {}


# -- the lane ---------------------------------------------------------------------------------

class Lane:
    def __init__(self, args):
        self.bin = Path(args.bin_dir).resolve()
        self.clients_bin = Path(args.clients_bin).resolve()
        self.work = Path(args.work).resolve()
        self.python = args.python
        self.report = Report(args.only)
        self.expected = served_tools(self.bin / "scimcp", self.work / "lister")
        self.server_proc = None
        self.server_bin = Path(args.server_bin).resolve() if args.server_bin else self.bin / "scimcp"

    def base_env(self, home: Path) -> dict:
        env = {
            "PATH": f"{self.clients_bin}:{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(home), "USER": os.environ.get("USER", "lane"), "LANG": "C.UTF-8",
            "TERM": "dumb", "NO_COLOR": "1", "CI": "1",
        }
        for keep in ("PIP_CACHE_DIR", "PIP_INDEX_URL", "PIP_FIND_LINKS", "TMPDIR", "SSL_CERT_FILE"):
            if keep in os.environ:
                env[keep] = os.environ[keep]
        return env

    def fresh_home(self, name: str, client: Client) -> tuple[Path, Path]:
        home = self.work / name / "home"
        project = self.work / name / "project"
        shutil.rmtree(self.work / name, ignore_errors=True)
        project.mkdir(parents=True)
        home.mkdir(parents=True)
        client.prepare_home(home, project)
        return home, project

    def setup(self, name: str, args: list[str], env: dict, cwd: Path, setup: Path | None = None) -> bool:
        r = run([str(setup or self.bin / "scimcp-setup"), "install", "--yes", *args], env, cwd, timeout=600)
        return self.report.check(name, r.code == 0, r.tail(800))

    def check_list(self, name: str, client: Client, server: str, env: dict, cwd: Path, want: str):
        r = run(client.list_cmd(), env, cwd)
        verdict, line = client.listed(r.text, server)
        if client.id == "codex" and want == "connected":
            want = "config"
        if client.id == "codex" and want == "failed":
            return  # nothing to see: Codex's list never connects
        self.report.check(name, verdict == want, f"wanted {want}, got {verdict}: {line or r.tail()}")

    def session(self, client: Client, script, env: dict, cwd: Path, servers: list[str],
                timeout: float = CLIENT_TIMEOUT_S, prompt: str = "Use the scimcp tools.") -> tuple[FakeModel, Run]:
        with FakeModel(script) as fake:
            cmd, env = client.session(fake, prompt, env, servers)
            r = run(cmd, env, cwd, timeout)
        # What the model was sent and what the client printed, for a failure's post-mortem.
        n = len(list(cwd.parent.glob("session-*.json")))
        (cwd.parent / f"session-{n}.json").write_text(json.dumps(
            {"cmd": cmd, "exit": r.code, "stdout": r.out, "stderr": r.err, "requests": fake.requests}, indent=1))
        return fake, r

    def tools_check(self, name: str, client: Client, server: str, env: dict, cwd: Path):
        """The session hands the model every tool scimcp serves, and one call comes back."""
        script = plan(client, server, self.expected, [("get_capabilities", lambda _r: {})])
        fake, r = self.session(client, script, env, cwd, [server])
        seen = fake.tools_seen()
        want = {client.tool(server, t) for t in self.expected}
        missing = sorted(want - seen)
        self.report.check(
            f"{name}: the model is handed all {len(want)} scimcp tools",
            not missing,
            f"{len(missing)} missing (e.g. {missing[:3]}); tools seen: {sorted(seen)[:40]}; {r.tail()}")
        caps = result_json(fake.results_seen(), "get_capabilities")
        self.report.check(f"{name}: get_capabilities answers through the client",
                          bool(caps) and "unparsed" not in caps and "error" not in caps,
                          f"result: {str(caps)[:300]}; {r.tail()}")
        # Clients warn once per schema node whose `format` JSON Schema does not define (Gemini
        # CLI in every session, even one whose MCP connection then fails).
        noise = SCHEMA_NOISE.findall(r.text)
        self.report.check(f"{name}: no unknown-format warnings", not noise,
                          f"{len(noise)} lines like {noise[:1]}")
        return fake, r

    # -- stdio --
    def stdio(self, client: Client):
        tag = f"{client.id} stdio"
        if not self.report.wanted(tag):
            return
        home, project = self.fresh_home(f"{client.id}-stdio", client)
        env = self.base_env(home)
        if not self.setup(f"{tag}: scimcp-setup install",
                          ["--client", client.id, "--skip-runtime"], env, project):
            return
        self.check_list(f"{tag}: `{' '.join(client.list_cmd())}` says connected", client, LOCAL, env, project,
                        "connected")
        self.tools_check(tag, client, LOCAL, env, project)

    # -- remote --
    def start_server(self, token: str) -> str:
        home = self.work / "server-home"
        home.mkdir(parents=True, exist_ok=True)
        log = open(self.work / "server.log", "w")
        env = {"PATH": os.environ["PATH"], "HOME": str(home), "SCIMCP_HOME": str(home), "SCIMCP_TOKEN": token}
        self.server_proc = subprocess.Popen(
            [str(self.server_bin), "serve", "--transport", "http", "--listen", "127.0.0.1:0",
             "--require-token"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            m = re.search(r"http://127\.0\.0\.1:\d+/mcp", (self.work / "server.log").read_text())
            if m:
                return m.group(0)
            if self.server_proc.poll() is not None:
                break
            time.sleep(0.1)
        raise RuntimeError("scimcp serve --transport http did not start: "
                           + (self.work / "server.log").read_text()[-1000:])

    def remote(self, client: Client, url: str, token: str):
        tag = f"{client.id} remote"
        if not self.report.wanted(tag):
            return
        home, project = self.fresh_home(f"{client.id}-remote", client)
        env = self.base_env(home)
        if not self.setup(f"{tag}: scimcp-setup install --remote --token-env {TOKEN_VAR}",
                          ["--client", client.id, "--remote", url, "--token-env", TOKEN_VAR, "--name", REMOTE],
                          env, project):
            return
        good = dict(env, **{TOKEN_VAR: token})
        self.check_list(f"{tag}: `{' '.join(client.list_cmd())}` says connected", client, REMOTE, good, project,
                        "connected")
        self.tools_check(tag, client, REMOTE, good, project)

        tag = f"{client.id} remote, wrong token"
        bad = dict(env, **{TOKEN_VAR: "wrong-" + secrets.token_hex(24)})
        self.check_list(f"{tag}: `{' '.join(client.list_cmd())}` says failed", client, REMOTE, bad, project,
                        "failed")
        script = plan(client, REMOTE, self.expected, [("get_capabilities", lambda _r: {})])
        fake, r = self.session(client, script, bad, project, [REMOTE])
        ours = sorted(t for t in fake.tools_seen() if REMOTE in t)
        self.report.check(f"{tag}: no scimcp tool reaches the model",
                          bool(fake.requests) and not ours,
                          f"tools handed over: {ours[:5]}; requests: {len(fake.requests)}; {r.tail()}")

    # -- an analysis from an installed bundle --
    def bundle(self, repo: Path):
        client = CLIENTS[0]
        tag = f"{client.id} bundle"
        if not self.report.wanted(tag):
            return
        out = self.work / "bundles"
        shutil.rmtree(out, ignore_errors=True)
        r = run([str(self.bin / "scimcp-release"), "bundle", "--bin-dir", str(self.bin), "--repo", str(repo),
                 "--out", str(out)], dict(os.environ), repo, timeout=600)
        zips = sorted(out.glob("scimcp-*.zip"))
        if not self.report.check(f"{tag}: scimcp-release bundle", r.code == 0 and len(zips) == 1, r.tail()):
            return
        home, project = self.fresh_home(f"{client.id}-bundle", client)
        # Where a scientist unzips a download: a path with a space and an accent.
        downloads = home / "Téléchargements de test"
        with zipfile.ZipFile(zips[0]) as z:
            z.extractall(downloads)
        setups = sorted(downloads.rglob("bin/scimcp-setup"))
        if not self.report.check(f"{tag}: the zip holds bin/scimcp-setup", len(setups) == 1,
                                 f"found {setups}"):
            return
        setup = setups[0]
        setup.chmod(0o755)
        for f in setup.parent.iterdir():
            f.chmod(0o755)
        env = self.base_env(home)
        args = ["--from", str(zips[0]), "--allow-unsigned", "--client", client.id]
        if self.python:
            args += ["--python", self.python]
        if not self.setup(f"{tag}: the bundle's scimcp-setup installs it (runtime provisioned)", args, env,
                          project, setup=setup):
            return
        state = json.loads((home / ".local/share/scimcp/state.json").read_text())
        runtime = (state.get("runtimes", {}).get("refsci") or {}).get("interpreter")
        data_dirs = state.get("data_dirs") or []
        if not self.report.check(f"{tag}: state.json records the runtime and a data folder",
                                 bool(runtime and data_dirs), json.dumps(state)[:400]):
            return
        data_dir = Path(data_dirs[0])
        # The scientist's data: refsci's sample datasets, put into the data folder.
        data_dir.mkdir(parents=True, exist_ok=True)
        r = run([runtime, "-m", "refsci", "datasets", "export", str(data_dir)], env, project)
        dataset = data_dir / "diabetes.csv"
        if not self.report.check(f"{tag}: a dataset in the data folder", dataset.is_file(), r.tail()):
            return
        request = {"workflow": "regression", "dataset": str(dataset), "parameters": {"target": "target"}}

        def start(results):
            validated = result_json(results, "validate_analysis")
            return dict(request, confirm=True, validation_id=validated.get("validation_id", "missing"))

        def result(results):
            started = result_json(results, "start_analysis")
            return {"run_id": started.get("run_id", "missing"), "wait_s": 120}

        script = plan(client, LOCAL, self.expected, [
            ("validate_analysis", lambda _r: request), ("start_analysis", start), ("get_run_result", result)])
        fake, r = self.session(client, script, env, project, [LOCAL], timeout=ANALYSIS_TIMEOUT_S,
                               prompt="Run a ridge regression of target on diabetes.csv.")
        results = fake.results_seen()
        validated = result_json(results, "validate_analysis")
        self.report.check(f"{tag}: validate_analysis is ready", validated.get("ready") is True,
                          f"{str(validated)[:300]}; {r.tail()}")
        started = result_json(results, "start_analysis")
        self.report.check(f"{tag}: start_analysis (confirm) starts a run",
                          bool(started.get("run_id")) and started.get("started", True) is not False,
                          f"{str(started)[:300]}; {r.tail()}")
        final = result_json(results, "get_run_result")
        outcome = final.get("result") or {}
        status = outcome.get("state")
        metrics = (outcome.get("reported") or {}).get("metrics") or {}
        self.report.check(f"{tag}: get_run_result: succeeded with metrics",
                          status == "succeeded" and isinstance(metrics.get("r2"), float),
                          f"status {status}, metrics {str(metrics)[:200]}; answer {str(final)[:400]}; {r.tail()}")
        self.images(client, env, project, tag)

    def images(self, client: Client, env: dict, project: Path, tag: str):
        """A refsci forecast through the same installed bundle: scimcp attaches the run's plot
        to get_run_result as MCP image content, and the client must hand it to the model (an
        image block in the tool_result it sends back) byte for byte."""
        request = {"workflow": "forecast", "dataset": "builtin:airline",
                   "parameters": {"time_column": "period", "value_column": "passengers", "horizon": 12,
                                  "estimator": "NaiveForecaster", "params": {"sp": 12}}}

        def start(results):
            validated = result_json(results, "validate_analysis")
            return dict(request, confirm=True, validation_id=validated.get("validation_id", "missing"))

        def result(results):
            started = result_json(results, "start_analysis")
            return {"run_id": started.get("run_id", "missing"), "wait_s": 120}

        script = plan(client, LOCAL, self.expected, [
            ("validate_analysis", lambda _r: request), ("start_analysis", start), ("get_run_result", result)])
        fake, r = self.session(client, script, env, project, [LOCAL], timeout=ANALYSIS_TIMEOUT_S,
                               prompt="Forecast the airline passengers a year ahead and show me the plot.")
        final = result_json(fake.results_seen(), "get_run_result")
        outcome = final.get("result") or {}
        plot = next((a for a in (outcome.get("artifacts") or {}).get("items") or []
                     if a.get("path") == "plot.png"), {})
        if not self.report.check(f"{tag}: a forecast's get_run_result lists plot.png",
                                 outcome.get("state") == "succeeded" and bool(plot.get("sha256")),
                                 f"answer {str(final)[:400]}; {r.tail()}"):
            return
        images = fake.images_seen()
        hashes = {hashlib.sha256(base64.b64decode(data)).hexdigest() for _mime, data in images}
        self.report.check(f"{tag}: the client sends the plot back to the model as an image",
                          plot["sha256"] in hashes and all(m == "image/png" for m, _d in images),
                          f"{len(images)} images seen ({[m for m, _d in images]}), plot sha256 {plot['sha256']}")

    def close(self):
        if self.server_proc:
            self.server_proc.terminate()
            try:
                self.server_proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.server_proc.kill()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin-dir", required=True, help="scimcp's built binaries (target/debug)")
    ap.add_argument("--clients-bin", required=True, help="node_modules/.bin holding claude, gemini, codex")
    ap.add_argument("--work", required=True, help="a scratch folder (fake homes, logs)")
    ap.add_argument("--repo", default=".", help="the repository root, for scimcp-release bundle")
    ap.add_argument("--python", help="the interpreter the bundle's runtime is built from")
    ap.add_argument("--server-bin", help="the scimcp that serves the remote checks (default: --bin-dir's), "
                    "e.g. a build without a fix, to see the lane catch its bug")
    ap.add_argument("--only", help="run only the checks whose group matches this regex")
    args = ap.parse_args()
    # The script's own start (npm included) when it passes one, for the total time.
    start = float(os.environ.get("SCIMCP_LANE_START") or time.time())
    Path(args.work).mkdir(parents=True, exist_ok=True)
    lane = Lane(args)
    print(f"scimcp serves {len(lane.expected)} tools: {', '.join(lane.expected)}", flush=True)
    try:
        for client in CLIENTS:
            lane.stdio(client)
        token = "lane-" + secrets.token_hex(24)
        url = lane.start_server(token)
        for client in CLIENTS:
            lane.remote(client, url, token)
        lane.close()
        lane.bundle(Path(args.repo).resolve())
    finally:
        lane.close()
    rep = lane.report
    if rep.failed:
        print(f"real-clients: fake homes and recorded sessions (session-N.json) kept in {args.work}",
              flush=True)
    print(f"real-clients: total time {time.time() - start:.0f} s", flush=True)
    print(f"{rep.passed} passed, {rep.failed} failed", flush=True)
    return 1 if rep.failed or not rep.passed else 0


if __name__ == "__main__":
    sys.exit(main())

// The MCP App run viewer in a real headless Chromium, against a real `scimcp serve`.
//
// A refsci forecast run (it writes plot.png and forecast.csv) and a two-item campaign go
// through MCP (the official TypeScript SDK client over stdio). The viewer's HTML is read
// from the server (`resources/read ui://scimcp/run-viewer`), mounted by our test host
// (host.html, served on 127.0.0.1) in a sandboxed iframe, and given the tool's answer; the
// View's tools/call and resources/read go through the host to the same server. The test
// checks what a person would see (metrics rows, loaded images, artifact hashes, a paged
// CSV table, the campaign table and chart, cancel's answer), that the console has no
// errors and no CSP violation happened, writes screenshots and structure summaries to the
// output directory, and proves its assertions can fail: the same checks run against a
// result whose image artifact (and then whose metrics) the host removed must fail.
//
//   node viewer.test.mjs   (scripts/browser-test.sh sets the environment below)
//   SCIMCP_BIN       the scimcp binary
//   SCIMCP_PYTHON    the Python with refsci (the repository's .venv)
//   BROWSER_OUT      where screenshots and summaries go (target/browser)
//   CHROMIUM         the browser (default /usr/bin/chromium)

import { createServer } from "node:http";
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
const need = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (scripts/browser-test.sh sets it)`);
  return v;
};
const SCIMCP = need("SCIMCP_BIN");
const PYTHON = need("SCIMCP_PYTHON");
const OUT = need("BROWSER_OUT");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const VIEWER_URI = "ui://scimcp/run-viewer";
const APP_MIME = "text/html;profile=mcp-app";
const VIEWER_TOOLS = ["start_analysis", "get_run_status", "get_run_result", "start_campaign", "get_campaign_status"];
const WITHIN_MS = 150_000;

const failures = [];
const check = (ok, what) => {
  if (!ok) failures.push(what);
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
};
const say = (text) => console.log(`browser-test: ${text}`);

mkdirSync(OUT, { recursive: true });
const scratch = mkdtempSync(join(tmpdir(), "scimcp-browser-"));
const home = join(scratch, "home");
const start = join(scratch, "start");
mkdirSync(home, { recursive: true });
mkdirSync(start, { recursive: true });

// ---- the server, through the official SDK client ----------------------------------------
const transport = new StdioClientTransport({
  command: SCIMCP,
  args: ["serve", "--adapter", "refsci", "--python", PYTHON],
  cwd: start,
  env: { HOME: home, SCIMCP_HOME: join(scratch, "scimcp-home"), PATH: process.env.PATH, LC_ALL: "C.UTF-8", NO_COLOR: "1" },
  stderr: "pipe",
});
let serverStderr = "";
transport.stderr?.on("data", (chunk) => { serverStderr = (serverStderr + chunk).slice(-20000); });
const client = new Client({ name: "scimcp-browser-test", version: "1" });
await client.connect(transport);

// The host's view of the server: tools/call and resources/read, optionally tampered with
// (the negative self-checks take something out of get_run_result's answer).
let tamper = null;
async function serve(method, params) {
  if (method === "tools/call") {
    const result = await client.callTool({ name: params.name, arguments: params.arguments || {} });
    return tamper ? tamper(params.name, result) : result;
  }
  if (method === "resources/read") return client.readResource({ uri: params.uri });
  throw new Error(`the test host does not pass ${method}`);
}

const structured = (r) => r.structuredContent ?? JSON.parse(r.content.find((c) => c.type === "text").text);
async function tool(name, args) {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(structured(result))}`);
  return result;
}

let browser;
let httpServer;
const t0 = Date.now();
try {
  // ---- the server's side of MCP Apps ------------------------------------------------------
  const { tools } = await client.listTools();
  for (const name of VIEWER_TOOLS) {
    const t = tools.find((x) => x.name === name);
    check(t?._meta?.ui?.resourceUri === VIEWER_URI && t?._meta?.["ui/resourceUri"] === VIEWER_URI, `${name} carries _meta.ui.resourceUri`);
  }
  const read = await client.readResource({ uri: VIEWER_URI });
  const viewer = read.contents[0];
  check(viewer.mimeType === APP_MIME, `the viewer reads as ${APP_MIME}`);
  check(typeof viewer.text === "string" && viewer.text.startsWith("<!doctype html>"), "the viewer is HTML text");
  const ui = viewer._meta?.ui;
  check(ui && ["connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"].every((k) => Array.isArray(ui.csp?.[k]) && ui.csp[k].length === 0), "the viewer declares no domains (_meta.ui.csp)");
  check(!/(src|href)\s*=\s*["']?https?:/i.test(viewer.text), "the viewer loads nothing from a network");
  let listed = [];
  for (let cursor; ;) {
    const page = await client.listResources(cursor ? { cursor } : {});
    listed = listed.concat(page.resources);
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  check(listed.some((r) => r.uri === VIEWER_URI && r.mimeType === APP_MIME), "resources/list lists the viewer");

  // ---- a run and a campaign, started through MCP -------------------------------------------
  const request = {
    workflow: "forecast",
    dataset: "builtin:airline",
    parameters: { time_column: "period", value_column: "passengers", horizon: 12, estimator: "NaiveForecaster" },
  };
  const validation = structured(await tool("validate_analysis", request));
  check(validation.ready === true, "the forecast validates");
  const startArgs = { ...request, validation_id: validation.validation_id, confirm: true };
  const started = await tool("start_analysis", startArgs);
  const runId = structured(started).run_id;
  say(`run ${runId} started`);
  const campaignArgs = {
    workflow: "forecast", max_concurrent: 2, confirm: true,
    metrics: ["metrics.estimator", "metrics.forecast_mean", "metrics.last_forecast"],
    grid: {
      datasets: ["builtin:airline"],
      vary: { estimator: ["NaiveForecaster", "PolynomialTrendForecaster"] },
      fixed: { time_column: "period", value_column: "passengers", horizon: 6 },
    },
  };
  const campaign = await tool("start_campaign", campaignArgs);
  const campaignId = structured(campaign).campaign_id;
  check(Boolean(campaignId), "the campaign started");
  say(`campaign ${campaignId} started`);

  // ---- the host page, on 127.0.0.1 ---------------------------------------------------------
  const files = { "/host.html": "text/html; charset=utf-8", "/host.js": "text/javascript; charset=utf-8" };
  httpServer = createServer((req, res) => {
    const type = files[req.url];
    if (!type) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { "content-type": type, "cache-control": "no-store" });
    res.end(readFileSync(join(here, req.url.slice(1))));
  });
  await new Promise((resolve) => httpServer.listen(0, "127.0.0.1", resolve));
  const hostUrl = `http://127.0.0.1:${httpServer.address().port}/host.html`;

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // The machine's closed network refuses Chromium's background connections; these keep it
    // from making them (and --no-sandbox, which Playwright adds, lets it run as root).
    args: ["--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
  const consoleErrors = [];
  page.on("console", (m) => { if (m.type() === "error") consoleErrors.push(`${m.location().url || "?"}: ${m.text()}`); });
  page.on("pageerror", (e) => consoleErrors.push(`uncaught: ${e.message}`));
  // In every frame, the View's too: CSP violations, whoever reports them.
  await page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener("securitypolicyviolation", (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  await page.exposeFunction("mcp", (method, params) => serve(method, params));
  await page.goto(hostUrl);

  async function mount(toolName, args, result) {
    consoleErrors.length = 0;
    await page.evaluate(([html, u, n, a, r]) => window.mountView(html, u, n, a, r), [viewer.text, ui, toolName, args, result]);
    const handle = await page.waitForSelector("iframe");
    const frame = await handle.contentFrame();
    return { handle, frame };
  }

  // What is on screen, as data: the structure the screenshots are compared by.
  async function structure(frame) {
    return frame.evaluate(() => {
      const visible = (id) => !document.getElementById(id).hidden;
      const rows = (sel) => document.querySelectorAll(sel).length;
      const imgs = [...document.querySelectorAll("#images img")];
      return {
        title: document.getElementById("title").textContent,
        state: document.getElementById("state").dataset.state,
        sections: ["metrics-section", "images-section", "tables-section", "artifacts-section", "campaign-section"].filter(visible),
        metricsRows: rows("#metrics tbody tr"),
        images: imgs.length,
        imagesLoaded: imgs.filter((i) => i.complete && i.naturalWidth > 0).length,
        imageSources: imgs.map((i) => i.src.slice(0, 22)),
        artifactRows: rows("#artifacts tbody tr"),
        artifactHashes: [...document.querySelectorAll("#artifacts tbody tr")].filter((tr) => /^[0-9a-f]{64}$/.test(tr.cells[3].textContent)).length,
        tables: rows("#tables .table-block table"),
        tableRows: rows("#tables .table-block tbody tr"),
        pagers: rows("#tables .pager"),
        campaignRows: rows("#campaign-table tbody tr"),
        chartBars: rows("#chart svg rect"),
        notice: document.getElementById("notice").textContent,
        csp: window.__csp || [],
      };
    });
  }

  // The frame is as tall as its content (the host sized it from size-changed), so a
  // screenshot of the frame shows all of it.
  async function settled(frame) {
    await frame.waitForFunction(() => document.documentElement.scrollHeight <= window.innerHeight + 2, null, { timeout: 10_000, polling: 100 })
      .catch(() => failures.push("the host never sized the frame to its content (ui/notifications/size-changed)"));
    // Chromium paints an out-of-process frame only inside the page's viewport: make the
    // viewport as tall as the page, so the screenshot shows the whole view.
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.setViewportSize({ width: 900, height: Math.min(6000, height + 20) });
    await new Promise((r) => setTimeout(r, 200));
  }

  async function hostLog() {
    return page.evaluate(() => JSON.parse(JSON.stringify(window.hostLog)));
  }

  // The run view's checks; returns what failed (empty when it looks right).
  function runProblems(s, log, expect) {
    const p = [];
    if (!(s.metricsRows > 0)) p.push("the metrics table has no rows");
    if (!(s.images >= 1)) p.push("no image is shown");
    if (s.imagesLoaded !== s.images) p.push(`${s.images - s.imagesLoaded} image(s) did not load`);
    if (!s.imageSources.every((src) => src.startsWith("data:image/"))) p.push(`an image is not a data: URL (${s.imageSources})`);
    if (s.artifactRows !== expect.artifacts) p.push(`${s.artifactRows} artifact rows, expected ${expect.artifacts}`);
    if (s.artifactHashes !== s.artifactRows) p.push(`${s.artifactRows - s.artifactHashes} artifact row(s) without a sha256`);
    if (!(s.tables >= 1 && s.pagers >= 1 && s.tableRows > 0)) p.push("no paged CSV table");
    if (s.csp.length) p.push(`CSP violations: ${s.csp.join("; ")}`);
    if (log.viewLogs.some((l) => l.level === "error")) p.push(`the view logged errors: ${JSON.stringify(log.viewLogs)}`);
    if (log.sentBeforeInitialized) p.push("the host messaged the view before ui/notifications/initialized");
    return p;
  }

  async function waitFor(frame, fn, arg, what) {
    try {
      await frame.waitForFunction(fn, arg, { timeout: WITHIN_MS, polling: 250 });
    } catch (e) {
      const s = await structure(frame).catch(() => ({}));
      throw new Error(`${what} did not happen within ${WITHIN_MS / 1000}s: ${e.message}\nview: ${JSON.stringify(s)}`);
    }
  }

  const runEnded = () => ["succeeded", "failed", "partial_failure", "cancelled"].includes(document.getElementById("state").dataset.state)
    && document.querySelectorAll("#artifacts tbody tr").length > 0
    && [...document.querySelectorAll("#images img")].every((i) => i.complete)
    && document.querySelectorAll("#tables .table-block").length > 0;

  // ---- the run ------------------------------------------------------------------------------
  // The viewer gets start_analysis's answer while the run is still going, so it follows it
  // (get_run_status through the host) to its end.
  const { handle, frame } = await mount("start_analysis", startArgs, started);
  let sawProgress = false;
  const progressWatch = (async () => {
    for (let i = 0; i < 40 && !sawProgress; i++) {
      const st = await frame.evaluate(() => document.getElementById("state").dataset.state).catch(() => "");
      if (st === "running" || st === "queued") sawProgress = true;
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  await waitFor(frame, runEnded, null, "the run view");
  await progressWatch;
  const result = structured(await tool("get_run_result", { run_id: runId, wait_s: 0 })).result;
  const runView = await structure(frame);
  const runLog = await hostLog();
  writeFileSync(join(OUT, "run-viewer.json"), `${JSON.stringify(runView, null, 2)}\n`);
  await settled(frame);
  await handle.screenshot({ path: join(OUT, "run-viewer.png") });
  check(result.state === "succeeded", `the run succeeded (${result.state})`);
  check(runView.state === "succeeded", "the view shows the run succeeded");
  check(sawProgress, "the view showed the run while it ran (queued/running before its end)");
  check(runLog.messages[0]?.message?.method === "ui/initialize", "the view opened with ui/initialize");
  check(runLog.messages.some((m) => m.message.method === "tools/call" && m.message.params.name === "get_run_status"), "the view polled get_run_status through the host");
  check(runLog.messages.some((m) => m.message.method === "resources/read" && m.message.params.uri.endsWith("/plot.png")), "the view read plot.png with resources/read");
  const problems = runProblems(runView, runLog, { artifacts: result.artifacts.items.length });
  for (const p of problems) check(false, `run view: ${p}`);
  check(problems.length === 0, `run view: metrics ${runView.metricsRows} rows, ${runView.imagesLoaded}/${runView.images} images loaded, ${runView.artifactHashes} artifacts with sha256, ${runView.tables} paged table(s)`);
  const plot = result.artifacts.items.find((a) => a.path === "plot.png");
  check(Boolean(plot), "the run's result lists plot.png");
  // The CSV pager moves: forecast.csv has 12 rows, 10 a page.
  const pagerMoved = await frame.evaluate(() => {
    const block = [...document.querySelectorAll("#tables .table-block")].find((b) => b.dataset.path === "forecast.csv");
    if (!block) return "no forecast.csv table";
    const before = block.querySelector(".pager span").textContent;
    block.querySelectorAll(".pager button")[1].click();
    const after = block.querySelector(".pager span").textContent;
    block.querySelectorAll(".pager button")[0].click();
    return `${before} → ${after}`;
  });
  check(/rows 1–10 of 12 → rows 11–12 of 12/.test(pagerMoved), `the CSV table pages (${pagerMoved})`);
  // Cancel: asked without confirm; the server's answer is shown (this run has ended).
  await frame.click("#cancel");
  await waitFor(frame, () => !document.getElementById("answer").hidden && document.getElementById("answer").textContent.length > 0, null, "cancel's answer");
  const cancelText = await frame.evaluate(() => document.getElementById("answer").textContent);
  const cancelCall = (await hostLog()).messages.find((m) => m.message.method === "tools/call" && m.message.params.name === "cancel_run");
  check(Boolean(cancelCall) && cancelCall.message.params.arguments.confirm === undefined, "Cancel called cancel_run without confirm");
  check(cancelText.length > 0, `the view shows the server's answer to cancel: "${cancelText}"`);
  check(consoleErrors.length === 0, `no console errors in the run view${consoleErrors.length ? `: ${consoleErrors.join(" | ")}` : ""}`);

  // ---- negative self-checks: the same assertions must fail without an image or metrics -------
  for (const [what, strip] of [
    ["the image artifact removed", (r) => { r.artifacts.items = r.artifacts.items.filter((a) => !a.media_type.startsWith("image/")); }],
    ["the metrics removed", (r) => { r.reported = {}; }],
  ]) {
    tamper = (name, res) => {
      if (name !== "get_run_result") return res;
      const copy = JSON.parse(JSON.stringify(res));
      if (copy.structuredContent?.result) strip(copy.structuredContent.result);
      copy.content = [{ type: "text", text: JSON.stringify(copy.structuredContent) }];
      return copy;
    };
    const tampered = await mount("get_run_result", { run_id: runId }, await serve("tools/call", { name: "get_run_result", arguments: { run_id: runId, wait_s: 0 } }));
    await waitFor(tampered.frame, () => document.querySelectorAll("#artifacts tbody tr").length > 0 && document.querySelectorAll("#tables .table-block").length > 0, null, `the tampered view (${what})`);
    const s = await structure(tampered.frame);
    const expected = what.includes("image") ? result.artifacts.items.filter((a) => !a.media_type.startsWith("image/")).length : result.artifacts.items.length;
    const found = runProblems(s, await hostLog(), { artifacts: expected });
    check(found.length > 0, `self-check: with ${what} the run assertions fail (${found.join("; ") || "they passed!"})`);
    tamper = null;
  }

  // ---- the campaign -------------------------------------------------------------------------
  const c = await mount("start_campaign", campaignArgs, campaign);
  const campaignDone = () => document.querySelectorAll("#campaign-table tbody tr").length > 0
    && ["succeeded", "completed_with_failures", "cancelled"].includes(document.getElementById("state").dataset.state);
  await waitFor(c.frame, campaignDone, null, "the campaign view");
  const campaignView = await structure(c.frame);
  const campaignLog = await hostLog();
  writeFileSync(join(OUT, "campaign-viewer.json"), `${JSON.stringify(campaignView, null, 2)}\n`);
  await settled(c.frame);
  await c.handle.screenshot({ path: join(OUT, "campaign-viewer.png") });
  check(campaignView.state === "succeeded", `the campaign succeeded (${campaignView.state})`);
  check(campaignView.campaignRows === 2, `the campaign table has a row per item (${campaignView.campaignRows})`);
  check(campaignView.chartBars === 2, `the chart has a bar per item (${campaignView.chartBars})`);
  check(campaignView.csp.length === 0, "no CSP violation in the campaign view");
  check(!campaignLog.viewLogs.some((l) => l.level === "error"), "the campaign view logged no errors");
  check(campaignLog.messages.some((m) => m.message.method === "tools/call" && m.message.params.name === "get_campaign_status"), "the view polled get_campaign_status");
  check(consoleErrors.length === 0, `no console errors in the campaign view${consoleErrors.length ? `: ${consoleErrors.join(" | ")}` : ""}`);
} catch (e) {
  failures.push(e.stack || String(e));
  console.log(`FAIL ${e.stack || e}`);
} finally {
  await browser?.close().catch(() => {});
  httpServer?.close();
  await client.close().catch(() => {});
  rmSync(scratch, { recursive: true, force: true });
}

say(`${failures.length ? "FAILED" : "passed"} in ${((Date.now() - t0) / 1000).toFixed(1)}s; screenshots in ${OUT}`);
if (failures.length) {
  console.log(`server stderr (tail):\n${serverStderr.slice(-3000)}`);
  process.exit(1);
}

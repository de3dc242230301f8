"use strict";
// The scimcp run viewer, an MCP App View (io.modelcontextprotocol/ui, 2026-01-26). It talks
// only to its host, by JSON-RPC over postMessage: ui/initialize, then the tool's input and
// result as notifications; everything else it shows it asks the host for with tools/call
// and resources/read, which the host passes to the scimcp server. No network, no eval, no
// innerHTML: every value is placed with textContent, so nothing a run wrote can run here.
(() => {
  const APPS_PROTOCOL = "2026-01-26";
  const POLL_MS = 1500;
  const TABLE_ROWS = 10;
  const MAX_IMAGES = 12;
  const MAX_TABLES = 4;
  const RASTER = ["image/png", "image/jpeg", "image/gif", "image/webp"];
  const RUN_ENDED = ["succeeded", "partial_failure", "failed", "cancelled"];
  const CAMPAIGN_LIVE = ["running", "cancelling"];

  const $ = (id) => document.getElementById(id);
  let nextId = 1;
  const pending = new Map();
  // What is shown: {kind: "run"|"campaign", id}; a newer tool result replaces it.
  let shown = null;
  let generation = 0;

  // ---- the protocol ------------------------------------------------------------------
  function send(message) {
    window.parent.postMessage(message, "*");
  }

  function request(method, params) {
    const id = nextId++;
    send({ jsonrpc: "2.0", id, method, params });
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject, method }));
  }

  function notify(method, params) {
    send({ jsonrpc: "2.0", method, params });
  }

  function log(level, text) {
    notify("notifications/message", { level, logger: "scimcp-viewer", data: text });
  }

  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return;
    const msg = event.data;
    if (!msg || typeof msg !== "object" || msg.jsonrpc !== "2.0") return;
    if (msg.method === undefined && msg.id !== undefined) {
      const waiter = pending.get(msg.id);
      if (!waiter) return;
      pending.delete(msg.id);
      if (msg.error) {
        waiter.reject(new Error(`${waiter.method}: ${msg.error.message || "the host refused"}`));
      } else {
        waiter.resolve(msg.result);
      }
      return;
    }
    if (typeof msg.method === "string") onHostMessage(msg);
  });

  function onHostMessage(msg) {
    const params = msg.params || {};
    switch (msg.method) {
      case "ui/notifications/tool-input":
        onToolInput(params.arguments || {});
        break;
      case "ui/notifications/tool-input-partial":
        break;
      case "ui/notifications/tool-result":
        show(params).catch(fail);
        break;
      case "ui/notifications/tool-cancelled":
        setNotice(`The tool call was cancelled${params.reason ? `: ${params.reason}` : ""}.`);
        break;
      case "ui/notifications/host-context-changed":
        break;
      case "ui/resource-teardown":
        stopFollowing();
        if (msg.id !== undefined) send({ jsonrpc: "2.0", id: msg.id, result: {} });
        break;
      case "ping":
        if (msg.id !== undefined) send({ jsonrpc: "2.0", id: msg.id, result: {} });
        break;
      default:
        if (msg.id !== undefined) {
          send({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: `the viewer has no method ${msg.method}` } });
        }
    }
  }

  // CSP violations are reported to the host, so a host (and the browser test) sees them.
  document.addEventListener("securitypolicyviolation", (e) => {
    log("error", `CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || "inline"}`);
  });

  async function initialize() {
    const reply = await request("ui/initialize", {
      appInfo: { name: "scimcp-run-viewer", version: "1" },
      appCapabilities: {},
      protocolVersion: APPS_PROTOCOL,
    });
    notify("ui/notifications/initialized", {});
    new ResizeObserver(reportSize).observe(document.body);
    const host = reply && reply.hostInfo ? `${reply.hostInfo.name || "host"}` : "host";
    document.body.dataset.host = host;
    reportSize();
  }

  // The height the content needs (the body's box, not the viewport's), sent when it changes,
  // so the host can size the frame to it.
  let lastHeight = -1;
  function reportSize() {
    const height = Math.ceil(document.body.getBoundingClientRect().height
      + parseFloat(getComputedStyle(document.body).marginTop) + parseFloat(getComputedStyle(document.body).marginBottom));
    if (height === lastHeight) return;
    lastHeight = height;
    notify("ui/notifications/size-changed", { width: document.documentElement.scrollWidth, height });
  }

  // ---- tools through the host --------------------------------------------------------
  async function callTool(name, args) {
    const result = await request("tools/call", { name, arguments: args });
    const data = structured(result);
    if (result && result.isError) {
      const err = data && data.error ? data.error : {};
      throw new Error(`${name}: ${err.message || textOf(result) || "failed"}${err.hint ? ` (${err.hint})` : ""}`);
    }
    return data;
  }

  function textOf(result) {
    const block = (result && result.content || []).find((c) => c.type === "text");
    return block ? block.text : "";
  }

  // The tool's structured content, or its JSON text for a host that passes only content.
  function structured(result) {
    if (!result) return null;
    if (result.structuredContent) return result.structuredContent;
    try {
      return JSON.parse(textOf(result));
    } catch {
      return null;
    }
  }

  async function readResource(uri) {
    const reply = await request("resources/read", { uri });
    const contents = (reply && reply.contents) || [];
    if (!contents.length) throw new Error(`resources/read ${uri}: no contents`);
    return contents[0];
  }

  // ---- what arrives ------------------------------------------------------------------
  function onToolInput(args) {
    if (args.campaign_id) setTitle(`Campaign ${args.campaign_id}`);
    else if (args.run_id) setTitle(`Run ${args.run_id}`);
    else if (args.workflow) setTitle(`Starting ${args.workflow}`);
    setNotice("Waiting for the tool's answer…");
  }

  async function show(result) {
    const data = structured(result);
    if (result && result.isError) {
      const err = data && data.error ? data.error : {};
      setState("failed", "error");
      setNotice(err.message || textOf(result) || "the tool failed", true);
      return;
    }
    if (!data) {
      setNotice("The tool's answer carries no structured content to show.");
      return;
    }
    if (data.campaign_id) {
      await follow("campaign", data.campaign_id);
    } else if (data.run_id) {
      await follow("run", data.run_id);
    } else if (data.started === false) {
      setTitle(`Preview${data.preview && data.preview.workflow ? ` of ${data.preview.workflow}` : ""}`);
      setState("waiting", "not started");
      setNotice(data.next_action || "Nothing was started.");
    } else {
      setNotice("Nothing to show for this answer.");
    }
  }

  function stopFollowing() {
    generation++;
  }

  async function follow(kind, id) {
    stopFollowing();
    const mine = generation;
    shown = { kind, id };
    resetSections();
    setTitle(`${kind === "run" ? "Run" : "Campaign"} ${id}`);
    const cancel = $("cancel");
    cancel.hidden = false;
    cancel.disabled = false;
    cancel.textContent = kind === "run" ? "Cancel run" : "Cancel campaign";
    if (kind === "run") await followRun(id, mine);
    else await followCampaign(id, mine);
  }

  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  // ---- a run -------------------------------------------------------------------------
  async function followRun(runId, mine) {
    for (;;) {
      const status = await callTool("get_run_status", { run_id: runId });
      if (mine !== generation) return;
      setState(status.state);
      setProgress(status.message || (status.state === "queued" ? "queued" : ""));
      if (RUN_ENDED.includes(status.state)) break;
      await sleep(POLL_MS);
      if (mine !== generation) return;
    }
    const answer = await callTool("get_run_result", { run_id: runId, wait_s: 0 });
    if (mine !== generation) return;
    if (!answer.result) {
      const status = answer.status || {};
      setNotice(`No published result: ${status.reason || ""} ${status.message || answer.next_action || ""}`.trim(), true);
      return;
    }
    await renderRun(answer.result, mine);
  }

  async function renderRun(result, mine) {
    setState(result.state);
    const took = result.duration_ms !== undefined ? ` in ${(result.duration_ms / 1000).toFixed(1)} s` : "";
    setProgress(`${result.workflow}: ${result.state.replace(/_/g, " ")}${took}${result.message ? ` (${result.message})` : ""}`);
    renderMetrics(result.reported || {});
    const artifacts = (result.artifacts && result.artifacts.items) || [];
    renderArtifacts(result.artifacts || { items: [] });
    await renderImages(result.run_id, artifacts, mine);
    await renderTables(result.run_id, artifacts, mine);
    reportSize();
  }

  function renderMetrics(reported) {
    const body = $("metrics").tBodies[0];
    body.replaceChildren();
    for (const [artifact, values] of Object.entries(reported)) {
      for (const [key, value] of Object.entries(values || {})) {
        body.append(row([artifact, key, formatValue(value)]));
      }
    }
    $("metrics-section").hidden = body.rows.length === 0;
  }

  function renderArtifacts(page) {
    const body = $("artifacts").tBodies[0];
    body.replaceChildren();
    for (const a of page.items || []) {
      const tr = row([a.path, a.media_type, formatBytes(a.size_bytes), a.sha256], [false, false, true, false]);
      tr.cells[3].className = "hash";
      tr.dataset.sha256 = a.sha256;
      body.append(tr);
    }
    $("artifacts-section").hidden = body.rows.length === 0;
    const total = page.total !== undefined ? page.total : body.rows.length;
    $("artifacts-page").textContent = total > body.rows.length ? `${body.rows.length} of ${total} artifacts shown (get_run_result pages the rest)` : "";
  }

  function artifactUri(runId, a) {
    const under = a.base === "work" ? "work" : "artifacts";
    const encoded = a.path.split("/").map((s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)).join("/");
    return `scimcp://runs/${runId}/${under}/${encoded}`;
  }

  const mediaBase = (t) => String(t || "").split(";")[0].trim().toLowerCase();

  async function renderImages(runId, artifacts, mine) {
    const box = $("images");
    box.replaceChildren();
    const images = artifacts.filter((a) => RASTER.includes(mediaBase(a.media_type)) || mediaBase(a.media_type) === "image/svg+xml").slice(0, MAX_IMAGES);
    for (const a of images) {
      const figure = document.createElement("figure");
      const caption = document.createElement("figcaption");
      caption.textContent = `${a.path} (${formatBytes(a.size_bytes)})`;
      try {
        const contents = await readResource(artifactUri(runId, a));
        if (mine !== generation) return;
        const url = dataUrl(a, contents);
        if (url) {
          const img = document.createElement("img");
          img.alt = a.path;
          img.src = url;
          img.addEventListener("load", reportSize);
          figure.append(img);
        } else {
          caption.textContent += `: not sent by the server (${describedWhy(contents)})`;
        }
      } catch (e) {
        caption.textContent += `: ${e.message}`;
        caption.classList.add("error");
      }
      figure.append(caption);
      box.append(figure);
    }
    $("images-section").hidden = images.length === 0;
  }

  function dataUrl(a, contents) {
    const type = mediaBase(contents.mimeType || a.media_type);
    if (typeof contents.blob === "string" && type.startsWith("image/")) return `data:${type};base64,${contents.blob}`;
    if (typeof contents.text === "string" && type === "image/svg+xml") return `data:image/svg+xml;base64,${base64Utf8(contents.text)}`;
    return null;
  }

  function describedWhy(contents) {
    try {
      return JSON.parse(contents.text).why || "described only";
    } catch {
      return "described only";
    }
  }

  function base64Utf8(text) {
    let binary = "";
    for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
    return btoa(binary);
  }

  async function renderTables(runId, artifacts, mine) {
    const box = $("tables");
    box.replaceChildren();
    const tables = artifacts.filter((a) => {
      const t = mediaBase(a.media_type);
      return t === "text/csv" || t === "text/tab-separated-values" || /\.(csv|tsv)$/i.test(a.path);
    }).slice(0, MAX_TABLES);
    for (const a of tables) {
      const block = document.createElement("div");
      block.className = "table-block";
      block.dataset.path = a.path;
      const title = document.createElement("h3");
      title.className = "line";
      title.textContent = a.path;
      block.append(title);
      try {
        const contents = await readResource(artifactUri(runId, a));
        if (mine !== generation) return;
        if (typeof contents.text !== "string" || mediaBase(contents.mimeType) === "application/json") {
          title.textContent += `: not sent by the server (${describedWhy(contents)})`;
        } else {
          const sep = /\.tsv$/i.test(a.path) || mediaBase(a.media_type) === "text/tab-separated-values" ? "\t" : ",";
          pagedTable(block, parseDelimited(contents.text, sep));
        }
      } catch (e) {
        title.textContent += `: ${e.message}`;
        title.classList.add("error");
      }
      box.append(block);
    }
    $("tables-section").hidden = tables.length === 0;
  }

  // RFC 4180 CSV (quoted fields, doubled quotes, CRLF or LF).
  function parseDelimited(text, sep) {
    const rows = [];
    let row = [];
    let field = "";
    let quoted = false;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (quoted) {
        if (c === '"' && text[i + 1] === '"') { field += '"'; i++; }
        else if (c === '"') quoted = false;
        else field += c;
      } else if (c === '"' && field === "") quoted = true;
      else if (c === sep) { row.push(field); field = ""; }
      else if (c === "\n" || c === "\r") {
        if (c === "\r" && text[i + 1] === "\n") i++;
        row.push(field); field = "";
        rows.push(row); row = [];
      } else field += c;
    }
    if (field !== "" || row.length) { row.push(field); rows.push(row); }
    return rows;
  }

  function pagedTable(block, rows) {
    const [header, ...data] = rows;
    const table = document.createElement("table");
    const head = table.createTHead().insertRow();
    for (const h of header || []) {
      const th = document.createElement("th");
      th.textContent = h;
      head.append(th);
    }
    const body = table.createTBody();
    const pager = document.createElement("div");
    pager.className = "pager";
    const prev = button("Prev");
    const next = button("Next");
    const where = document.createElement("span");
    pager.append(prev, where, next);
    let start = 0;
    const draw = () => {
      body.replaceChildren();
      for (const r of data.slice(start, start + TABLE_ROWS)) {
        body.append(row(r, r.map(isNumeric)));
      }
      const end = Math.min(start + TABLE_ROWS, data.length);
      where.textContent = data.length ? `rows ${start + 1}–${end} of ${data.length}` : "no rows";
      prev.disabled = start === 0;
      next.disabled = end >= data.length;
      reportSize();
    };
    prev.addEventListener("click", () => { start = Math.max(0, start - TABLE_ROWS); draw(); });
    next.addEventListener("click", () => { if (start + TABLE_ROWS < data.length) start += TABLE_ROWS; draw(); });
    block.append(table, pager);
    draw();
  }

  // ---- a campaign --------------------------------------------------------------------
  async function followCampaign(campaignId, mine) {
    for (;;) {
      const status = await callTool("get_campaign_status", { campaign_id: campaignId });
      if (mine !== generation) return;
      setState(status.state);
      const c = status.counts;
      const ended = c.succeeded + c.partial_failure + c.failed + c.cancelled;
      setProgress(`${status.workflow}: ${ended} of ${c.total} items ended (${c.succeeded} succeeded, ${c.running} running, ${c.queued + c.waiting} waiting, ${c.failed + c.partial_failure} failed, ${c.cancelled} cancelled)`);
      setBar(c.total ? ended / c.total : 0);
      if (!CAMPAIGN_LIVE.includes(status.state)) break;
      await sleep(POLL_MS);
      if (mine !== generation) return;
    }
    await campaignPage(campaignId, 0, mine);
  }

  async function campaignPage(campaignId, offset, mine) {
    const answer = await callTool("get_campaign_result", { campaign_id: campaignId, wait_s: 0, offset, limit: 20 });
    if (mine !== generation) return;
    setState(answer.state);
    renderCampaign(campaignId, answer.table, mine);
    reportSize();
  }

  function renderCampaign(campaignId, table, mine) {
    const columns = table.columns || [];
    const page = table.rows || { items: [] };
    const items = page.items || [];
    const thead = $("campaign-table").tHead;
    thead.replaceChildren();
    const head = thead.insertRow();
    for (const h of ["item", "state", "run", ...columns]) {
      const th = document.createElement("th");
      th.textContent = h;
      head.append(th);
    }
    const body = $("campaign-table").tBodies[0];
    body.replaceChildren();
    for (const r of items) {
      const cells = [String(r.index), r.state + (r.error ? `: ${r.error}` : ""), r.run_id || "", ...(r.values || []).map(formatValue)];
      body.append(row(cells, [true, false, false, ...(r.values || []).map((v) => typeof v === "number")]));
    }
    // Paging through the rows, each page asked of the server.
    const pager = $("campaign-page");
    pager.replaceChildren();
    const offset = page.offset || 0;
    if (page.truncated) {
      const prev = button("Prev");
      const next = button("Next");
      prev.disabled = offset === 0;
      next.disabled = page.next_offset === undefined || page.next_offset === null;
      prev.addEventListener("click", () => campaignPage(campaignId, Math.max(0, offset - (page.limit || 20)), mine).catch(fail));
      next.addEventListener("click", () => campaignPage(campaignId, page.next_offset, mine).catch(fail));
      const where = document.createElement("span");
      where.textContent = ` rows ${offset + 1}–${offset + items.length} of ${page.total} `;
      pager.append(prev, where, next);
    }
    renderChart(columns, items, table.summary || []);
    $("campaign-section").hidden = false;
  }

  // A bar per item of the first numeric column (the summary says which have numbers).
  function renderChart(columns, items, summary) {
    const chart = $("chart");
    chart.replaceChildren();
    const numeric = summary.find((s) => s.count > 0 && s.max !== undefined && s.max !== null);
    if (!numeric) return;
    const at = columns.indexOf(numeric.column);
    // Each bar is named by its item and, when there is one, the item's first text value
    // (an estimator's name, say).
    const named = columns.findIndex((_, i) => items.some((r) => typeof (r.values || [])[i] === "string"));
    const label = (r) => `#${r.index}${named >= 0 && typeof r.values[named] === "string" ? ` ${r.values[named].slice(0, 28)}` : ""}`;
    const bars = items.map((r) => ({ label: label(r), value: (r.values || [])[at] })).filter((b) => typeof b.value === "number");
    if (!bars.length) return;
    const NS = "http://www.w3.org/2000/svg";
    const width = 560;
    const rowH = 20;
    const labelW = Math.min(200, 12 + 6.5 * Math.max(...bars.map((b) => b.label.length)));
    const valueW = 90;
    const height = bars.length * rowH + 24;
    const max = Math.max(...bars.map((b) => Math.abs(b.value))) || 1;
    const svg = document.createElementNS(NS, "svg");
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    svg.setAttribute("width", String(width));
    svg.setAttribute("height", String(height));
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", `${numeric.column} per item`);
    const title = document.createElementNS(NS, "text");
    title.setAttribute("x", "0");
    title.setAttribute("y", "12");
    title.textContent = `${numeric.column} per item (mean ${formatValue(numeric.mean)})`;
    svg.append(title);
    bars.forEach((b, i) => {
      const y = 20 + i * rowH;
      const label = document.createElementNS(NS, "text");
      label.setAttribute("x", "0");
      label.setAttribute("y", String(y + 13));
      label.textContent = b.label;
      const rect = document.createElementNS(NS, "rect");
      rect.setAttribute("class", "bar-rect");
      rect.setAttribute("x", String(labelW));
      rect.setAttribute("y", String(y + 3));
      rect.setAttribute("height", String(rowH - 6));
      rect.setAttribute("width", String(Math.max(1, (Math.abs(b.value) / max) * (width - labelW - valueW))));
      const value = document.createElementNS(NS, "text");
      value.setAttribute("x", String(labelW + Math.max(1, (Math.abs(b.value) / max) * (width - labelW - valueW)) + 4));
      value.setAttribute("y", String(y + 13));
      value.textContent = formatValue(b.value);
      svg.append(label, rect, value);
    });
    chart.append(svg);
  }

  // ---- cancel ------------------------------------------------------------------------
  // Asked of the server without `confirm`: the server's own confirmation (a preview to
  // confirm, or elicitation in the client) is what asks the person. Its answer is shown.
  $("cancel").addEventListener("click", async () => {
    if (!shown) return;
    const cancel = $("cancel");
    cancel.disabled = true;
    try {
      const answer = shown.kind === "run"
        ? await callTool("cancel_run", { run_id: shown.id })
        : await callTool("cancel_campaign", { campaign_id: shown.id });
      setAnswer(answer.message || JSON.stringify(answer));
      if (answer.state) setState(answer.state);
    } catch (e) {
      setAnswer(e.message, true);
    } finally {
      cancel.disabled = false;
    }
  });

  // ---- small helpers -----------------------------------------------------------------
  function resetSections() {
    for (const id of ["metrics-section", "images-section", "tables-section", "artifacts-section", "campaign-section", "progress-bar", "answer"]) $(id).hidden = true;
    setNotice("");
    setProgress("");
  }

  function row(cells, numeric) {
    const tr = document.createElement("tr");
    cells.forEach((text, i) => {
      const td = tr.insertCell();
      td.textContent = text;
      if (numeric && numeric[i]) td.className = "num";
    });
    return tr;
  }

  function button(label) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = label;
    return b;
  }

  function isNumeric(text) {
    return text !== "" && !Number.isNaN(Number(text));
  }

  function formatValue(v) {
    if (v === null || v === undefined) return "—";
    if (typeof v === "number") return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(6)));
    if (typeof v === "string") return v;
    const text = JSON.stringify(v);
    return text.length > 200 ? `${text.slice(0, 197)}…` : text;
  }

  function formatBytes(n) {
    if (typeof n !== "number") return "";
    if (n < 1024) return `${n} B`;
    if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
    return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  }

  function setTitle(text) {
    $("title").textContent = text;
  }

  function setState(state, label) {
    const badge = $("state");
    badge.dataset.state = state;
    badge.textContent = label || String(state).replace(/_/g, " ");
  }

  function setProgress(text) {
    $("progress").textContent = text;
  }

  function setBar(fraction) {
    $("progress-bar").hidden = false;
    $("progress-fill").style.width = `${Math.round(fraction * 100)}%`;
  }

  function setNotice(text, error) {
    const n = $("notice");
    n.textContent = text;
    n.classList.toggle("error", Boolean(error));
  }

  function setAnswer(text, error) {
    const a = $("answer");
    a.hidden = false;
    a.textContent = text;
    a.classList.toggle("error", Boolean(error));
    reportSize();
  }

  function fail(e) {
    setNotice(e && e.message ? e.message : String(e), true);
    log("error", e && e.message ? e.message : String(e));
  }

  initialize().catch(fail);
})();

"use strict";
// The host side of MCP Apps (2026-01-26) for the browser test: renders a View's HTML in a
// sandboxed iframe (scripts only, opaque origin: the View shares nothing with this page),
// with a CSP built from the resource's `_meta.ui.csp` as the spec builds it, answers
// `ui/initialize`, sends the tool's input and result once the View says it is initialized,
// and passes the View's `tools/call` and `resources/read` to the real scimcp server through
// `window.mcp` (a function the Node test exposes, which holds the MCP client). Everything
// that crosses is recorded in `window.hostLog` for the test's assertions.
(() => {
  const APPS_PROTOCOL = "2026-01-26";
  const PROXIED = ["tools/call", "resources/read"];
  window.hostLog = { messages: [], viewLogs: [], errors: [], initialized: false, sentBeforeInitialized: 0 };

  // The spec's policy: its defaults, widened only by declared domains (scimcp declares none).
  function policyFor(ui) {
    const csp = (ui && ui.csp) || {};
    const list = (xs) => (xs && xs.length ? ` ${xs.join(" ")}` : "");
    return [
      "default-src 'none'",
      `script-src 'self' 'unsafe-inline'${list(csp.resourceDomains)}`,
      `style-src 'self' 'unsafe-inline'${list(csp.resourceDomains)}`,
      `img-src 'self' data:${list(csp.resourceDomains)}`,
      `media-src 'self' data:${list(csp.resourceDomains)}`,
      `font-src 'self'${list(csp.resourceDomains)}`,
      `connect-src ${csp.connectDomains && csp.connectDomains.length ? csp.connectDomains.join(" ") : "'none'"}`,
      `frame-src ${csp.frameDomains && csp.frameDomains.length ? csp.frameDomains.join(" ") : "'none'"}`,
      `base-uri ${csp.baseUriDomains && csp.baseUriDomains.length ? csp.baseUriDomains.join(" ") : "'self'"}`,
      "object-src 'none'",
    ].join("; ");
  }

  function withPolicy(html, policy) {
    const meta = `<meta http-equiv="Content-Security-Policy" content="${policy}">`;
    return html.replace(/<head>/i, (head) => `${head}${meta}`);
  }

  // Mount `html` (the resource's text) and play the host for one tool call.
  window.mountView = (html, ui, toolName, toolArguments, toolResult) => {
    const box = document.getElementById("frame-box");
    box.replaceChildren();
    document.getElementById("what").textContent = `scimcp viewer test host: ${toolName}`;
    const frame = document.createElement("iframe");
    frame.setAttribute("sandbox", "allow-scripts");
    frame.setAttribute("title", "scimcp run viewer");
    const log = window.hostLog;
    log.messages = [];
    log.viewLogs = [];
    log.errors = [];
    log.initialized = false;
    log.sentBeforeInitialized = 0;
    const post = (message) => {
      if (!log.initialized && !(message.id !== undefined && message.method === undefined)) log.sentBeforeInitialized++;
      log.messages.push({ dir: "host→view", message });
      frame.contentWindow.postMessage(message, "*");
    };
    const onMessage = async (event) => {
      if (event.source !== frame.contentWindow) return;
      const msg = event.data;
      if (!msg || msg.jsonrpc !== "2.0") return;
      log.messages.push({ dir: "view→host", message: msg });
      const reply = (result) => post({ jsonrpc: "2.0", id: msg.id, result });
      const refuse = (code, message) => post({ jsonrpc: "2.0", id: msg.id, error: { code, message } });
      switch (msg.method) {
        case "ui/initialize":
          reply({
            protocolVersion: APPS_PROTOCOL,
            hostInfo: { name: "scimcp-browser-test", version: "1" },
            hostCapabilities: { serverTools: {}, serverResources: {}, logging: {} },
            hostContext: { theme: "light", displayMode: "inline", locale: "en" },
          });
          return;
        case "ui/notifications/initialized":
          log.initialized = true;
          post({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: toolArguments } });
          post({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: toolResult });
          return;
        case "ui/notifications/size-changed":
          if (msg.params && msg.params.height) frame.style.height = `${Math.min(4000, Math.max(200, msg.params.height + 8))}px`;
          return;
        case "notifications/message":
          log.viewLogs.push(msg.params);
          return;
        case "ping":
          reply({});
          return;
        default:
          if (PROXIED.includes(msg.method)) {
            try {
              reply(await window.mcp(msg.method, msg.params));
            } catch (e) {
              log.errors.push(`${msg.method}: ${e.message || e}`);
              refuse(-32603, String(e.message || e));
            }
          } else if (msg.id !== undefined) {
            refuse(-32601, `the test host does not offer ${msg.method}`);
          }
      }
    };
    window.onmessage = onMessage;
    frame.srcdoc = withPolicy(html, policyFor(ui));
    box.append(frame);
  };
})();

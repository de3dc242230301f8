// A line-driven MCP client on the official TypeScript SDK (@modelcontextprotocol/sdk,
// pinned in package.json / package-lock.json), for scimcp's 2025-11-25 tasks tests
// (tests/tests/it/tasks_2025.rs). The SDK speaks 2025-11-25 and its experimental tasks:
// `client.experimental.tasks` sends `tools/call` with `params.task` for a tool listed with
// `execution.taskSupport`, then `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`.
//
// The test writes one JSON command per line on stdin and reads one JSON answer per line:
//   {"op": "connect", "server": {command, args, env, cwd}} | {"op": "connect", "url"}
//                                         -> protocol version, capabilities
//   {"op": "tools"}                       -> each tool's `execution` as the SDK listed it
//   {"op": "start", "tool", "args"}       -> the first message of callToolStream
//                                            ({"kind": "taskCreated", "task"} or a result)
//   {"op": "stream", "tool", "args"}      -> every message of callToolStream, to the end
//   {"op": "get" | "result" | "cancel", "taskId"}, {"op": "list", "cursor"?}
//   {"op": "connect", …, "elicit": "accept" | "decline"}  -> declares form elicitation
//   {"op": "answer", "elicit": "accept" | "decline" | "cancel"}  -> how later forms are answered
//   {"op": "forms"}                       -> the messages of the forms asked since the last
//   {"op": "statuses"}                    -> the notifications/tasks/status since the last
//   {"op": "close"}, {"op": "quit"}
// An SDK or protocol error answers {"error": {"code", "message"}}.
//
// The SDK is loaded from SCIMCP_SDK_TS (a directory holding node_modules, provisioned by
// scripts/sdk-harness.sh into target/sdk-ts), so this file needs no node_modules beside it.

import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = process.env.SCIMCP_SDK_TS;
if (!root) {
    process.stderr.write('driver.mjs: SCIMCP_SDK_TS must name the directory holding the SDK\'s node_modules (scripts/sdk-harness.sh)\n');
    process.exit(2);
}
const sdk = (path) => import(pathToFileURL(join(root, 'node_modules/@modelcontextprotocol/sdk/dist/esm', path)).href);
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
const { CallToolResultSchema, ElicitRequestSchema, TaskStatusNotificationSchema } = await sdk('types.js');

let client = null;
// How the person answers the server's forms (`connect` with `elicit`, then `answer`), and
// the messages of the forms asked since the last `forms`.
let elicit = null;
let forms = [];
// The `notifications/tasks/status` received since the last `statuses`.
let statuses = [];

function failure(e) {
    return { error: { code: e?.code ?? null, message: String(e?.message ?? e) } };
}

function message(m) {
    switch (m.type) {
        case 'taskCreated':
        case 'taskStatus':
            return { kind: m.type, task: m.task };
        case 'result':
            return { kind: 'result', result: m.result };
        case 'error':
            return { kind: 'error', ...failure(m.error) };
        default:
            return { kind: m.type };
    }
}

const ops = {
    async connect(cmd) {
        if (client) await client.close();
        let version = null;
        let transport;
        if (cmd.url) {
            // The HTTP transport keeps the version for its MCP-Protocol-Version header.
            transport = new StreamableHTTPClientTransport(new URL(cmd.url));
            const set = transport.setProtocolVersion.bind(transport);
            transport.setProtocolVersion = (v) => { version = v; set(v); };
        } else {
            transport = new StdioClientTransport({ ...cmd.server, stderr: 'inherit' });
            // The SDK hands the negotiated version to a transport that takes it.
            transport.setProtocolVersion = (v) => { version = v; };
        }
        elicit = cmd.elicit ?? null;
        const capabilities = elicit ? { elicitation: { form: {} } } : {};
        client = new Client({ name: 'scimcp-tests-ts', version: '0.0.0' }, { capabilities });
        if (elicit) {
            client.setRequestHandler(ElicitRequestSchema, async (request) => {
                forms.push(request.params.message);
                return elicit === 'accept' ? { action: 'accept', content: { approve: true } } : { action: elicit };
            });
        }
        client.setNotificationHandler(TaskStatusNotificationSchema, (n) => { statuses.push(n.params); });
        await client.connect(transport);
        return { protocol_version: version, capabilities: client.getServerCapabilities() };
    },
    async tools() {
        const { tools } = await client.listTools();
        return { tools: Object.fromEntries(tools.map((t) => [t.name, t.execution ?? null])) };
    },
    async start(cmd) {
        const stream = client.experimental.tasks.callToolStream({ name: cmd.tool, arguments: cmd.args });
        const first = await stream.next();
        // Stop the SDK's own polling: the test polls, across server restarts.
        await stream.return();
        return first.done ? { kind: 'none' } : message(first.value);
    },
    async stream(cmd) {
        const messages = [];
        for await (const m of client.experimental.tasks.callToolStream({ name: cmd.tool, arguments: cmd.args })) {
            messages.push(message(m));
        }
        return { messages };
    },
    get: (cmd) => client.experimental.tasks.getTask(cmd.taskId),
    result: (cmd) => client.experimental.tasks.getTaskResult(cmd.taskId, CallToolResultSchema),
    list: (cmd) => client.experimental.tasks.listTasks(cmd.cursor),
    cancel: (cmd) => client.experimental.tasks.cancelTask(cmd.taskId),
    answer(cmd) {
        elicit = cmd.elicit;
        return {};
    },
    forms() {
        return { forms: forms.splice(0) };
    },
    statuses() {
        return { statuses: statuses.splice(0) };
    },
    async close() {
        if (client) await client.close();
        client = null;
        return {};
    },
};

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
    const cmd = JSON.parse(line);
    if (cmd.op === 'quit') break;
    let answer;
    try {
        const op = ops[cmd.op];
        answer = op ? await op(cmd) : { error: { code: null, message: `unknown op ${cmd.op}` } };
    } catch (e) {
        answer = failure(e);
    }
    process.stdout.write(JSON.stringify(answer) + '\n');
}
if (client) await client.close();
process.exit(0);

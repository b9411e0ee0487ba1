/**
 * The react-chat demo: `npm run demo:react`, then open http://localhost:5174. A React page on
 * `useChat` (`@ai-sdk/react`), bundled with esbuild, talks to a phi-rx server through the AI SDK's
 * UI message stream (`phi-rx/ai-sdk`): streamed text, tool calls with their results, an approval
 * the page answers, stop, and a reload mid-reply that resumes. Keyless: a scripted model.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { tap } from 'rxjs';
import type { AgentEvent } from 'phi-rx';
import { agentChatRun, toUIMessages, type UIMessage } from 'phi-rx/ai-sdk';
import { UIMessageStreamHub } from 'phi-rx/ai-sdk/node';
import { demoAgent } from './agent.js';

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>phi-rx · useChat</title>
<style>body{font:15px system-ui;max-width:720px;margin:2em auto}.msg{margin:.5em 0;padding:.5em;border-radius:6px}.user{background:#eef}.assistant{background:#f4f4f4}.tool{font:13px monospace;border-left:3px solid #999;padding-left:.5em;margin:.3em 0}</style>
</head><body><div id="root"></div><script type="module" src="/app.js"></script></body></html>`;

/** Bundles the page for the browser (React in production mode). */
export async function bundlePage(): Promise<string> {
  const result = await build({
    entryPoints: [fileURLToPath(new URL('./page.ts', import.meta.url))],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    logLevel: 'silent',
    minify: true,
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  return result.outputFiles[0]!.text;
}

export interface ReactChatServer {
  readonly url: string;
  readonly hub: UIMessageStreamHub;
  close(): Promise<void>;
}

export async function startReactChatServer(options: { port?: number; chunkDelayMs?: number } = {}): Promise<ReactChatServer> {
  const script = await bundlePage();
  const saved = new Map<string, UIMessage[]>(); // chat id -> its messages (what a reload starts from)
  const hub = new UIMessageStreamHub({
    authorize: 'allow-all', // a keyless local demo; a real server checks who owns the chat
    run: ({ chatId, messages, uiMessages, messageId }) => {
      saved.set(chatId, uiMessages);
      const run = agentChatRun(demoAgent(options), messages);
      // once the run is over, its answer joins the saved chat (as useChat shows it: same message id)
      const save = (e: AgentEvent) => {
        if (e.type !== 'AgentEnd') return;
        const answer = toUIMessages(e.messages, { id: () => messageId }).filter((m) => m.role === 'assistant');
        saved.set(chatId, [...uiMessages.filter((m) => m.id !== messageId), ...answer]);
      };
      return { ...run, events$: run.events$.pipe(tap(save)) };
    },
  });
  const server = createServer((req, res) => {
    if (hub.handle(req, res)) return;
    route(req, res, script, saved);
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hub,
    close: async () => {
      hub.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function route(req: IncomingMessage, res: ServerResponse, script: string, saved: Map<string, UIMessage[]>): void {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const messages = /^\/api\/chats\/([^/]+)\/messages$/.exec(url.pathname);
  if (req.method === 'GET' && messages) {
    const body = JSON.stringify(saved.get(decodeURIComponent(messages[1]!)) ?? []);
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  } else if (req.method === 'GET' && url.pathname === '/app.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
  else if (req.method === 'GET' && url.pathname === '/') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
  else res.writeHead(404).end();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const demo = await startReactChatServer({ port: Number(process.env['PORT'] ?? 5174) });
  console.log(`react-chat demo: ${demo.url}`);
}

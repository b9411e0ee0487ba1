/**
 * A loopback model server that plays a scripted conversation turn by turn in one wire protocol.
 * Before answering request N it checks what the client sent: the path and the key, the system
 * prompt and tools on the first request, and from the second on, that the previous turn's tool
 * call and its result came back in the protocol's own shape. A request that fails a check gets a
 * 400 (which the agent loop does not retry) and the reason is kept in `problems`, so a test both
 * fails and says why. Bodies are streamed in small chunks cut at arbitrary byte boundaries
 * (fixture-server's chunking, including a cut inside a UTF-8 character).
 */
import { isDeepStrictEqual } from 'node:util';
import { startFixtureServer } from '../providers/fixture-server.js';
import type { FixtureServer, RecordedRequest } from '../providers/fixture-server.js';
import type { ScriptedTurn, WireProtocol } from './wire-protocols.js';

export interface TurnServerOptions {
  system: string;
  tools: string[];
  /** The tool output the loop should have sent back after each tool call, by call id. */
  toolOutputs: Record<string, string>;
}

export interface TurnServer {
  url: string;
  server: FixtureServer;
  /** Every check that failed, as `request N: what was wrong`. */
  problems: string[];
  close(): Promise<void>;
}

export async function startTurnServer(wire: WireProtocol, script: readonly ScriptedTurn[], options: TurnServerOptions): Promise<TurnServer> {
  const server = await startFixtureServer();
  const problems: string[] = [];
  server.fallback((request) => {
    const n = server.requests.indexOf(request);
    const found = checkRequest(wire, script, options, request, n);
    if (found.length > 0) {
      problems.push(...found.map((p) => `request ${n}: ${p}`));
      return { status: 400, body: JSON.stringify({ error: { type: 'invalid_request_error', message: found.join('; ') } }) };
    }
    return { ...wire.respond(script[n]!), chunking: { seed: n + 7, maxChunk: 48 } };
  });
  return { url: server.url, server, problems, close: () => server.close() };
}

function checkRequest(wire: WireProtocol, script: readonly ScriptedTurn[], options: TurnServerOptions, request: RecordedRequest, n: number): string[] {
  const problems: string[] = [];
  if (n >= script.length) return [`unexpected request: the script has ${script.length} turns`];
  if (request.method !== 'POST') problems.push(`method ${request.method}`);
  if (request.url !== wire.path) problems.push(`path ${request.url}, expected ${wire.path}`);
  if (!wire.authorized(request.headers)) problems.push('the key is missing or sent the wrong way');
  let body: Record<string, unknown>;
  try {
    body = request.json();
  } catch {
    return [...problems, 'the body is not JSON'];
  }
  if (wire.systemPrompt(body) !== options.system) problems.push(`system prompt ${JSON.stringify(wire.systemPrompt(body))}`);
  if (!isDeepStrictEqual(wire.declaredTools(body), options.tools)) problems.push(`tools ${JSON.stringify(wire.declaredTools(body))}`);
  if (n === 0) return problems;

  const previous = script[n - 1]!.toolCall;
  if (!previous) return [...problems, 'a request after a turn without tool calls'];
  const { call, result } = wire.lastExchange(body);
  const expectedId = wire.callId(previous.id);
  if (!call) problems.push('the previous tool call is not in the conversation');
  else {
    if (call.id !== expectedId) problems.push(`echoed call id ${call.id}, expected ${expectedId}`);
    if (call.name !== previous.name) problems.push(`echoed call name ${call.name}`);
    if (!isDeepStrictEqual(call.arguments, previous.arguments)) problems.push(`echoed call arguments ${JSON.stringify(call.arguments)}`);
    const signature = wire.callSignature?.(previous.id);
    if (call.signature !== signature) problems.push(`echoed call signature ${call.signature}, expected ${signature}`);
  }
  if (!result) problems.push('the conversation does not end with the tool result');
  else {
    if (result.id !== expectedId) problems.push(`tool result for ${result.id}, expected ${expectedId}`);
    if (result.name !== undefined && result.name !== previous.name) problems.push(`tool result name ${result.name}`);
    if (result.text !== options.toolOutputs[previous.id]) problems.push(`tool result text ${JSON.stringify(result.text)}`);
    if (result.isError) problems.push('tool result marked as an error');
  }
  return problems;
}

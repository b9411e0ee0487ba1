/** What each example prints when run with no API key (test/examples/copy-alone.test.ts). */

/** The environment variables that would make an example reach a real API: removed for the runs. */
export const KEYS = ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_API_KEY', 'PHI_RX_LIVE_MODEL', 'PHI_RX_PROVIDER', 'PHI_RX_BASE_URL'];

/** What each example must print when run as a program with no API key: proof it did its job. */
export const EXPECTED: Record<string, RegExp> = {
  'a2a.ts': /  \[calculator\] Calling multiply\n[^]*  \[calculator\] streamed "6 times 7 is 42\."; result: 6 times 7 is 42\.\ncoordinator › The calculator says 42\./,
  'agent-tool.ts': /streamed side by side: true[^\n]*\ntranscript: weather → child ended, 2 messages\ntranscript: packing → child ended, 2 messages/,
  'approval.ts': /✓ repair: approved with \{"to":"garage","amount":400\} \(agreed discount\)\n[^]*bet: Tool call "transfer" was denied: not paying gambling debts from this account\n/,
  'ag-ui.ts': /pending for the client: d1\n[^]*interrupts: tool_approval for b1\nrun 3: the user approves, the run resumes\n {2}tool: b1 → booked at Chez Ada\n {2}assistant: Done: booked at Chez Ada\./,
  'best-of-n.ts': /started 3 branches/,
  'call-tool.ts': /add\(\{ a: 2, b: 40 \}\) → 42\nadd\.validate\(\{ a: 'two' \}\) → rejected: arguments\.a:/,
  'custom-operator.ts': /model saw: \[ 'customer 42: Ada Lovelace, card \[card\], \[email\]' \]/,
  'handoffs.ts': /handoff: triage → billing \(double charge\)\nhandoff: billing → refunds \(refund A-17\)\n[^\n]*\nanswered by refunds\n[^\n]*\nanswered by refunds/,
  'live.ts': /set ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY to run against a real API/,
  'mcp.ts': /echo -> Echo: hello from phi-rx/,
  'mcp-server.ts': /ask_assistant\("What is six times seven\?"\) → You asked: "What is six times seven\?"\. The answer is 42\.\n[^]*approval asked: example-server asks to run the tool "publish" with the arguments \{"title":"Hello MCP"\}\. Approve\?\n[^]*ask_assistant\("publish Hello MCP"\) → Done: published "Hello MCP"\./,
  'models.ts': /anthropic-messages +claude-sonnet-4-5 +context 200000, \$3 \/ \$15/,
  'model-fallback.ts': /fallback: scripted\/primary-model → backup\/backup-model \(retriesExhausted: network: HTTP 503[^\n]*\)\nbackup\/backup-model › Paris, from the backup\.\nscripted\/primary-model › The primary is back\./,
  'per-turn-control.ts': /scripted\/planner-model › search\(\{"q":"Eiffel Tower height"\}\)\nwriter\/writer-model › submit\(\{"answer":"330 m"\}\)\n\[done: userStop, stopped by toolCalled\(submit\)\]/,
  'guardrails.ts': /tripped: on-topic \(not a support question\) after "[^"]*"\nagent › \[Stopped by guardrail: on-topic\]\n\[done: guardRail\]\nturned down by refund-limit\nrefund › Rejected by guardrail "refund-limit": refunds over 100 EUR need a human\n/,
  'own-loop.ts': /final: 6 messages, turn 2, note still there: true/,
  'openapi.ts': /GET http:\/\/127\.0\.0\.1:\d+\/v1\/pets\?limit=1 → 200/,
  'quickstart.ts': /agent › Pack a light jacket for Paris evenings\./,
  'record-and-replay.ts': /identical sequence: true/,
  'render.ts': /agent › Hello! Every event of this run is rendered as it arrives\.\n\n\[done: stop, 2 new messages/,
  'structured-output.ts': /corrective turn › Your answer did not match the required output schema:\n- \$\.celsius: [^\n]+\n[\s\S]*partial › \{"city":"Paris","celsius":18\}[\s\S]*output › Paris: 18°C, clear, light wind/,
  'sub-agent.ts': /\[researcher\] Tokyo/,
  'tools.ts': /Wrote \d+ B to src\/greet\.ts \(new file\)/,
  'tracing.ts': /invoke_agent coordinator\n {2}chat coordinator-model\n {2}execute_tool researcher\n {4}invoke_agent researcher/,
};

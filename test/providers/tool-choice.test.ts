/** A forced tool call (`StreamRequest.toolChoice`, what `prepareTurn` sets) in each wire protocol's request body. */
import { describe, expect, it } from 'vitest';
import { buildAnthropicRequest } from '../../src/providers/anthropic.js';
import { buildBedrockBody } from '../../src/providers/bedrock-request.js';
import { buildChatCompletionsRequest } from '../../src/providers/openai-completions.js';
import { buildGoogleBody } from '../../src/providers/google.js';
import { buildResponsesBody } from '../../src/providers/openai-responses.js';
import { anthropic, openai } from '../../src/providers/models.js';
import { bedrock, google, openaiResponses } from '../../src/providers/models-responses-gemini-bedrock.js';
import type { ModelConfig, StreamRequest, ToolChoice } from '../../src/types/provider.js';

const tools = [
  { name: 'search', description: 'Searches', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
  { name: 'submit', description: 'Submits', parameters: { type: 'object', properties: { answer: { type: 'string' } } } },
];
const request = (model: ModelConfig, toolChoice?: ToolChoice): StreamRequest => ({
  model, systemPrompt: 'be brief', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }], timestamp: 0 }], tools, thinkingLevel: 'off',
  cacheConfig: { enabled: false, strategy: { kind: 'disabled' } }, ...(toolChoice ? { toolChoice } : {}),
});

describe('toolChoice on the wire', () => {
  it('OpenAI chat completions: tool_choice "required" or the named function; absent, none sent', () => {
    const gpt = openai('gpt-4o');
    expect(buildChatCompletionsRequest(request(gpt)).tool_choice).toBeUndefined();
    expect(buildChatCompletionsRequest(request(gpt, 'required')).tool_choice).toBe('required');
    expect(buildChatCompletionsRequest(request(gpt, { tool: 'submit' })).tool_choice).toEqual({ type: 'function', function: { name: 'submit' } });
  });

  it('OpenAI responses: auto, required, or the named function', () => {
    const model = openaiResponses('gpt-5');
    expect(buildResponsesBody(request(model)).tool_choice).toBe('auto');
    expect(buildResponsesBody(request(model, 'required')).tool_choice).toBe('required');
    expect(buildResponsesBody(request(model, { tool: 'submit' })).tool_choice).toEqual({ type: 'function', name: 'submit' });
  });

  it('Anthropic: any, or the named tool', () => {
    const claude = anthropic('claude-sonnet-4-5');
    expect(buildAnthropicRequest(request(claude)).tool_choice).toBeUndefined();
    expect(buildAnthropicRequest(request(claude, 'required')).tool_choice).toEqual({ type: 'any' });
    expect(buildAnthropicRequest(request(claude, { tool: 'submit' })).tool_choice).toEqual({ type: 'tool', name: 'submit' });
  });

  it('Gemini: mode ANY, limited to the named function', () => {
    const gemini = google('gemini-2.5-flash');
    expect(buildGoogleBody(request(gemini)).toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(buildGoogleBody(request(gemini, 'required')).toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(buildGoogleBody(request(gemini, { tool: 'submit' })).toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['submit'] } });
  });

  it('Bedrock Converse: any, or the named tool', () => {
    const model = bedrock('anthropic.claude-sonnet-4-5-20250929-v1:0');
    expect(buildBedrockBody(request(model)).toolConfig?.toolChoice).toBeUndefined();
    expect(buildBedrockBody(request(model, 'required')).toolConfig?.toolChoice).toEqual({ any: {} });
    expect(buildBedrockBody(request(model, { tool: 'submit' })).toolConfig?.toolChoice).toEqual({ tool: { name: 'submit' } });
  });
});

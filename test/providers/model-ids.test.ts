import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  ANTHROPIC_MODEL_IDS, BEDROCK_MODEL_IDS, GEMINI_MODEL_IDS, OPENAI_MODEL_IDS, anthropic, bedrock, google, googleVertex, openai, openaiResponses,
  type AnthropicModelId, type BedrockModelId, type GeminiModelId, type ModelConfig, type OpenAiModelId,
} from '../../src/index.js';

const constructors: Array<[string, readonly string[], (id: string) => ModelConfig]> = [
  ['anthropic', ANTHROPIC_MODEL_IDS, (id) => anthropic(id)],
  ['openai', OPENAI_MODEL_IDS, (id) => openai(id)],
  ['openaiResponses', OPENAI_MODEL_IDS, (id) => openaiResponses(id)],
  ['google', GEMINI_MODEL_IDS, (id) => google(id)],
  ['googleVertex', GEMINI_MODEL_IDS, (id) => googleVertex(id, { project: 'p', region: 'us-central1' })],
  ['bedrock', BEDROCK_MODEL_IDS, (id) => bedrock(id)],
];

describe('typed model ids of the built-in catalogue', () => {
  for (const [name, ids, make] of constructors) {
    it(`${name}: every listed id gets the catalogue's window, limit and price`, () => {
      for (const id of ids) {
        const config = make(id);
        expect(config.id, id).toBe(id);
        expect(config.contextWindow, id).toBeGreaterThan(0);
        expect(config.cost?.input, id).toBeGreaterThan(0);
      }
    });
  }

  it('the constructors take the literal unions, and still any other string', () => {
    expectTypeOf(anthropic).parameter(0).toEqualTypeOf<AnthropicModelId>();
    expectTypeOf(openai).parameter(0).toEqualTypeOf<OpenAiModelId>();
    expectTypeOf(openaiResponses).parameter(0).toEqualTypeOf<OpenAiModelId>();
    expectTypeOf(google).parameter(0).toEqualTypeOf<GeminiModelId>();
    expectTypeOf(bedrock).parameter(0).toEqualTypeOf<BedrockModelId>();
    expectTypeOf<'claude-sonnet-4-5'>().toExtend<AnthropicModelId>();
    expectTypeOf<'my-fine-tune'>().toExtend<OpenAiModelId>();
    expect(anthropic('claude-next-preview').cost).toBeUndefined();
  });
});

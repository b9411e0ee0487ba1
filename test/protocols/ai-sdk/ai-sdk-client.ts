import { readUIMessageStream, uiMessageChunkSchema, type UIMessage as AiUIMessage, type UIMessageChunk as AiChunk } from 'ai';
import { expect } from 'vitest';
import type { UIMessageChunk } from '../../../src/protocols/ai-sdk/index.js';

/** Checks every chunk against the `ai` package's own chunk schema; fails naming the first one it rejects. */
export async function expectValidChunks(chunks: readonly UIMessageChunk[]): Promise<void> {
  const schema = uiMessageChunkSchema();
  for (const [i, chunk] of chunks.entries()) {
    const result = await schema.validate!(chunk);
    if (!result.success) expect.fail(`chunk ${i} ${JSON.stringify(chunk)} fails the ai package's uiMessageChunkSchema: ${String(result.error)}`);
  }
}

/** The assistant message `readUIMessageStream` (the `ai` package) builds from the chunks. */
export async function readMessage(chunks: readonly UIMessageChunk[], errors: unknown[] = []): Promise<AiUIMessage | undefined> {
  const stream = new ReadableStream<AiChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk as AiChunk);
      controller.close();
    },
  });
  let last: AiUIMessage | undefined;
  for await (const message of readUIMessageStream({ stream, onError: (e) => errors.push(e) })) last = message;
  return last;
}

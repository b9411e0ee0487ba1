/**
 * The react-chat demo's page: React and `useChat` from `@ai-sdk/react`, nothing of phi-rx (the
 * server speaks the AI SDK's protocol). Written with `createElement` (no JSX build step). The chat
 * id is in the URL (`?chat=`): a reload loads the chat's messages and resumes a reply under way.
 */
import { createElement as h, useState, type ReactNode } from 'react';
import { createRoot } from 'react-dom/client';
import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from 'ai';

type Part = UIMessage['parts'][number];
type ToolPart = Extract<Part, { toolCallId: string }>;

function ToolCall({ part, onAnswer }: { part: ToolPart; onAnswer: (id: string, approved: boolean) => void }): ReactNode {
  const name = part.type === 'dynamic-tool' ? part.toolName : part.type.slice(5);
  const output = part.state === 'output-available' ? (part.output as { content?: Array<{ text?: string }> }).content?.map((c) => c.text).join('') : undefined;
  return h('div', { className: 'tool', 'data-state': part.state, 'data-tool': name },
    h('span', null, `${name}(${JSON.stringify(part.input ?? {})}) — ${part.state}`),
    output !== undefined ? h('div', { className: 'result' }, output) : null,
    part.state === 'output-error' ? h('div', { className: 'error' }, part.errorText) : null,
    part.state === 'approval-requested' ? h('span', null,
      h('button', { className: 'approve', onClick: () => onAnswer(part.approval.id, true) }, 'Approve'),
      h('button', { className: 'deny', onClick: () => onAnswer(part.approval.id, false) }, 'Deny')) : null);
}

function Chat({ id, initial }: { id: string; initial: UIMessage[] }): ReactNode {
  const [input, setInput] = useState('');
  const { messages, sendMessage, status, stop, addToolApprovalResponse } = useChat({
    id,
    messages: initial,
    resume: true,
    transport: new DefaultChatTransport({ api: '/api/chat' }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const stopRun = () => {
    void stop(); // ends this page's request ...
    void fetch(`/api/chat/${encodeURIComponent(id)}/stop`, { method: 'POST' }); // ... and the run (a reload would resume it)
  };
  const answer = (approvalId: string, approved: boolean) => void addToolApprovalResponse({ id: approvalId, approved });
  const render = (part: Part, i: number): ReactNode => {
    if (part.type === 'text') return h('span', { key: i, className: 'text' }, part.text);
    if ('toolCallId' in part) return h(ToolCall, { key: i, part, onAnswer: answer });
    return null;
  };
  return h('div', null,
    messages.map((m) => h('div', { key: m.id, className: `msg ${m.role}` }, m.parts.map(render))),
    h('div', { id: 'status', 'data-status': status }, status),
    h('form', { onSubmit: (e: { preventDefault(): void }) => { e.preventDefault(); if (input.trim()) void sendMessage({ text: input }); setInput(''); } },
      h('input', { id: 'prompt', value: input, onChange: (e: { target: { value: string } }) => setInput(e.target.value), placeholder: 'Ask: weather, deploy, or anything' }),
      h('button', { id: 'send', type: 'submit', disabled: status !== 'ready' }, 'Send'),
      h('button', { id: 'stop', type: 'button', onClick: stopRun, disabled: status !== 'streaming' && status !== 'submitted' }, 'Stop')));
}

async function main(): Promise<void> {
  const url = new URL(location.href);
  let id = url.searchParams.get('chat');
  if (!id) {
    id = crypto.randomUUID();
    url.searchParams.set('chat', id);
    history.replaceState(null, '', url);
  }
  const initial = (await (await fetch(`/api/chats/${encodeURIComponent(id)}/messages`)).json()) as UIMessage[];
  createRoot(document.getElementById('root')!).render(h(Chat, { id, initial }));
}

void main();

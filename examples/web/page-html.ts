/** The demo's one HTML page; page.ts (bundled) does the rest. */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>phi-rx web demo</title>
<style>
  body { font: 15px/1.45 system-ui, sans-serif; max-width: 760px; margin: 2rem auto; padding: 0 1rem; color: #1d232b; }
  h1 { font-size: 1.3rem; margin-bottom: .2rem; }
  .sub { color: #667; margin-top: 0; }
  form { display: flex; gap: .5rem; margin: .6rem 0; }
  input { flex: 1; padding: .45rem .6rem; border: 1px solid #bcc4cf; border-radius: 6px; font: inherit; }
  button { padding: .45rem .9rem; border: 0; border-radius: 6px; background: #2f6fde; color: white; font: inherit; cursor: pointer; }
  button.danger { background: #c63d3d; }
  button:disabled { background: #aab3c0; cursor: default; }
  #status { display: inline-block; padding: .1rem .55rem; border-radius: 99px; background: #eef1f5; font-size: .85rem; }
  #status[data-status="running"] { background: #fff1c9; }
  #status[data-status="ended"] { background: #d9f2df; }
  .msg { margin: .6rem 0; padding: .55rem .75rem; border-radius: 8px; white-space: pre-wrap; }
  .user { background: #e8f0fe; }
  .assistant { background: #f3f4f6; }
  .streaming { border-left: 3px solid #2f6fde; }
  .tool { margin: .5rem 0; padding: .5rem .75rem; border: 1px solid #dde2e8; border-radius: 8px; font-size: .9rem; }
  .tool .progress { color: #556; margin: .2rem 0 0 .8rem; }
  .tool .result { margin-top: .3rem; color: #1c6b35; }
  .tool[data-status="running"] .name::after { content: ' — running…'; color: #a66b00; }
  .usage { color: #667; font-size: .8rem; }
</style>
</head>
<body>
  <h1>phi-rx in the browser</h1>
  <p class="sub">Events from a server-side agent run over SSE, folded by <code>transcript()</code>, one render per frame.</p>
  <form id="prompt-form"><input id="prompt" placeholder="Ask something" value="How do reactive agent UIs work?"><button id="send">Send</button></form>
  <div>Status: <span id="status" data-status="idle">idle</span> <span class="usage" id="usage"></span></div>
  <div id="transcript"></div>
  <form id="steer-form"><input id="steer" placeholder="Steer the run while it works"><button id="steer-send" disabled>Steer</button><button id="abort" class="danger" type="button" disabled>Abort</button></form>
  <script type="module" src="/page.js"></script>
</body>
</html>
`;

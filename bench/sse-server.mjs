// The SSE benchmark's server, in its own process so that serving costs nothing to the process
// measured: answers every POST with the ~1 MiB stream, in 16 KiB writes, and prints its port.
import http from 'node:http';
import { buildStream } from './sse-stream.mjs';

const { bytes } = buildStream();
const SLICE = 16 * 1024;

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (let i = 0; i < bytes.length; i += SLICE) res.write(bytes.subarray(i, i + SLICE));
    res.end();
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
process.on('disconnect', () => server.close());
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();

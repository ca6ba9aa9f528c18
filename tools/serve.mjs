// A minimal static file server for the demo and the browser tests: serves a folder on localhost
// with the right MIME types (application/wasm included) and the two headers that make a page
// cross-origin isolated (so that it may share wasm memory with workers: init({ numThreads })). No server
// logic: the same files work on any static host that sends those headers. Usage: node tools/serve.mjs [root] [port]
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.onnx': 'application/octet-stream',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.txt': 'text/plain; charset=utf-8',
};

/** Cross-origin isolation (SharedArrayBuffer, wasm threads): every response carries both. */
export const ISOLATION_HEADERS = {
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-embedder-policy': 'require-corp',
};

/**
 * Starts serving root; resolves to { server, url } once listening (port 0 = any free port). isolate: false
 * leaves out the cross-origin isolation headers (to test a page that has none). replaced: { [URL path]: text }
 * served instead of those files (the browser benchmark's workers, which have no import maps).
 */
export function serve(root, port = 0, host = '127.0.0.1', { isolate = true, replaced = {} } = {}) {
  const base = resolve(root);
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const headers = { 'cache-control': 'no-store', ...(isolate ? ISOLATION_HEADERS : {}) };
    if (Object.hasOwn(replaced, path)) {
      res.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream', ...headers }).end(replaced[path]);
      return;
    }
    let file = normalize(join(base, path));
    if (file !== base && !file.startsWith(base + sep)) {
      res.writeHead(403).end('forbidden');
      return;
    }
    let size;
    try {
      if (statSync(file).isDirectory()) file = join(file, 'index.html');
      size = statSync(file).size;
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found: ${path}`);
      return;
    }
    // content-length: the page shows a file's size from a HEAD request before it downloads it
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'content-length': size, ...headers });
    if (req.method === 'HEAD') res.end();
    else createReadStream(file).pipe(res);
  });
  return new Promise((ok) => server.listen(port, host, () => ok({ server, url: `http://${host}:${server.address().port}/` })));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [root = '.', port = '8080'] = process.argv.slice(2);
  const { url } = await serve(root, Number(port));
  console.log(`serving ${resolve(root)} at ${url}`);
}

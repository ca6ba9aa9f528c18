// A minimal static file server for the demo and the browser tests: serves a folder on localhost
// with the right MIME types (application/wasm included). No server logic: the same files work on
// any static host. Usage: node tools/serve.mjs [root] [port]
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

/** Starts serving root; resolves to { server, url } once listening (port 0 = any free port). */
export function serve(root, port = 0, host = '127.0.0.1') {
  const base = resolve(root);
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
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
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'content-length': size, 'cache-control': 'no-store' });
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

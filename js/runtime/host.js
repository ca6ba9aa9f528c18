// What qwasm needs from its host beyond the language: local files in Node, and the URLs of the package's own
// files (the .wasm builds, the bundled models) wherever a bundler has put its code.
//
// No module here imports a Node built-in: Node hands them over at run time (process.getBuiltinModule, Node
// 20.16+), so a browser build never sees a `node:` specifier, and no bundler has to be told to ignore one.

const nodeBuiltin = typeof process !== 'undefined' && typeof process.getBuiltinModule === 'function'
  ? (name) => process.getBuiltinModule(name)
  : null;

const isNode = typeof process !== 'undefined' && process.versions?.node != null;

/** Whether `where` (a string or URL) names a local file: a file: URL or a path, in Node (and Deno, Bun). */
export function isLocalFile(where) {
  const text = String(where);
  return isNode && (text.startsWith('file:') || !/^[a-z][a-z0-9+.-]*:/i.test(text));
}

/** Reads a local file (a path or a file: URL) as a Uint8Array. Only when isLocalFile(where). */
async function readLocalFile(where) {
  const text = String(where);
  if (nodeBuiltin === null) throw new Error('reading local files needs Node 20.16 or later (process.getBuiltinModule); pass the bytes instead');
  const { readFile } = nodeBuiltin('node:fs/promises');
  const { fileURLToPath } = nodeBuiltin('node:url');
  const bytes = await readFile(text.startsWith('file:') ? fileURLToPath(text) : text);
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * The bytes at `where`: a local file in Node, else fetched. Errors read `${who}: could not read|fetch ${what}${where}: ...`.
 */
export async function readBytes(where, who, what = '') {
  const text = String(where);
  if (isLocalFile(text)) {
    try {
      return await readLocalFile(text);
    } catch (error) {
      throw new Error(`${who}: could not read ${what}${text}: ${error.message}`, { cause: error });
    }
  }
  let response;
  try {
    response = await fetch(text);
  } catch (error) {
    throw new Error(`${who}: could not fetch ${what}${text}: ${error.message}`, { cause: error });
  }
  if (!response.ok) throw new Error(`${who}: could not fetch ${what}${text}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

// Vite 7's dev server bundles each dependency with esbuild into node_modules/.vite/deps/ and keeps every
// new URL('../../dist/x.wasm', import.meta.url) as written, so from there the URL points at
// node_modules/dist/x.wasm, outside the package, and the server answers with its index.html
// (vitejs/vite#8427; users are told to add optimizeDeps.exclude). Vite 8 rewrites such URLs to
// '../../qwasm/dist/x.wasm' itself while it bundles; this does the same for the URLs Vite 7 left.

/**
 * The URL of a package file, given the literal new URL(`../../${path}`, import.meta.url) of a module in js/<dir>/
 * (`url`) and the file's path in the package (`path`): `url`, unless it points at node_modules/<path>, where no
 * package file can be (a pre-bundling dev server moved the module to node_modules/.vite/deps/); then the file
 * in node_modules/qwasm/.
 */
export function packageFileUrl(url, path) {
  const wrong = `/node_modules/${path}`;
  if (!url.pathname.endsWith(wrong)) return url;
  return new URL(`${url.pathname.slice(0, -path.length)}qwasm/${path}${url.search}`, url);
}

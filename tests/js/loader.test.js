// The loader: SIMD probe, both builds, init() options, and errors that name what failed.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { loadBackend, simdSupported } from '../../js/runtime/wasm.js';
import { qwasm, relaxedByDefault, setup, wantSimd } from './helpers.js';

const distUrl = new URL('../../dist/', import.meta.url);

test('Node 20 passes the i32x4.dot_i16x8_s probe', () => {
  assert.equal(simdSupported(), true);
});

test('init() picks the requested build and reports it', async () => {
  const info = await setup();
  assert.equal(info.isa, wantSimd === false ? 'scalar' : relaxedByDefault ? 'wasmrelaxed' : 'wasmsimd');
  assert.match(info.source, wantSimd === false || !relaxedByDefault ? /qwasm-(simd|scalar)\.wasm$/ : /qwasm-relaxed-threads\.wasm$/);
  assert.deepEqual(await qwasm.init(), info, 'a second init() returns the same backend');
  await assert.rejects(qwasm.init({ simd: !info.simd }), /already running the (wasmsimd|wasmrelaxed|scalar) build/);
});

test('both builds load from the package directory', async () => {
  const simd = await loadBackend({ simd: true, relaxedSimd: false });
  const scalar = await loadBackend({ simd: false });
  assert.equal(simd.isa, 'wasmsimd');
  assert.equal(scalar.isa, 'scalar');
});

test('wasmPaths: a directory prefix or explicit files', async () => {
  const a = await loadBackend({ simd: false, wasmPaths: distUrl.href });
  assert.equal(a.source, new URL('qwasm-scalar.wasm', distUrl).href);
  const b = await loadBackend({ simd: true, wasmPaths: { simd: new URL('qwasm-simd.wasm', distUrl) } });
  assert.equal(b.isa, 'wasmsimd');
  const c = await loadBackend({ simd: false, wasmPaths: new URL('qwasm-scalar.wasm', distUrl).pathname.replace(/qwasm-scalar\.wasm$/, '') });
  assert.equal(c.isa, 'scalar', 'a plain filesystem directory works in Node');
});

test('wasmBinary: bytes or a compiled module', async () => {
  const bytes = readFileSync(new URL('qwasm-scalar.wasm', distUrl));
  assert.equal((await loadBackend({ wasmBinary: bytes })).isa, 'scalar');
  assert.equal((await loadBackend({ wasmBinary: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) })).isa, 'scalar');
  const module = await WebAssembly.compile(readFileSync(new URL('qwasm-simd.wasm', distUrl)));
  assert.equal((await loadBackend({ wasmBinary: module })).isa, 'wasmsimd');
});

test('a binary that cannot be loaded gives an error naming where it came from', async () => {
  await assert.rejects(loadBackend({ wasmPaths: '/no/such/dir/' }), (e) => {
    assert.match(e.message, /could not read the wasm binary at \/no\/such\/dir\/qwasm-(simd|scalar)\.wasm/);
    return true;
  });
  await assert.rejects(loadBackend({ wasmPaths: 'file:///nowhere/' }), /could not read the wasm binary at file:\/\/\/nowhere\/qwasm-/);
  await assert.rejects(loadBackend({ wasmPaths: 'http://127.0.0.1:9/x/' }), /could not fetch the wasm binary at http:\/\/127\.0\.0\.1:9\/x\/qwasm-/);
  await assert.rejects(loadBackend({ wasmBinary: new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 99]) }), /wasm binary from wasmBinary does not compile/);
  const notQwasm = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]);
  await assert.rejects(loadBackend({ wasmBinary: notQwasm }), /is not a qwasm build \(no qw_isa export\)/);
  await assert.rejects(loadBackend({ wasmBinary: 'qwasm.wasm' }), /wasmBinary must be an ArrayBuffer, a typed array or a WebAssembly.Module/);
  await assert.rejects(loadBackend({ wasmPaths: { simd: 'x' }, simd: false }), /wasmPaths\.scalar is missing/);
  await assert.rejects(loadBackend({ simd: 'yes' }), /simd must be a boolean, got yes/);
  await assert.rejects(qwasm.init(null), /options must be an object/);
});

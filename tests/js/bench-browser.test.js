// npm run bench:browser (tools/bench/browser.mjs) as a user runs it, cut to one short round of one case on one
// thread: every runtime loads in its own worker of the one Chromium page (qwasm SIMD128 and relaxed, onnxruntime-web,
// XNNPACK through LiteRT.js on the int8 TFLite file tflite.mjs writes) and gives onnxruntime-web's bytes. No time is
// checked (the machine is shared); that the script runs and its outputs agree is. With --wasm-paths it runs one
// qwasm per build folder instead (an A/B of two builds), and refuses a folder without a SIMD128 build.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

const ROOT = new URL('../../', import.meta.url).pathname;
const SKIP = { skip: process.env.QWASM_SIMD === '0' && 'the script picks its own builds: run once, in the SIMD128 pass' };
const ONE_GEMM = ['--filter', 'gemm 196x576x64', '--no-model', '--threads', '1', '--rounds', '1', '--batch-ms', '5'];

/** Runs tools/bench/browser.mjs with args (one short round of one GEMM) and returns its --json result. */
async function runBench(args) {
  const dir = mkdtempSync(join(tmpdir(), 'qwasm-bench-browser-'));
  try {
    const json = join(dir, 'result.json');
    await promisify(execFile)(process.execPath, ['tools/bench/browser.mjs', ...ONE_GEMM, ...args, '--json', json],
      { cwd: ROOT, timeout: 180000 });
    return JSON.parse(readFileSync(json, 'utf8'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('bench:browser runs qwasm, onnxruntime-web and XNNPACK in one page, with identical outputs', SKIP, async () => {
  const result = await runBench([]);
  assert.equal(result.isolated, true, 'the bench page is cross-origin isolated');
  assert.equal(result.reference, 'ORT-web 1T');
  assert.deepEqual(result.rows.map((r) => r.name), ['gemm 196x576x64']);
  const results = result.rows[0].results;
  assert.deepEqual(Object.keys(results).sort(), ['ORT-web 1T', 'XNNPACK 1T', 'qwasm 1T', 'qwasm 1T relaxed']);
  for (const [label, r] of Object.entries(results)) {
    assert.ok(r.ms > 0 && r.gops > 0, `${label}: no time`);
    assert.deepEqual(r.agreement, { identical: 1, maxSteps: 0 }, `${label} differs from onnxruntime-web`);
  }
  assert.equal(result.infos['qwasm 1T'].isa, 'wasmsimd');
});

test('bench:browser --wasm-paths runs one qwasm per build folder beside the other runtimes', SKIP, async () => {
  const result = await runBench(['--runtimes', 'qwasm,ort', '--wasm-paths', 'dist,dist']);
  const results = result.rows[0].results;
  assert.deepEqual(Object.keys(results).sort(), ['ORT-web 1T', 'qwasm 1T 1:dist', 'qwasm 1T 2:dist']);
  for (const [label, r] of Object.entries(results)) {
    assert.deepEqual(r.agreement, { identical: 1, maxSteps: 0 }, `${label} differs from onnxruntime-web`);
  }
  assert.match(result.infos['qwasm 1T 2:dist'].source, /build\/bench-browser\/wasm-1\/qwasm-simd\.wasm$/);
});

test('bench:browser --wasm-paths names a folder without a SIMD128 build', SKIP, async () => {
  await assert.rejects(runBench(['--wasm-paths', 'docs']), /--wasm-paths: .*docs has no qwasm-simd\.wasm/);
});

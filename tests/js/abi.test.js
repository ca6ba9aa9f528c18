// js/runtime/abi.js is the one JS copy of src/include/qwasm.h's enums and struct layouts: this test reads the header
// and fails when they disagree, and checks that every C function js/ calls is declared there.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { test } from 'node:test';
import * as abi from '../../js/runtime/abi.js';

const root = new URL('../../', import.meta.url);
const header = readFileSync(new URL('src/include/qwasm.h', root), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');

/** Every enumerator of the header: name -> value, and enums by typedef name. */
function parseEnums(text) {
  const values = new Map();
  const byName = new Map();
  for (const m of text.matchAll(/(?:typedef\s+)?enum\s*(\w*)\s*\{([^}]*)\}\s*(\w*)\s*;/g)) {
    const members = {};
    let next = 0;
    for (const item of m[2].split(',').map((s) => s.trim()).filter(Boolean)) {
      const [name, expr] = item.split('=').map((s) => s.trim());
      const value = expr === undefined ? next : Number(expr);
      assert.ok(Number.isInteger(value), `enumerator ${name} = ${expr} is not a plain integer`);
      members[name] = value;
      values.set(name, value);
      next = value + 1;
    }
    byName.set(m[3] || m[1] || Object.keys(members)[0], members);
  }
  return { values, byName };
}

/** struct name -> [field names], for structs of int32_t fields. */
function parseStructs(text) {
  const structs = new Map();
  for (const m of text.matchAll(/typedef\s+struct\s+(\w+)\s*\{([^}]*)\}\s*\w+\s*;/g)) {
    const fields = [];
    for (const decl of m[2].split(';').map((s) => s.trim()).filter(Boolean)) {
      const d = decl.match(/^int32_t\s+(.+)$/);
      assert.ok(d, `struct ${m[1]}: field declaration "${decl}" is not int32_t (abi.js describes int32 structs only)`);
      fields.push(...d[1].split(',').map((s) => s.trim()));
    }
    structs.set(m[1], fields);
  }
  return structs;
}

const { values, byName } = parseEnums(header);
const structs = parseStructs(header);

test('every enum of the header is in abi.js (typedef qw_x as QW_X), member for member', () => {
  let named = 0;
  for (const [name, members] of byName) {
    if (!name.startsWith('qw_')) continue; // the anonymous enum, below
    const table = abi[name.toUpperCase()];
    assert.ok(table, `src/include/qwasm.h declares enum ${name}; js/runtime/abi.js has no ${name.toUpperCase()}`);
    assert.deepEqual({ ...table }, members, `enum ${name}`);
    named++;
  }
  assert.ok(named >= 10, `${named} named enums`);
  // the anonymous enum of qw_avg_pool2d's forms
  for (const [k, v] of Object.entries(abi.QW_AVG_POOL)) assert.equal(values.get(k), v, k);
  assert.deepEqual(Object.keys(abi.QW_AVG_POOL), [...values.keys()].filter((k) => k.startsWith('QW_AVG_POOL_')));
  assert.equal(Number(header.match(/#define\s+QW_MAX_RANK\s+(\d+)/)[1]), abi.QW_MAX_RANK);
  assert.equal(Number(header.match(/#define\s+QW_MAX_BYTES\s+\(\(size_t\)(0x[0-9a-f]+)\)/)[1]), abi.QW_MAX_BYTES);
});

test('every struct layout of abi.js equals the header, field for field', () => {
  assert.deepEqual([...abi.QW_CONV2D_SHAPE], structs.get('qw_conv2d_shape'));
  assert.deepEqual([...abi.QW_POOL2D_SHAPE], structs.get('qw_pool2d_shape'));
  assert.equal(abi.structBytes(abi.QW_CONV2D_SHAPE), 64);
  assert.throws(() => abi.structValues(abi.QW_POOL2D_SHAPE, { batch: 1 }), /struct field in_h is undefined/);
});

test('every C function the package calls is declared in the header', () => {
  const declared = new Set([...header.matchAll(/QW_API\s+[\w\s*]+?\b(qw_\w+)\s*\(/g)].map((m) => m[1]));
  assert.ok(declared.size > 40, `found only ${declared.size} declarations`);
  const called = new Map();
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const path = new URL(name, dir);
      if (statSync(path).isDirectory()) walk(new URL(`${name}/`, dir));
      else if (name.endsWith('.js')) {
        // calls name the function as a string (b.call(where, 'qw_...'), b.size('qw_...')) or read it off exports
        for (const m of readFileSync(path, 'utf8').matchAll(/['"](qw_[a-z0-9_]+)['"]|exports\.(qw_[a-z0-9_]+)/g)) called.set(m[1] ?? m[2], path.pathname);
      }
    }
  };
  walk(new URL('js/', root));
  assert.ok(called.size > 30);
  for (const [fn, file] of called) assert.ok(declared.has(fn), `${file} calls ${fn}, which src/include/qwasm.h does not declare`);
});

test('a non-zero status becomes a named error that names the caller and the C function', () => {
  const e1 = abi.statusError(abi.QW_STATUS.QW_INVALID_QPARAMS, 'linear', 'qw_gemm');
  assert.ok(e1 instanceof RangeError);
  assert.match(e1.message, /^linear: has invalid quantization parameters \(qw_gemm returned QW_INVALID_QPARAMS\)$/);
  const e2 = abi.statusError(abi.QW_STATUS.QW_UNSUPPORTED, 'add', 'qw_add', 'the scale ratio');
  assert.equal(e2.name, 'UnsupportedError');
  assert.match(e2.message, /^add: the scale ratio is not supported \(qw_add returned QW_UNSUPPORTED\)$/);
  assert.match(abi.statusError(abi.QW_STATUS.QW_OUT_OF_MEMORY, 'empty', 'qw_alloc').message, /out of wasm memory/);
  assert.match(abi.statusError(99, 'f', 'qw_f').message, /^f: qw_f returned status 99$/);
});

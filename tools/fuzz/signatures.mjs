// The parameter types of a wasm module's exported functions, read from its binary (type, import, function and
// export sections), for the checked-calls mode of the tests and the fuzzer (js/runtime/wasm.js checkCallsForTests):
// a JavaScript number passed to an i32 parameter is converted with ToInt32, so 2^32 arrives as 0 and 0.5 as 0.
import { readFileSync } from 'node:fs';
import { backend } from '../../js/runtime/runtime.js';

const TYPES = { 0x7f: 'i32', 0x7e: 'i64', 0x7d: 'f32', 0x7c: 'f64', 0x7b: 'v128' };

/** Map export name -> ['i32' | 'i64' | 'f32' | 'f64' | 'v128', ...] of every exported function. */
export function exportSignatures(bytes) {
  const b = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let at = 8; // magic and version
  const u32 = () => {
    let result = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = b[at++];
      result += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return result;
    }
  };
  const name = () => {
    const n = u32();
    at += n;
    return new TextDecoder().decode(b.subarray(at - n, at));
  };
  const types = [];
  const functionTypes = []; // imported functions first, then the module's own
  const exports = new Map();
  while (at < b.length) {
    const id = b[at++];
    const size = u32();
    const end = at + size;
    if (id === 1) {
      for (let n = u32(); n > 0; n--) {
        at++; // 0x60
        const params = Array.from({ length: u32() }, () => TYPES[b[at++]]);
        const results = u32(); // (at += u32() would add to the old offset)
        at += results;
        types.push(params);
      }
    } else if (id === 2) {
      for (let n = u32(); n > 0; n--) {
        name();
        name();
        const kind = b[at++];
        if (kind === 0) functionTypes.push(u32());
        else if (kind === 1) { at++; const flags = u32(); u32(); if (flags & 1) u32(); } // table
        else if (kind === 2) { const flags = u32(); u32(); if (flags & 1) u32(); } // memory
        else if (kind === 3) at += 2; // global
      }
    } else if (id === 3) {
      for (let n = u32(); n > 0; n--) functionTypes.push(u32());
    } else if (id === 7) {
      for (let n = u32(); n > 0; n--) {
        const exportName = name();
        const kind = b[at++];
        const index = u32();
        if (kind === 0) exports.set(exportName, types[functionTypes[index]]);
      }
    }
    at = end;
  }
  return exports;
}

/** Turns on the checked calls for the backend init() started (info: init's result, whose source is the module). */
export function checkCalls(info) {
  backend().checkCallsForTests(exportSignatures(readFileSync(new URL(info.source))));
}

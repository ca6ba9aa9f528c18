// The package's modules depend one way: index -> model -> ops -> tensor -> runtime, with errors.js, semantics.js
// and reference.js as leaves any layer may use. This test reads every import in js/ and fails on a cycle, on an
// import against that direction, and on a module inside js/ importing the public face (index.js).
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

const js = fileURLToPath(new URL('../../js/', import.meta.url));

function modules(dir = js) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return modules(path);
    return name.endsWith('.js') ? [relative(js, path)] : [];
  });
}

/** The relative imports of a module (static, re-exports and dynamic), as paths relative to js/. */
function importsOf(file) {
  const text = readFileSync(join(js, file), 'utf8');
  const specs = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"](\.[^'"]+)['"]|import\(\s*(?:\/\*.*?\*\/\s*)*['"](\.[^'"]+)['"]\s*\)/g)]
    .map((m) => m[1] ?? m[2]);
  return specs.map((s) => normalize(join(dirname(file), s)));
}

const LEAVES = new Set(['errors.js', 'semantics.js', 'reference.js']);
const LAYERS = ['runtime', 'tensor', 'ops', 'model'];
const layerOf = (file) => (file === 'index.js' ? LAYERS.length : LAYERS.indexOf(file.split('/')[0]));

const graph = new Map(modules().map((f) => [f, importsOf(f)]));

test('js/ has the expected layers and every import resolves to a module', () => {
  for (const [file, deps] of graph) {
    assert.ok(LEAVES.has(file) || file === 'index.js' || layerOf(file) >= 0, `${file} is outside the layers (runtime, tensor, ops, model)`);
    for (const d of deps) assert.ok(graph.has(d), `${file} imports ${d}, which does not exist`);
  }
});

test('nothing inside js/ imports index.js, and imports only go down the layers', () => {
  for (const [file, deps] of graph) {
    for (const d of deps) {
      assert.notEqual(d, 'index.js', `${file} imports the public face index.js`);
      if (LEAVES.has(d)) continue;
      assert.ok(!LEAVES.has(file), `the leaf ${file} imports ${d}; leaves import only other leaves`);
      assert.ok(layerOf(d) <= layerOf(file), `${file} (layer ${LAYERS[layerOf(file)] ?? 'index'}) imports ${d} from the layer above it`);
    }
  }
});

/** The first import cycle of a module graph (module -> imports) as a path, or null. */
function findCycle(g) {
  const state = new Map(); // 1: on the stack, 2: done
  const stack = [];
  const visit = (f) => {
    if (state.get(f) === 2) return null;
    if (state.get(f) === 1) return [...stack.slice(stack.indexOf(f)), f];
    state.set(f, 1);
    stack.push(f);
    for (const d of g.get(f) ?? []) {
      const cycle = visit(d);
      if (cycle) return cycle;
    }
    stack.pop();
    state.set(f, 2);
    return null;
  };
  for (const f of g.keys()) {
    const cycle = visit(f);
    if (cycle) return cycle;
  }
  return null;
}

test('there is no import cycle in js/', () => {
  const cycle = findCycle(graph);
  assert.equal(cycle, null, `import cycle: ${cycle?.join(' -> ')}`);
});

test('the cycle search finds cycles', () => {
  assert.deepEqual(findCycle(new Map([['a.js', ['b.js']], ['b.js', ['c.js']], ['c.js', ['a.js']]])), ['a.js', 'b.js', 'c.js', 'a.js']);
  assert.equal(findCycle(new Map([['a.js', ['b.js']], ['b.js', []]])), null);
});

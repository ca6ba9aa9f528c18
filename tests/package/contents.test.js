// What `npm pack` puts in the tarball: the license, the repository fields, every export resolving to a shipped
// file, every link of the shipped Markdown either to a shipped file or to the repository by URL (naming a file
// that exists), and the size budget the README states.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { after, before, test } from 'node:test';
import { REPO, packQwasm } from './install.js';

const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8'));
const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
let pack;
let files;
before(() => {
  pack = packQwasm();
  files = new Set(pack.info.files.map((f) => f.path));
});
after(() => rmSync(pack.dir, { recursive: true, force: true }));

test('the tarball carries the MIT license, as package.json says, and the repository fields', () => {
  assert.equal(pkg.license, 'MIT');
  assert.ok(files.has('LICENSE'), 'LICENSE is not in the tarball');
  assert.match(readFileSync(join(REPO, 'LICENSE'), 'utf8'), /^MIT License\n\nCopyright \(c\) \d{4} /);
  const home = pkg.homepage.replace(/#readme$/, '');
  assert.match(home, /^https:\/\/github\.com\/[\w.-]+\/[\w.-]+$/);
  assert.deepEqual(pkg.repository, { type: 'git', url: `git+${home}.git` });
  assert.deepEqual(pkg.bugs, { url: `${home}/issues` });
});

test('every export of package.json names files the tarball carries', () => {
  const targets = Object.values(pkg.exports).flatMap((v) => (typeof v === 'string' ? [v] : Object.values(v)));
  for (const target of [pkg.main, pkg.types, ...targets]) {
    const path = target.replace(/^\.\//, '');
    if (path.includes('*')) {
      const prefix = path.slice(0, path.indexOf('*'));
      assert.ok([...files].some((f) => f.startsWith(prefix)), `nothing shipped under ${target}`);
    } else {
      assert.ok(files.has(path), `${target} is not in the tarball`);
    }
  }
});

test('the shipped Markdown links only to shipped files or, by URL, to files of the repository', () => {
  const home = pkg.homepage.replace(/#readme$/, '');
  const tracked = new Set(execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: REPO, encoding: 'utf8' }).split('\n'));
  const dirs = new Set([...files, ...tracked].flatMap((f) => f.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
  let checked = 0;
  for (const md of [...files].filter((f) => f.endsWith('.md'))) {
    const text = readFileSync(join(REPO, md), 'utf8');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (target.startsWith('#')) continue;
      if (target.startsWith(`${home}/`)) {
        const m = /^\/(blob|tree)\/main\/(.+)$/.exec(target.slice(home.length));
        assert.ok(m, `${md}: ${target} is not a blob / tree link into the repository`);
        const path = m[2].replace(/\/$/, '').split('#')[0];
        assert.ok(m[1] === 'blob' ? tracked.has(path) : dirs.has(path), `${md}: ${target} names ${path}, which the repository does not have`);
        checked++;
      } else if (!/^[a-z]+:/.test(target)) {
        const path = normalize(join(dirname(md), target.split('#')[0])).replace(/\/$/, '');
        assert.ok(files.has(path) || [...files].some((f) => f.startsWith(`${path}/`)), `${md}: ${target} is not in the tarball (ship it or link it by URL)`);
        checked++;
      }
    }
  }
  assert.ok(checked > 20, `only ${checked} links checked`);
});

test('the tarball is within the size budget the README states', () => {
  const m = /\*\*Package size budget\*\*: at most (\d+) kB as a tarball and ([\d.]+) MB unpacked/.exec(readme);
  assert.ok(m, 'the README states no package size budget');
  const [packed, unpacked] = [Number(m[1]) * 1000, Number(m[2]) * 1e6];
  assert.ok(pack.info.size <= packed, `the tarball is ${pack.info.size} bytes, over the ${packed} of the budget`);
  assert.ok(pack.info.unpackedSize <= unpacked, `unpacked ${pack.info.unpackedSize} bytes, over the ${unpacked} of the budget`);
  // The README's "today" figures stay true: sizes within 2%, the file count exact.
  const today = /\(today (\d+) kB and ([\d.]+) MB in (\d+) files/.exec(readme);
  assert.ok(today, 'the README states no "today" package size');
  const near = (stated, actual) => Math.abs(stated - actual) <= 0.02 * actual;
  assert.ok(near(Number(today[1]) * 1000, pack.info.size), `the README says ${today[1]} kB; the tarball is ${pack.info.size} bytes`);
  assert.ok(near(Number(today[2]) * 1e6, pack.info.unpackedSize), `the README says ${today[2]} MB; unpacked ${pack.info.unpackedSize} bytes`);
  assert.equal(Number(today[3]), pack.info.entryCount ?? pack.info.files.length, 'the README\'s file count');
  for (const f of ['dist/qwasm-simd.wasm', 'dist/qwasm-scalar.wasm', 'models/digits.onnx', 'js/index.d.ts']) assert.ok(files.has(f), f);
  assert.ok(![...files].some((f) => /^(tests|web_demo|build|node_modules)\//.test(f)), 'development files in the tarball');
  assert.ok(existsSync(pack.tarball));
});

// Shared by the tests/package suites: qwasm as a user gets it. `npm pack` makes the tarball the registry would
// serve; each test project (tests/package/projects/<name>: a package.json and its package-lock.json) is installed
// with `npm ci --ignore-scripts` into build/package-tests/<name>/ (reinstalled only when its lockfile changes, so
// the npm cache and the folder make later runs fast), then the tarball is installed into it with
// `npm install --no-save` (qwasm's own dependency, protobufjs, comes from the registry as for a user), and the
// app's sources are copied next to it. Nothing in the project points back at this repository.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
const BUILD = join(REPO, 'build/package-tests');
const PROJECTS = fileURLToPath(new URL('./projects/', import.meta.url));
export const APP = fileURLToPath(new URL('./app/', import.meta.url));
const NPM_FLAGS = ['--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'];

/** The digits model's first held-out image with PyTorch's int8 logits (models/digits.json). */
export const SAMPLE = JSON.parse(readFileSync(join(REPO, 'models/digits.json'), 'utf8')).test_images[0];

function npm(args, cwd) {
  return execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * `npm pack` of this repository into a folder of its own: { tarball, info } with npm's report (size, unpackedSize,
 * files). Scripts are skipped (prepack would rebuild): the .wasm files must already be built.
 */
export function packQwasm() {
  for (const f of ['dist/qwasm-simd.wasm', 'dist/qwasm-scalar.wasm']) {
    if (!existsSync(join(REPO, f))) throw new Error(`${f} is missing: run npm run build first`);
  }
  mkdirSync(BUILD, { recursive: true });
  const dir = mkdtempSync(join(BUILD, 'pack-'));
  const [info] = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', dir], REPO));
  return { tarball: join(dir, info.filename), info, dir };
}

/**
 * A fresh install of test project `name` with qwasm from `tarball`, and `files` ({ to: from }, from relative to
 * tests/package/) copied in. Returns the project folder.
 */
export function installProject(name, tarball, files = {}) {
  const dir = join(BUILD, name);
  const lock = readFileSync(join(PROJECTS, name, 'package-lock.json'));
  const want = createHash('sha256').update(lock).update(readFileSync(join(PROJECTS, name, 'package.json'))).digest('hex');
  const stamp = join(dir, 'node_modules/.qwasm-test-lock');
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== want) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    cpSync(join(PROJECTS, name, 'package.json'), join(dir, 'package.json'));
    cpSync(join(PROJECTS, name, 'package-lock.json'), join(dir, 'package-lock.json'));
    npm(['ci', ...NPM_FLAGS], dir);
    mkdirSync(join(dir, 'node_modules'), { recursive: true }); // a project without dependencies gets none
    writeFileSync(stamp, want);
  }
  // everything but the registry's packages goes: the previous run's app, build output, Vite's dep cache, qwasm
  for (const entry of readdirSync(dir)) {
    if (!['node_modules', 'package.json', 'package-lock.json'].includes(entry)) rmSync(join(dir, entry), { recursive: true, force: true });
  }
  for (const entry of ['qwasm', '.vite', '.cache']) rmSync(join(dir, 'node_modules', entry), { recursive: true, force: true });
  npm(['install', '--no-save', ...NPM_FLAGS, tarball], dir);
  for (const [to, from] of Object.entries(files)) cpSync(fileURLToPath(new URL(from, import.meta.url)), join(dir, to), { recursive: true });
  return dir;
}

/** Runs `node args` in `cwd`; resolves to its stdout, rejects with its stderr. */
export function node(args, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    child.on('exit', (code) => (code === 0 ? resolve({ out, err }) : reject(new Error(`node ${args.join(' ')} exited with ${code}:\n${err}${out}`))));
  });
}

/**
 * Starts a long-running `node args` in `cwd` (a dev server) and resolves when its output matches `ready`:
 * { child, match, output() }. Stop it with child.kill().
 */
export function startServer(args, cwd, ready, timeoutMs = 60000) {
  const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill(); reject(new Error(`no ${ready} within ${timeoutMs} ms:\n${text}`)); }, timeoutMs);
    const onData = (d) => {
      text += d;
      const match = ready.exec(text.replace(/\x1b\[[0-9;]*m/g, '')); // eslint-disable-line no-control-regex
      if (match) {
        clearTimeout(timer);
        resolve({ child, match, output: () => text });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`exited with ${code} before ${ready}:\n${text}`)); });
  });
}

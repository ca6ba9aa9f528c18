// The exporter as users install it: `pip install` of the repository's Python package (pyproject.toml,
// python/qwasm_export) into a fresh virtual environment, the qwasm-export command run on examples/export_tiny_cnn.py,
// and the file it writes run by qwasm: PyTorch's outputs bit for bit. Once with Debian's torch 1.13 (a venv over the
// system site-packages), once with torch 2.13 (a venv that sees build/venv's torch; bash tools/setup-python.sh).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, afterEach, before, test } from 'node:test';
import { assertBitEqual, failOnLeaks, qwasm } from './helpers.js';

failOnLeaks(before, afterEach);

const root = fileURLToPath(new URL('../../', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'qwasm-export-'));
after(() => rmSync(work, { recursive: true, force: true }));

/** A copy of what pip builds the package from (a clone's folder; the npm package ships the same files). */
function packageSource() {
  const src = join(work, 'src');
  if (!existsSync(src)) {
    for (const p of ['pyproject.toml', 'docs/exporter.md', 'python/qwasm_export']) cpSync(join(root, p), join(src, p), { recursive: true });
  }
  return src;
}

const run = (cmd, args, options = {}) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000, ...options });

/** torch's outputs of the example model (built again by the same deterministic build()) for a few inputs. */
const TORCH_OUTPUTS = `
import json, sys, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, sys.argv[1])
import torch
from export_tiny_cnn import build
m, _ = build()
g = torch.Generator().manual_seed(5)
xs = [torch.rand(1, 1, 8, 8, generator=g) for _ in range(4)]
with torch.no_grad():
    print(json.dumps([{"x": x.flatten().tolist(), "y": m(x).flatten().tolist()} for x in xs]))
`;

async function roundTrip(python, label) {
  const out = join(work, `${label}.onnx`);
  const bin = join(python, '..');
  const printed = run(join(bin, 'qwasm-export'), [join(root, 'examples/export_tiny_cnn.py:build'), '-o', out], { cwd: work });
  assert.match(printed, /wrote .*\.onnx \(\d+ nodes, \d+ bytes, semantics pytorch/);
  writeFileSync(join(work, 'outputs.py'), TORCH_OUTPUTS);
  const cases = JSON.parse(run(python, [join(work, 'outputs.py'), join(root, 'examples')], { cwd: work }));
  const model = await qwasm.loadModel(new Uint8Array(readFileSync(out)));
  try {
    for (const c of cases) {
      const y = await model.run({ input: { data: Float32Array.from(c.x), dims: [1, 1, 8, 8] } });
      assertBitEqual(assert, y.output.data, Float32Array.from(c.y), `${label}: logits`);
    }
    return model.semantics;
  } finally {
    model.dispose();
  }
}

test("Debian's torch 1.13: pip install into a fresh venv, qwasm-export, the file equals PyTorch (pytorch-qnnpack)", async () => {
  const venv = join(work, 'venv113');
  run('/usr/bin/python3', ['-m', 'venv', '--system-site-packages', venv]);
  // Debian's setuptools and wheel build it offline
  run(join(venv, 'bin/pip'), ['install', '-q', '--no-build-isolation', '--no-deps', packageSource()]);
  assert.match(run(join(venv, 'bin/qwasm-export'), ['--version']), /^qwasm-export 0\.1\.0 \(torch 1\.13/);
  assert.equal(await roundTrip(join(venv, 'bin/python'), 'torch113'), 'pytorch-qnnpack');
});

test('torch 2.13 (x86 engine): pip install into a fresh venv, qwasm-export, the file equals PyTorch (pytorch-x86)', async () => {
  const base = join(root, 'build/venv/bin/python');
  if (!existsSync(base)) throw new Error(`${base} is missing: run bash tools/setup-python.sh (npm test does)`);
  const venv = join(work, 'venv213');
  run(base, ['-m', 'venv', venv]);
  const site = run(base, ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])']).trim();
  const own = run(join(venv, 'bin/python'), ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])']).trim();
  writeFileSync(join(own, 'torch213.pth'), `${site}\n`); // the venv sees build/venv's torch 2.13, onnx, numpy
  run(join(venv, 'bin/pip'), ['install', '-q', '--no-deps', packageSource()]);
  assert.match(run(join(venv, 'bin/qwasm-export'), ['--version']), /^qwasm-export 0\.1\.0 \(torch 2\.13/);
  assert.equal(await roundTrip(join(venv, 'bin/python'), 'torch213'), 'pytorch-x86');
});

test('qwasm-export names what it cannot export, and exits 1', () => {
  const src = join(work, 'bad_model.py');
  writeFileSync(src, `
import torch, torch.nn as nn
from torch.ao.quantization import QuantStub, DeQuantStub, get_default_qconfig, prepare, convert
class M(nn.Module):
    def __init__(self):
        super().__init__(); self.quant, self.dq = QuantStub(), DeQuantStub(); self.fc = nn.Linear(4, 4); self.ln = nn.LayerNorm(4)
    def forward(self, x): return self.dq(self.ln(self.fc(self.quant(x))))
def build():
    torch.backends.quantized.engine = "qnnpack"
    m = M().eval(); m.qconfig = get_default_qconfig("qnnpack"); prepare(m, inplace=True); m(torch.randn(2, 4)); convert(m, inplace=True)
    return m, torch.randn(2, 4)
`);
  assert.throws(() => run('/usr/bin/python3', [join(root, 'tools/export_torch.py'), `${src}:build`, '-o', join(work, 'bad.onnx')]), (error) => {
    assert.equal(error.status, 1);
    assert.match(error.stderr, /qwasm-export: 'ln': quantized LayerNorm: PyTorch's kernel \(quantized_normalize_kernel\)/);
    return true;
  });
});

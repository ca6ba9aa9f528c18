// Quantization explorer: where the float tensors come from (seed presets, seeded synthetic
// distributions, pasted text). Plain data generation; no quantization happens here.

/**
 * Tensors from users' questions (the repository's seeds). A preset's note(s) describes what the settings `s` on screen
 * do to it, so it never claims what those settings do not show; `wants` are the settings its question is about.
 */
export const PRESETS = {
  sym10: {
    label: '[-10, -5, 0, 5, 10]', values: [-10, -5, 0, 5, 10], wants: { dtype: 'qint8', scheme: 'symmetric' },
    note: (s) => (s.scheme === 'symmetric' && s.dtype === 'qint8' && s.bits === 8 && !s.reduceRange
      ? 'Seed 004: symmetric int8 over [-10, 10] divides the range by 127.5, not 127: scale = 10 / 127.5.'
      : `Seed 004 asks why symmetric int8 over [-10, 10] divides by 127.5, not 127: choose qint8 and Symmetric to see it. `
        + `Here (${s.dtype} ${s.scheme}) the observer spreads the range over the ${s.scheme === 'affine' ? 'integer steps with a zero point that lands on 0.0' : 'steps around the fixed zero point'}.`),
  },
  outlier: {
    label: '[0, 1, 9, 10, 1000]', values: [0, 1, 9, 10, 1000],
    note: (s) => (s.observer === 'minmax' || s.observer === 'moving'
      ? 'One outlier stretches the range: min/max gives every small value the same few integers.'
      : `One outlier stretches the range min/max would take; the ${s.observer === 'histogram' ? 'histogram\'s L2 search' : 'percentile'} observer clips it instead.`),
  },
  small: {
    label: '[1.345, 2.087, 3.453]', values: [1.345, 2.087, 3.453],
    note: (s) => (s.scheme === 'affine'
      ? 'An all-positive range: affine quantization still includes 0 in it, so zero stays exact.'
      : 'An all-positive range: symmetric quantization centres the grid on 0, so half its integers stand for negatives that never occur.'),
  },
};

export const DISTRIBUTIONS = {
  normal: 'normal (0, 1)',
  uniform: 'uniform [-1, 1]',
  laplace: 'Laplace + 1% outliers',
  relu: 'post-ReLU (normal, max(0, x))',
};

/** mulberry32: a small seeded PRNG, so a seed always gives the same tensor. */
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** n float32 samples of the named distribution. */
export function synthesize(kind, n, seed) {
  const rand = mulberry32(seed);
  const u = () => { let v = rand(); while (v === 0) v = rand(); return v; };
  const gauss = () => Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * rand());
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let x;
    if (kind === 'uniform') x = 2 * rand() - 1;
    else if (kind === 'laplace') {
      const p = u() - 0.5;
      x = -0.5 * Math.sign(p) * Math.log(1 - 2 * Math.abs(p));
      if (rand() < 0.01) x *= 12; // the outliers that ruin a min/max range
    } else if (kind === 'relu') x = Math.max(0, gauss());
    else x = gauss();
    out[i] = x;
  }
  return out;
}

/**
 * Parses pasted numbers: separated by spaces, commas, semicolons or brackets (a Python / NumPy print
 * works). Lines of equal length make a 2-D tensor [rows, cols] so per-channel works along axis 0.
 * Returns { values: Float32Array, dims } or { error }.
 */
export function parseNumbers(text) {
  const lines = String(text).split(/\n+/).map((l) => l.trim()).filter((l) => /[^\s,;[\]()]/.test(l));
  if (lines.length === 0) return { error: 'Nothing to quantize: paste at least one number, e.g. -10, -5, 0, 5, 10.' };
  const rows = [];
  for (const [li, line] of lines.entries()) {
    const tokens = line.split(/[\s,;[\]()]+/).filter((t) => t !== '' && !/^(tensor|array|dtype=.*|torch\.float\d*)$/i.test(t));
    const row = [];
    for (const tok of tokens) {
      const v = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(tok) ? Number(tok) : NaN;
      if (Number.isNaN(v)) {
        const what = /^[+-]?nan$/i.test(tok) ? 'NaN is not a value an observer can take' : 'it is not a number';
        return { error: `Line ${li + 1}: "${tok.slice(0, 24)}" cannot be used (${what}).` };
      }
      if (!Number.isFinite(Math.fround(v))) {
        return { error: `Line ${li + 1}: ${tok.slice(0, 24)} is outside float32's range.` };
      }
      row.push(v);
    }
    if (row.length) rows.push(row);
  }
  const values = Float32Array.from(rows.flat());
  if (values.length === 0) return { error: 'Nothing to quantize: paste at least one number.' };
  if (values.length > 1_000_000) return { error: `That is ${values.length} numbers; the explorer takes at most 1,000,000.` };
  const same = rows.length > 1 && rows.every((r) => r.length === rows[0].length);
  return { values, dims: same ? [rows.length, rows[0].length] : [values.length] };
}

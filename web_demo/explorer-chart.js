// Quantization explorer: the histogram of the float values, with the quantization grid (the
// representable dequantized levels, thinned when dense) and the clipping range drawn over it.
// A plain <canvas>, sized for devicePixelRatio.

const COLORS = { bar: '#9db8e6', barEdge: '#2f6fd6', grid: 'rgba(31,122,77,0.55)', clip: 'rgba(180,69,31,0.10)',
  clipEdge: '#b4451f', deq: '#d9822b', axis: '#5d6675', text: '#1d2330', zero: '#1d2330' };

function niceTicks(lo, hi, count) {
  const span = hi - lo;
  if (!(span > 0)) return [lo];
  const raw = span / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return out;
}

export function fmtTick(v) {
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(1);
  return String(Number(v.toPrecision(4)));
}

/**
 * Draws into canvas. opts: { values, deq (dequantized values, drawn for small tensors), levels (Float32Array, ascending), clipLo, clipHi, cssWidth, cssHeight }.
 * Returns { shownLevels, step } (how many grid lines were drawn, every step-th level).
 */
export function drawHistogram(canvas, { values, deq, levels, clipLo, clipHi, cssWidth, cssHeight = 260 }) {
  const dpr = window.devicePixelRatio || 1;
  const w = Math.max(200, Math.floor(cssWidth));
  const h = cssHeight;
  canvas.style.width = `${w}px`;
  canvas.style.height = `${h}px`;
  canvas.width = Math.round(w * dpr);
  canvas.height = Math.round(h * dpr);
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);

  let lo = Math.min(clipLo, 0);
  let hi = Math.max(clipHi, 0);
  for (const v of values) { if (v < lo) lo = v; if (v > hi) hi = v; }
  if (!(hi > lo)) { lo -= 1; hi += 1; }
  const pad = (hi - lo) * 0.04;
  lo -= pad;
  hi += pad;

  const m = { l: 44, r: 12, t: 22, b: 28 };
  const pw = w - m.l - m.r;
  const ph = h - m.t - m.b;
  const X = (v) => m.l + ((v - lo) / (hi - lo)) * pw;

  // Clipped regions: outside [clipLo, clipHi] every value saturates.
  ctx.fillStyle = COLORS.clip;
  if (X(clipLo) > m.l) ctx.fillRect(m.l, m.t, X(clipLo) - m.l, ph);
  if (X(clipHi) < m.l + pw) ctx.fillRect(X(clipHi), m.t, m.l + pw - X(clipHi), ph);

  if (values.length <= 64) {
    // A few values: one stem per value, and where qwasm puts it back (dequantized) as a triangle.
    ctx.strokeStyle = COLORS.barEdge;
    ctx.fillStyle = COLORS.barEdge;
    ctx.lineWidth = 2;
    for (const v of values) {
      const x = X(v);
      ctx.beginPath();
      ctx.moveTo(x, m.t + ph);
      ctx.lineTo(x, m.t + ph * 0.3);
      ctx.stroke();
      ctx.beginPath();
      ctx.arc(x, m.t + ph * 0.3, 4, 0, 2 * Math.PI);
      ctx.fill();
    }
    ctx.fillStyle = COLORS.deq;
    for (const v of deq ?? []) {
      const x = X(v);
      ctx.beginPath();
      ctx.moveTo(x, m.t + ph * 0.3 - 14);
      ctx.lineTo(x - 5, m.t + ph * 0.3 - 23);
      ctx.lineTo(x + 5, m.t + ph * 0.3 - 23);
      ctx.closePath();
      ctx.fill();
    }
  } else {
    // Histogram bars.
    const nb = Math.max(10, Math.min(120, Math.floor(pw / 6), Math.ceil(Math.sqrt(values.length) * 2)));
    const counts = new Float64Array(nb);
    for (const v of values) counts[Math.min(nb - 1, Math.max(0, Math.floor(((v - lo) / (hi - lo)) * nb)))]++;
    const cmax = counts.reduce((a, b) => Math.max(a, b), 0);
    ctx.fillStyle = COLORS.bar;
    const bw = pw / nb;
    for (let i = 0; i < nb; i++) {
      if (!counts[i]) continue;
      // sqrt scale keeps a lone outlier visible next to a tall peak.
      const bh = Math.max(2, (Math.sqrt(counts[i]) / Math.sqrt(cmax)) * (ph - 6));
      ctx.fillRect(m.l + i * bw + 0.5, m.t + ph - bh, Math.max(1, bw - 1), bh);
    }
  }

  // Quantization grid: every step-th level so lines stay at least 4 px apart.
  const spacing = levels.length > 1 ? (X(levels[levels.length - 1]) - X(levels[0])) / (levels.length - 1) : pw;
  const step = Math.max(1, Math.ceil(4 / Math.max(spacing, 1e-9)));
  let shown = 0;
  ctx.strokeStyle = COLORS.grid;
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (let i = 0; i < levels.length; i += step) {
    const x = Math.round(X(levels[i])) + 0.5;
    ctx.moveTo(x, m.t + ph);
    ctx.lineTo(x, m.t + ph - Math.min(ph, 18 + ph * 0.25));
    shown++;
  }
  ctx.stroke();

  // Clip edges and zero.
  ctx.strokeStyle = COLORS.clipEdge;
  ctx.lineWidth = 1.5;
  ctx.setLineDash([5, 3]);
  for (const v of [clipLo, clipHi]) {
    ctx.beginPath();
    ctx.moveTo(X(v), m.t - 4);
    ctx.lineTo(X(v), m.t + ph);
    ctx.stroke();
  }
  ctx.setLineDash([]);
  ctx.font = '11px system-ui, sans-serif';
  ctx.fillStyle = COLORS.clipEdge;
  ctx.textAlign = 'right';
  ctx.fillText(`clip ${fmtTick(clipLo)}`, Math.max(m.l + 50, X(clipLo) - 3), m.t - 8);
  ctx.textAlign = 'left';
  ctx.fillText(`${fmtTick(clipHi)}`, Math.min(w - 40, X(clipHi) + 3), m.t - 8);

  // Axis.
  ctx.strokeStyle = COLORS.axis;
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(m.l, m.t + ph + 0.5);
  ctx.lineTo(m.l + pw, m.t + ph + 0.5);
  ctx.stroke();
  ctx.fillStyle = COLORS.axis;
  ctx.textAlign = 'center';
  for (const t of niceTicks(lo, hi, Math.max(3, Math.floor(pw / 80)))) {
    const x = X(t);
    ctx.beginPath();
    ctx.moveTo(x, m.t + ph);
    ctx.lineTo(x, m.t + ph + 4);
    ctx.stroke();
    ctx.fillText(fmtTick(t), x, m.t + ph + 16);
  }
  ctx.save();
  ctx.translate(12, m.t + ph / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textAlign = 'center';
  ctx.fillText(values.length <= 64 ? 'values' : 'count (√ scale)', 0, 0);
  ctx.restore();
  return { shownLevels: shown, step };
}

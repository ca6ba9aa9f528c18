// Quantization explorer: runs one configuration through qwasm. Scale, zero point, integer range,
// integers, dequantized values and the grid all come from qwasm's observers and kernels; this module
// only orchestrates them, frees every QTensor it makes, and adds plain error statistics.

/** The integer range of a bit width: signed [-2^(b-1), 2^(b-1)-1], unsigned [0, 2^b-1]; null at 8 bits. */
export function customRange(dtype, bits) {
  if (bits >= 8) return null;
  return dtype === 'qint8' ? { quantMin: -(2 ** (bits - 1)), quantMax: 2 ** (bits - 1) - 1 } : { quantMin: 0, quantMax: 2 ** bits - 1 };
}

/** numpy.percentile's linear interpolation on a sorted array. */
function quantile(sorted, p) {
  const pos = (sorted.length - 1) * p;
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

/** Rows of a [C, ...] tensor along axis 0 (a 1-D tensor has one element per channel). */
function channelRows(values, dims) {
  const channels = dims[0];
  const inner = values.length / channels;
  return { channels, inner, row: (c) => values.subarray(c * inner, (c + 1) * inner) };
}

/** Splits values into `batches` pieces to feed a moving-average observer one batch at a time. */
function* batchesOf(values, dims, batches, perChannel) {
  if (!perChannel) {
    const size = Math.ceil(values.length / batches);
    for (let s = 0; s < values.length; s += size) yield { data: values.subarray(s, s + size), shape: [Math.min(size, values.length - s)] };
    return;
  }
  const { channels, inner, row } = channelRows(values, dims);
  const size = Math.ceil(inner / batches);
  for (let s = 0; s < inner; s += size) {
    const len = Math.min(size, inner - s);
    const data = new Float32Array(channels * len);
    for (let c = 0; c < channels; c++) data.set(row(c).subarray(s, s + len), c * len);
    yield { data, shape: [channels, len] };
  }
}

/**
 * Chooses qparams with the selected observer. Returns { quantMin, quantMax, scales, zeroPoints, min, max }
 * (arrays: one entry per tensor or per channel); min / max are the range the observer settled on.
 */
export function chooseWithObserver(qwasm, values, dims, s) {
  const perChannel = s.granularity === 'channel';
  const qscheme = `${perChannel ? 'per_channel' : 'per_tensor'}_${s.scheme}`;
  const opts = { dtype: s.dtype, qscheme, reduceRange: s.reduceRange, ...(customRange(s.dtype, s.bits) ?? {}) };
  if (s.observer === 'percentile') {
    if (s.scheme === 'symmetric' && s.reduceRange && s.dtype === 'quint8') {
      // As MinMaxObserver: the reduced quint8 range cannot hold the fixed zero point 128.
      throw new Error('Cannot reduce range for symmetric quantization for quint8 (as MinMaxObserver): choose qint8 or affine.');
    }
    const { quantMin, quantMax } = qwasm.quantRange(opts);
    const p = s.percentile / 100;
    const rows = perChannel ? channelRows(values, dims) : { channels: 1, row: () => values };
    const min = [];
    const max = [];
    for (let c = 0; c < rows.channels; c++) {
      const sorted = Float64Array.from(rows.row(c)).sort();
      min.push(Math.fround(quantile(sorted, 1 - p)));
      max.push(Math.fround(quantile(sorted, p)));
    }
    if (perChannel) {
      const { scales, zeroPoints } = qwasm.chooseQParams({ ...opts, min, max });
      return { quantMin, quantMax, scales: Array.from(scales), zeroPoints: Array.from(zeroPoints), min, max };
    }
    const { scale, zeroPoint } = qwasm.chooseQParams({ ...opts, min: min[0], max: max[0] });
    return { quantMin, quantMax, scales: [scale], zeroPoints: [zeroPoint], min, max };
  }
  let obs;
  if (s.observer === 'histogram') {
    if (perChannel) throw new Error('HistogramObserver is per-tensor only (as in PyTorch): choose per-tensor, or another observer.');
    obs = new qwasm.HistogramObserver(opts);
    obs.observe(values, [values.length]);
    const qp = obs.calculateQparams();
    const r = obs.search();
    return { quantMin: obs.quantMin, quantMax: obs.quantMax, scales: [qp.scale], zeroPoints: [qp.zeroPoint], min: [r.min], max: [r.max] };
  }
  const moving = s.observer === 'moving';
  if (perChannel) {
    const Cls = moving ? qwasm.MovingAveragePerChannelMinMaxObserver : qwasm.PerChannelMinMaxObserver;
    obs = new Cls({ ...opts, chAxis: 0, ...(moving ? { averagingConstant: s.averagingConstant } : {}) });
  } else {
    const Cls = moving ? qwasm.MovingAverageMinMaxObserver : qwasm.MinMaxObserver;
    obs = new Cls({ ...opts, ...(moving ? { averagingConstant: s.averagingConstant } : {}) });
  }
  if (moving) for (const b of batchesOf(values, dims, s.batches, perChannel)) obs.observe(b.data, b.shape);
  else obs.observe(values, dims);
  const qp = obs.calculateQparams();
  const st = obs.state();
  if (perChannel) {
    return { quantMin: obs.quantMin, quantMax: obs.quantMax, scales: Array.from(qp.scales), zeroPoints: Array.from(qp.zeroPoints),
      min: Array.from(st.minVal), max: Array.from(st.maxVal) };
  }
  return { quantMin: obs.quantMin, quantMax: obs.quantMax, scales: [qp.scale], zeroPoints: [qp.zeroPoint], min: [st.minVal], max: [st.maxVal] };
}

/** Quantizes with qwasm under one rounding rule; integers clamped to [quantMin, quantMax] when narrower than the dtype. */
function quantizeInts(qwasm, values, dims, qp, s, rounding) {
  const perChannel = s.granularity === 'channel';
  const t = perChannel
    ? qwasm.quantizePerChannel(values, dims, qp.scales, qp.zeroPoints, 0, s.dtype, { rounding })
    : qwasm.quantizePerTensor(values, dims, qp.scales[0], qp.zeroPoints[0], s.dtype, { rounding });
  try {
    const ints = t.intRepr();
    const full = qwasm.DTYPES[s.dtype];
    // Below 8 bits (or with reduce_range) the observer's range is narrower than the dtype's: as
    // torch.fake_quantize_per_tensor_affine, the integers stop at quant_min / quant_max.
    if (qp.quantMin > full.min || qp.quantMax < full.max) {
      for (let i = 0; i < ints.length; i++) ints[i] = Math.min(Math.max(ints[i], qp.quantMin), qp.quantMax);
    }
    return ints;
  } finally {
    t.dispose();
  }
}

/** Dequantizes integers with qwasm (fromIntRepr + dequantize). */
function dequantizeInts(qwasm, ints, dims, qp, s) {
  const t = s.granularity === 'channel'
    ? qwasm.fromIntReprPerChannel(ints, dims, qp.scales, qp.zeroPoints, 0, s.dtype)
    : qwasm.fromIntRepr(ints, dims, qp.scales[0], qp.zeroPoints[0], s.dtype);
  try {
    return t.dequantize();
  } finally {
    t.dispose();
  }
}

/** The representable values of channel c: every integer in [quantMin, quantMax] dequantized by qwasm. */
export function gridLevels(qwasm, qp, c, dtype) {
  const n = qp.quantMax - qp.quantMin + 1;
  const ints = new Int32Array(n);
  for (let i = 0; i < n; i++) ints[i] = qp.quantMin + i;
  const t = qwasm.fromIntRepr(ints, [n], qp.scales[c], qp.zeroPoints[c], dtype);
  try {
    return t.dequantize();
  } finally {
    t.dispose();
  }
}

/** Everything the explorer shows for one configuration. */
export function explore(qwasm, values, dims, s) {
  const qp = chooseWithObserver(qwasm, values, dims, s);
  const other = s.rounding === 'torch' ? 'onnx' : 'torch';
  const ints = quantizeInts(qwasm, values, dims, qp, s, s.rounding);
  const otherInts = quantizeInts(qwasm, values, dims, qp, s, other);
  const deq = dequantizeInts(qwasm, ints, dims, qp, s);
  const torchInts = s.rounding === 'torch' ? ints : otherInts;
  const onnxInts = s.rounding === 'torch' ? otherInts : ints;
  const disagree = [];
  let disagreeCount = 0;
  for (let i = 0; i < ints.length; i++) {
    if (torchInts[i] !== onnxInts[i]) {
      disagreeCount++;
      if (disagree.length < 50) disagree.push(i);
    }
  }
  let se = 0;
  let sx = 0;
  let maxAbs = 0;
  let dataMin = Infinity;
  let dataMax = -Infinity;
  for (let i = 0; i < values.length; i++) {
    const x = values[i];
    const e = deq[i] - x;
    se += e * e;
    sx += x * x;
    maxAbs = Math.max(maxAbs, Math.abs(e));
    if (x < dataMin) dataMin = x;
    if (x > dataMax) dataMax = x;
  }
  const mse = se / values.length;
  const sqnr = se === 0 ? Infinity : sx === 0 ? -Infinity : 10 * Math.log10(sx / se);
  return { qp, ints, deq, torchInts, onnxInts, disagreeCount, disagree, mse, sqnr, maxAbs, dataMin, dataMax };
}

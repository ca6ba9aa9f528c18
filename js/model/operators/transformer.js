// The operators of transformer encoders on qwasm's onnxruntime-exact float kernels (docs/transformer-ops.md):
// LayerNormalization, Gelu, Softmax on any axis, batched float MatMul with broadcasting, Gemm, and the com.microsoft
// forms onnxruntime's optimizer writes (SkipLayerNormalization, Gelu, FastGelu, BiasGelu, FusedMatMul, FusedGemm,
// MatMulIntegerToFloat, DynamicQuantizeMatMul, EmbedLayerNormalization, QEmbedLayerNormalization). Activations stay
// in wasm memory from one operator to the next; weights are packed once per model.
import { ModelFormatError, UnsupportedError } from '../../errors.js';
import { QW_DTYPE, QW_F32_BINARY_OP, QW_F32_UNARY_OP, QW_GELU_FORM } from '../../runtime/abi.js';
import { backend } from '../../runtime/runtime.js';
import { dynamicLinear, packLinear } from '../../ops/linear.js';
import { semanticsOf } from '../../semantics.js';
import { isPermutation } from '../../tensor/check.js';
import { contiguousStrides, copyStrided, rawTensor } from '../../tensor/qtensor.js';
import { dimsOf, dtypeOf, host, numel, ptrOf, toHost, wasmValue, weightTensor } from '../values.js';
import { A } from './attributes.js';
import { transposeHost } from './float.js';
import { axisOf, batchOffsets, broadcastStrides, int32Lists, produce, ptrOrNull, withWasm } from './kernel-args.js';

const where = (node) => `${node.opType} node "${node.name}"`;
const f = Math.fround;

function requireFloat(w, values, names) {
  values.forEach((v, i) => {
    if (v !== undefined && dtypeOf(v) !== 'float32') throw new ModelFormatError(`${w}: ${names[i]} must be float32, got ${dtypeOf(v)}`);
  });
}

/** A per-feature parameter (gamma, beta, bias) of `cols` values. */
function checkFeature(w, v, cols, name) {
  if (v !== undefined && numel(dimsOf(v)) !== cols) throw new ModelFormatError(`${w}: ${name} has shape [${dimsOf(v)}], the normalized size is ${cols}`);
}

// ---- normalization -----------------------------------------------------------------------------------

/** LayerNormalization / SkipLayerNormalization on qw_f32_layer_norm (onnxruntime 1.30's float Welford). */
function layerNorm(ctx, w, x, { skip, bias, gamma, beta, epsilon, axis, sumOutput }) {
  const dims = dimsOf(x);
  const a = axisOf(axis, dims.length, w);
  const cols = numel(dims.slice(a));
  const rows = cols === 0 ? 0 : numel(dims) / cols;
  checkFeature(w, gamma, cols, 'scale (gamma)');
  checkFeature(w, beta, cols, 'bias (beta)');
  checkFeature(w, bias, cols, 'bias');
  let skipRows = 0;
  if (skip !== undefined) {
    const n = numel(dimsOf(skip));
    if (cols === 0 || n % cols !== 0 || rows % (n / cols) !== 0) throw new ModelFormatError(`${w}: skip of shape [${dimsOf(skip)}] does not fit input [${dims}]`);
    skipRows = n / cols;
  }
  return withWasm(ctx, [x, skip, bias, gamma, beta], (wx, ws, wb, wg, wbeta) => {
    let sum;
    if (sumOutput) sum = produce('float32', dims, () => {});
    try {
      const y = produce('float32', dims, (py) => backend().call(w, 'qw_f32_layer_norm', rows, cols, ptrOf(wx), ptrOrNull(ws), skipRows,
        ptrOrNull(wb), ptrOf(wg), ptrOrNull(wbeta), epsilon, py, sum ? ptrOf(sum) : 0));
      return [y, sum];
    } catch (error) {
      if (sum) sum.storage.release();
      throw error;
    }
  });
}

/** EmbedLayerNormalization's per-token work (onnxruntime's embed_layer_norm.cc, in float32 step by step). */
function embedLayerNorm(w, ids, segments, lookup, gamma, beta, epsilon, hidden, out) {
  const [batch, seq] = ids.dims;
  const v = new Float32Array(hidden);
  for (let t = 0; t < batch * seq; t++) {
    const word = Number(ids.data[t]);
    const position = t % seq;
    const segment = segments ? Number(segments.data[t]) : -1;
    let sum = 0;
    for (let i = 0; i < hidden; i++) {
      v[i] = lookup(word, position, segment, i);
      sum = f(sum + v[i]);
    }
    const mean = f(sum / hidden);
    sum = 0;
    for (let i = 0; i < hidden; i++) {
      v[i] = f(v[i] - mean);
      sum = f(sum + f(v[i] * v[i]));
    }
    const e = f(Math.sqrt(f(f(sum / hidden) + epsilon)));
    for (let i = 0; i < hidden; i++) out[t * hidden + i] = f(f(f(v[i] / e) * gamma(i)) + beta(i));
  }
}

/** The checked index inputs and tables of (Q)EmbedLayerNormalization: { ids, segments, sizes }. */
function embedInputs(w, idsV, segV, tables) {
  const ids = toHost(idsV);
  if (ids.dtype !== 'int32' || ids.dims.length !== 2) throw new ModelFormatError(`${w}: input_ids must be int32 [batch, sequence], got ${ids.dtype} [${ids.dims}]`);
  const segments = segV ? toHost(segV) : null;
  if (segments && (segments.dtype !== 'int32' || segments.dims.join() !== ids.dims.join())) throw new ModelFormatError(`${w}: segment_ids must be int32 of input_ids' shape`);
  const hidden = tables.word.dims[1];
  for (const [name, t] of Object.entries(tables)) {
    if (t && (t.dims.length !== 2 || t.dims[1] !== hidden)) throw new ModelFormatError(`${w}: ${name}_embedding must be [rows, ${hidden}], got [${t.dims}]`);
  }
  const check = (v, n, name) => {
    const i = Number(v);
    if (!(i >= 0 && i < n)) throw new RangeError(`${w}: ${name} ${v} is out of range (${n} rows)`);
  };
  for (let t = 0; t < ids.data.length; t++) {
    check(ids.data[t], tables.word.dims[0], 'input id');
    if (segments) check(segments.data[t], tables.segment.dims[0], 'segment id');
  }
  check(ids.dims[1] - 1, tables.position.dims[0], 'position');
  return { ids, segments, hidden };
}

/** mask_index: per batch row, how many mask entries are 1 (zeros without a mask). */
function maskIndex(mask, batch) {
  const out = new Int32Array(batch);
  if (mask) {
    const h = toHost(mask);
    const seq = h.data.length / batch;
    for (let b = 0; b < batch; b++) for (let s = 0; s < seq; s++) if (Number(h.data[b * seq + s]) === 1) out[b]++;
  }
  return host('int32', [batch], out);
}

// ---- matrix products ---------------------------------------------------------------------------------

/** An operand as the product sees it: the stored tensor's dims and element strides after `perm` (a strided view). */
function checkPerm(w, perm, dims, name) {
  if (!isPermutation(perm, dims.length)) throw new ModelFormatError(`${w}: perm [${perm}] does not fit ${name} of shape [${dims}]`);
}

function viewOf(w, dims, perm, name) {
  if (!perm) return { dims, strides: contiguousStrides(dims) };
  checkPerm(w, perm, dims, name);
  const strides = contiguousStrides(dims);
  return { dims: perm.map((p) => dims[p]), strides: perm.map((p) => strides[p]) };
}

/**
 * The calls of a batched float MatMul (onnxruntime's MatMulComputeHelper) on strided views of A, B and Y: per
 * output matrix the element offsets, with the row strides (lda, ldb, ldy) and whether B is read transposed. An
 * operand whose view the GEMM cannot read in place (its rows not contiguous) is copied first (`copyA` / `copyB`
 * / `copyY`: its logical dims); a view is never read in a way that changes MLAS's summation order (its one-row GEMV
 * path is taken exactly when onnxruntime's materialized operands would take it). A 1-D B is one 1 x 1 product per
 * output row, as onnxruntime computes it.
 */
function matmulPlan(w, aStored, bStored, { transB, alpha, bPrepacked, permA, permB, permY }) {
  if (aStored.length === 0 || bStored.length === 0) throw new ModelFormatError(`${w}: MatMul of a scalar`);
  let A = viewOf(w, aStored, permA, 'A');
  let B = viewOf(w, bStored, permB, 'B');
  const aDims = A.dims;
  const bDims = B.dims;
  if (aDims.length === 1) A = { dims: [1, aDims[0]], strides: [aDims[0], A.strides[0]] }; // one row: any lda >= K
  if (bDims.length === 1) B = { dims: [bDims[0], 1], strides: [B.strides[0], 0] };
  const [m, k] = A.dims.slice(-2);
  const kb = transB ? B.dims.at(-1) : B.dims.at(-2);
  const n = transB ? B.dims.at(-2) : B.dims.at(-1);
  if (k !== kb) throw new ModelFormatError(`${w}: [${aDims}] x [${bDims}]${transB ? '^T' : ''} do not multiply (K ${k} vs ${kb})`);
  const column = bDims.length === 1; // B is one column: every call is 1 x 1, B and Y with stride 1
  // onnxruntime's path for materialized operands: transpose_b = transB; MLAS's GEMV for one row, alpha 1, no transposition
  const gemv = (rows, trans) => rows === 1 && alpha === 1 && !trans && !bPrepacked;
  const copyA = !column && A.strides.at(-1) !== 1 && m * k > 0 ? A.dims : null;
  if (copyA) A = { dims: A.dims, strides: contiguousStrides(A.dims) };
  // B's [K, N] strides (element strides along k and along n)
  const [bk, bn] = transB ? [B.strides.at(-1), B.strides.at(-2)] : [B.strides.at(-2), B.strides.at(-1)];
  let bTrans = transB;
  let ldb;
  let copyB = null;
  if (column) ldb = 1;
  else if (bn === 1 && (transB === 0 || !gemv(m, 0))) [bTrans, ldb] = [0, bk]; // rows of B along n
  else if (bk === 1 && (transB === 1 || !gemv(m, 0))) [bTrans, ldb] = [1, bn]; // B read transposed
  else {
    copyB = B.dims;
    B = { dims: B.dims, strides: contiguousStrides(B.dims) };
    ldb = transB ? k : n;
  }
  const batchA = A.dims.slice(0, -2);
  const batchB = B.dims.slice(0, -2);
  const { dims: batch } = broadcastStrides([batchA, batchB], w);
  const outDims = [...batch, ...(aDims.length === 1 ? [] : [m]), ...(bDims.length === 1 ? [] : [n])];
  // Y: the logical [batch, m, n] written into the stored layout permY(outDims)
  const Y = { dims: outDims, strides: contiguousStrides(outDims) };
  let stored = outDims;
  if (permY) {
    checkPerm(w, permY, outDims, 'the output');
    stored = permY.map((p) => outDims[p]);
    const strides = contiguousStrides(stored);
    permY.forEach((p, i) => { Y.strides[p] = strides[i]; });
  }
  const yFull = [...batch, m, column ? 1 : n];
  const yStrides = aDims.length === 1 || column ? null : Y.strides; // a 1-D operand: Y is contiguous (no perm then)
  const copyY = yStrides && yStrides.at(-1) !== 1 ? outDims : null;
  const ys = copyY || !yStrides ? contiguousStrides(yFull) : yStrides;
  const ldy = column ? 1 : ys.at(-2);
  const calls = [];
  const operands = [{ dims: batchA, strides: A.strides }, { dims: batchB, strides: B.strides }, { dims: batch, strides: ys }];
  for (const [offA, offB, offY] of batchOffsets(batch, operands)) {
    if (column) for (let r = 0; r < m; r++) calls.push([1, 1, offA + r * A.strides.at(-2), offB, offY + r]);
    else calls.push([m, n, offA, offB, offY]);
  }
  // several products of one shape (attention's heads): one qw_f32_matmul_batch call with their offsets in wasm memory
  const batched = !column && calls.length > 1 ? int32Lists([calls.flatMap(([, , offA, offB, offY]) => [offA, offB, offY])]) : null;
  return {
    k, calls, outDims, stored, lda: A.strides.at(-2), ldb, ldy, transB: bTrans, copyA, copyB, copyY,
    // copies of strided operands: [dims, element strides] of the view to make contiguous
    viewA: copyA ? viewOf(w, aStored, permA, 'A') : null, viewB: copyB ? viewOf(w, bStored, permB, 'B') : null, storedStrides: copyY ? Y.strides : null,
    workspace: backend().size('qw_f32_matmul_workspace_size', column ? 1 : m, column ? 1 : n, k),
    batch: batched ? { offsets: batched.ptrs[0], workspace: backend().size('qw_f32_matmul_batch_workspace_size', m, n, k) } : null,
    dispose: () => batched?.dispose(),
  };
}

/** A contiguous copy of a strided view (logical dims / strides over the value's data) for one call. */
function materialize(view, src, w) {
  const out = wasmValue('float32', view.dims);
  copyStrided(backend(), w, 4, view.dims, ptrOf(src), view.strides, ptrOf(out), contiguousStrides(view.dims));
  return out;
}

/**
 * y = alpha * A B (batched, broadcast) on qw_f32_matmul; bPrepacked: onnxruntime pre-packed B (MLAS's K blocks of
 * 256). perms: the Transposes folded into the product (passes/transformer.js), A / B read and Y written as views.
 */
function floatMatMul(ctx, w, a, b, { alpha = 1, transB = 0, bPrepacked = 0, permA, permB, permY }) {
  requireFloat(w, [a, b], ['A', 'B']);
  const p = ctx.memo([a, b], () => matmulPlan(w, dimsOf(a), dimsOf(b), { transB, alpha, bPrepacked, permA, permB, permY }));
  // a constant 2-D B read as it is stored is packed once (load time) and not uploaded per run
  const packedB = bPrepacked && !permB && !p.copyB ? packedFloatB(ctx, w, b, transB) : null;
  return withWasm(ctx, packedB ? [a] : [a, b], (wa, wb) => {
    const ca = p.copyA ? materialize(p.viewA, wa, w) : null;
    try {
      const cb = p.copyB ? materialize(p.viewB, wb, w) : null;
      try {
        const pa = ptrOf(ca ?? wa);
        const pb = packedB ? 0 : ptrOf(cb ?? wb);
        const run = (py) => (!packedB && p.batch ? backend().withBuffers([p.batch.workspace], (ws) => {
          const [m, n] = p.calls[0];
          backend().call(w, 'qw_f32_matmul_batch', p.calls.length, p.batch.offsets, m, n, p.k, pa, p.lda, pb, p.ldb, p.transB, bPrepacked, alpha, 0, py, p.ldy, ws);
        }) : backend().withBuffers([p.workspace], (ws) => {
          for (const [m, n, offA, offB, offY] of p.calls) {
            if (packedB) backend().call(w, 'qw_f32_matmul_packed', m, n, p.k, pa + 4 * offA, p.lda, packedB.packed, alpha, 0, py + 4 * offY, p.ldy, ws);
            else backend().call(w, 'qw_f32_matmul', m, n, p.k, pa + 4 * offA, p.lda, pb + 4 * offB, p.ldb, p.transB, bPrepacked, alpha, 0, py + 4 * offY, p.ldy, ws);
          }
        }));
        if (!p.copyY) return [produce('float32', p.stored, run)];
        const tmp = produce('float32', p.outDims, run);
        try {
          return [produce('float32', p.stored, (py) => copyStrided(backend(), w, 4, p.outDims, ptrOf(tmp), contiguousStrides(p.outDims), py, p.storedStrides))];
        } finally {
          tmp.storage.release();
        }
      } finally {
        cb?.storage.release();
      }
    } finally {
      ca?.storage.release();
    }
  });
}

const GEMM_ATTRIBUTES = { alpha: A.float(1), beta: A.float(1), transA: A.flag(0), transB: A.flag(0) };
/** Transposes folded into a float MatMul at load (passes/transformer.js): A and B read, Y written through them. */
const LAYOUT_ATTRIBUTES = { qwasm_perm_a: A.ints(undefined), qwasm_perm_b: A.ints(undefined), qwasm_perm_y: A.ints(undefined) };

/**
 * Gemm as onnxruntime: Y = C * beta broadcast over [M, N] first, then the product accumulated onto it (MLAS with
 * beta 1), B pre-packed when it is a constant; then FusedGemm's activation.
 */
function gemm(ctx, w, [a, b, c], attrs, activation) {
  requireFloat(w, [a, b, c], ['A', 'B', 'C']);
  const aDims = dimsOf(a);
  const bDims = dimsOf(b);
  if (aDims.length !== 2 || bDims.length !== 2) throw new ModelFormatError(`${w}: A and B must be 2-D, got [${aDims}] and [${bDims}]`);
  const [m, k] = attrs.transA ? [aDims[1], aDims[0]] : aDims;
  const [kb, n] = attrs.transB ? [bDims[1], bDims[0]] : bDims;
  if (k !== kb) throw new ModelFormatError(`${w}: [${aDims}]${attrs.transA ? '^T' : ''} x [${bDims}]${attrs.transB ? '^T' : ''} do not multiply`);
  const withC = c !== undefined && attrs.beta !== 0;
  const cDims = withC ? dimsOf(c) : [];
  if (cDims.some((d, i) => d !== 1 && d !== [m, n][i + 2 - cDims.length])) throw new ModelFormatError(`${w}: C of shape [${cDims}] does not broadcast to the output [${m}, ${n}]`);
  const args = ctx.memo([a, b, c], () => {
    const lists = withC ? int32Lists([[m, n], broadcastStrides([dimsOf(c), [m, n]], w).strides[0], [0, 0]]) : null;
    return { lists, workspace: backend().size('qw_f32_matmul_workspace_size', m, n, k), dispose: () => lists?.dispose() };
  });
  const prepacked = ctx.isConstant(ctx.node.inputs[1]) ? 1 : 0;
  const packedB = prepacked && k * n > 0 ? packedFloatB(ctx, w, b, attrs.transB) : null;
  return withWasm(ctx, packedB ? [a, undefined, c] : [a, b, c], (wa, wb, wc) => {
    const y = produce('float32', [m, n], (py) => backend().withBuffers([4, attrs.transA ? 4 * m * k : 0, args.workspace], (pbeta, pat, ws) => {
      if (withC) {
        backend().f32(pbeta, 1)[0] = attrs.beta;
        backend().call(w, 'qw_f32_binary', QW_F32_BINARY_OP.QW_F32_MUL, 2, args.lists.ptrs[0], ptrOf(wc), args.lists.ptrs[1], pbeta, args.lists.ptrs[2], py);
      }
      let pa = ptrOf(wa);
      if (attrs.transA) {
        // MLAS sums each output over k in order whatever the layout of A: a transposed copy gives the same bits
        const src = backend().f32(pa, m * k);
        const dst = backend().f32(pat, m * k);
        for (let i = 0; i < m; i++) for (let p = 0; p < k; p++) dst[i * k + p] = src[p * m + i];
        pa = pat;
      }
      if (packedB) backend().call(w, 'qw_f32_matmul_packed', m, n, k, pa, k, packedB.packed, attrs.alpha, withC ? 1 : 0, py, n, ws);
      else backend().call(w, 'qw_f32_matmul', m, n, k, pa, k, ptrOf(wb), attrs.transB ? k : n, attrs.transB, prepacked, attrs.alpha, withC ? 1 : 0, py, n, ws);
      if (activation === 'Tanh') backend().call(w, 'qw_f32_unary', QW_F32_UNARY_OP.QW_F32_TANH, m * n, py, py);
    }));
    return [y];
  });
}

/**
 * A float MatMul's / Gemm's constant 2-D B ([K, N], or [N, K] when transB) packed once into the float GEMM's column
 * panels (qw_f32_matmul_pack), as onnxruntime pre-packs it: the kernels then read each panel contiguously instead of
 * rows of B a row stride apart.
 */
class PackedFloatMatrix {
  constructor(w, b, transB) {
    const be = backend();
    const [rows, cols] = b.dims;
    [this.k, this.n] = transB ? [cols, rows] : [rows, cols];
    this.packed = be.alloc(be.size('qw_f32_matmul_pack_size', this.n, this.k));
    try {
      be.withBuffers([4 * rows * cols], (pb) => {
        be.f32(pb, rows * cols).set(b.data);
        be.call(w, 'qw_f32_matmul_pack', this.n, this.k, pb, cols, transB, this.packed);
      });
    } catch (error) {
      this.dispose();
      throw error;
    }
  }

  dispose() {
    backend().free(this.packed);
  }
}

/** The packed constant B of a float MatMul / Gemm node (made at load or on its first run, then kept); null when B is empty. */
function packedFloatB(ctx, w, b, transB) {
  const dims = dimsOf(b);
  if (dims.length !== 2 || numel(dims) === 0) return null;
  return ctx.prepare(() => new PackedFloatMatrix(w, toHost(b), transB ? 1 : 0), `f32 transB ${transB ? 1 : 0}`);
}

/** The `pack` hook of MatMul / Gemm: a constant float32 B packed at load (transB undefined: B is not read as stored). */
function packFloatBAtLoad(ctx, b, transB) {
  if (b !== undefined && transB !== undefined && dtypeOf(b) === 'float32') packedFloatB(ctx, where(ctx.node), b, transB);
}

/** Dynamic int8 weights: B [K, N] packed once, with its scales and the bias in wasm memory. */
class PackedDynamicWeights {
  constructor(w, b, scales, zeroPoints, bias) {
    const be = backend();
    const [k, n] = b.dims;
    if (b.dims.length !== 2) throw new UnsupportedError(`${w}: only 2-D constant weights are supported, got [${b.dims}]`);
    if (k === 0 || n === 0 || k >= 32768) throw new UnsupportedError(`${w}: a ${k} x ${n} weight is not supported (0 < K < 32768)`);
    if (b.dtype !== 'int8' && b.dtype !== 'uint8') throw new ModelFormatError(`${w}: B must be int8 or uint8, got ${b.dtype}`);
    if (scales.length !== 1 && scales.length !== n) throw new ModelFormatError(`${w}: ${scales.length} B scales for ${n} columns`);
    if (zeroPoints.length !== 1 && zeroPoints.length !== n) throw new ModelFormatError(`${w}: ${zeroPoints.length} B zero points for ${n} columns`);
    if (bias && bias.length !== n) throw new ModelFormatError(`${w}: bias has ${bias.length} values for ${n} columns`);
    this.k = k;
    this.n = n;
    this.scaleCount = scales.length;
    this.bytes = be.size('qw_gemm_pack_size', n, k);
    this.packed = be.alloc(this.bytes);
    this.params = be.alloc(4 * (n + scales.length + zeroPoints.length));
    this.scales = this.params;
    this.bias = bias ? this.params + 4 * scales.length : 0;
    const zp = this.params + 4 * (scales.length + n);
    be.f32(this.scales, scales.length).set(scales);
    if (bias) be.f32(this.bias, n).set(bias);
    be.i32(zp, zeroPoints.length).set(zeroPoints);
    try {
      be.withBuffers([k * n], (pb) => {
        be.u8(pb, k * n).set(new Uint8Array(b.data.buffer, b.data.byteOffset, k * n));
        be.call(w, 'qw_gemm_pack', n, k, pb, b.dtype === 'int8' ? QW_DTYPE.QW_QINT8 : QW_DTYPE.QW_QUINT8, 1, n, zp, zeroPoints.length, this.packed);
      });
    } catch (error) {
      this.dispose();
      throw error;
    }
  }

  dispose() {
    backend().free(this.packed);
    backend().free(this.params);
  }
}

/** The packed weights of a dynamic int8 matmul node (made on its first run from constant inputs, then kept). */
function dynamicWeights(ctx, w, [bIndex, scaleIndex, zpIndex, biasIndex], inputs) {
  return ctx.prepare(() => {
    for (const i of [bIndex, scaleIndex, zpIndex, biasIndex]) {
      if (i >= 0 && inputs[i] !== undefined && !ctx.isConstant(ctx.node.inputs[i])) throw new UnsupportedError(`${w}: input ${i} (${ctx.node.inputs[i]}) must be a constant`);
    }
    const b = toHost(inputs[bIndex]);
    const scales = toHost(inputs[scaleIndex]);
    if (scales.dtype !== 'float32') throw new ModelFormatError(`${w}: b_scale must be float32, got ${scales.dtype}`);
    const zp = zpIndex >= 0 && inputs[zpIndex] !== undefined ? toHost(inputs[zpIndex]) : null;
    if (zp && zp.dtype !== b.dtype) throw new ModelFormatError(`${w}: b_zero_point is ${zp.dtype}, B is ${b.dtype}`);
    const bias = biasIndex >= 0 && inputs[biasIndex] !== undefined ? toHost(inputs[biasIndex]) : null;
    if (bias && bias.dtype !== 'float32') throw new ModelFormatError(`${w}: bias must be float32, got ${bias.dtype}`);
    return new PackedDynamicWeights(w, b, scales.data, zp ? Int32Array.from(zp.data) : Int32Array.of(0), bias?.data ?? null);
  });
}

/**
 * DynamicQuantizeMatMul in a PyTorch profile (files of tools/export_torch.py: torch.ao's dynamic Linear, B = W^T
 * [K, N] with per-tensor or per-column scales): W packed once with packLinear, run by dynamicLinear (js/ops/linear.js)
 * in the profile's form ('qnnpack', 'fbgemm'), bit for bit PyTorch's.
 */
function pytorchLinearWeights(ctx, w, [, b, scale, zeroPoint, bias]) {
  return ctx.prepare(() => {
    for (const i of [1, 2, 3, 4]) {
      if (ctx.node.inputs[i] && !ctx.isConstant(ctx.node.inputs[i])) throw new UnsupportedError(`${w}: input ${i} (${ctx.node.inputs[i]}) must be a constant`);
    }
    const bt = toHost(b);
    if (bt.dims.length !== 2) throw new UnsupportedError(`${w}: only 2-D constant weights are supported, got [${bt.dims}]`);
    const biasData = bias === undefined ? null : toHost(bias);
    if (biasData && biasData.dtype !== 'float32') throw new ModelFormatError(`${w}: bias must be float32, got ${biasData.dtype}`);
    const weight = weightTensor(host(bt.dtype, [bt.dims[1], bt.dims[0]], transposeHost(bt, [1, 0]).data), scale, zeroPoint, 0, w);
    try {
      return packLinear(weight, biasData && Float32Array.from(biasData.data), { semantics: ctx.semantics });
    } finally {
      weight.dispose();
    }
  });
}

/** The form of a dynamic product: 'onnx' (onnxruntime's, qwasm's packed kernel) or a PyTorch engine's (dynamicLinear). */
const dynamicForm = (ctx) => semanticsOf(ctx, where(ctx.node)).form('dynamic');

/** At load: packs a dynamic product's weights when they are all constants (inputs: the constants, others undefined). */
function packIfConstant(ctx, indices, inputs) {
  const present = indices.filter((i) => i >= 0 && ctx.node.inputs[i]);
  if (!present.every((i) => inputs[i] !== undefined)) return;
  if (ctx.node.opType === 'DynamicQuantizeMatMul' && dynamicForm(ctx) !== 'onnx') pytorchLinearWeights(ctx, where(ctx.node), inputs);
  else dynamicWeights(ctx, where(ctx.node), indices, inputs);
}

/** Rows of K of a matmul input [..., K], and the output dims [..., N]. */
function rowsOf(w, x, packed) {
  const dims = dimsOf(x);
  if (dims.length === 0 || dims.at(-1) !== packed.k) throw new ModelFormatError(`${w}: A of shape [${dims}] does not multiply B [${packed.k}, ${packed.n}]`);
  return { m: numel(dims) / packed.k, outDims: [...dims.slice(0, -1), packed.n] };
}

/** uint8 activations (a QTensor from DynamicQuantizeLinear, or plain data) at a wasm address: fn(ptr). */
function withUint8(ctx, w, v, fn) {
  if (v.kind === 'q') {
    const r = rawTensor(v.q, w);
    if (r.dtype.name !== 'quint8') throw new UnsupportedError(`${w}: A must be uint8, got ${r.dtype.name}`);
    if (!v.q.isContiguous()) throw new UnsupportedError(`${w}: A must be contiguous`);
    return fn(r.ptr);
  }
  if (dtypeOf(v) !== 'uint8') throw new UnsupportedError(`${w}: A must be uint8, got ${dtypeOf(v)}`);
  return withWasm(ctx, [v], (wv) => fn(ptrOf(wv)));
}

const scalarOf = (v, w, name) => {
  const h = toHost(v);
  if (h.data.length !== 1) throw new ModelFormatError(`${w}: ${name} must be a scalar, got shape [${h.dims}]`);
  return Number(h.data[0]);
};

export const TRANSFORMER_OPERATORS = {
  LayerNormalization: {
    inputs: ['X: float32', 'Scale: float32', 'B?: float32'],
    outputs: ['Y', 'Mean?', 'InvStdDev?'],
    attributes: { axis: A.int(-1), epsilon: A.float(1e-5), stash_type: A.int(1) },
    prepare(attrs, node, opset, label) {
      if (node.outputs.slice(1).some((o) => o)) throw new UnsupportedError(`${label}: the Mean and InvStdDev outputs (training) are not supported`);
      return attrs;
    },
    run(ctx, [x, gamma, beta], attrs) {
      const w = where(ctx.node);
      requireFloat(w, [x, gamma, beta], ['X', 'Scale', 'B']);
      return layerNorm(ctx, w, x, { gamma, beta, epsilon: attrs.epsilon, axis: attrs.axis }).slice(0, 1);
    },
  },

  /** Gelu (opset 20): approximate "none" (erf) or "tanh", onnxruntime's formulas (qw_f32_gelu). */
  Gelu: {
    inputs: ['X: float32'],
    attributes: { approximate: A.string('none', ['none', 'tanh']) },
    run(ctx, [x], attrs) {
      const w = where(ctx.node);
      requireFloat(w, [x], ['X']);
      const form = attrs.approximate === 'tanh' ? QW_GELU_FORM.QW_GELU_TANH : QW_GELU_FORM.QW_GELU_ERF;
      const n = numel(dimsOf(x));
      return withWasm(ctx, [x], (wx) => [produce('float32', dimsOf(x), (y) => backend().call(w, 'qw_f32_gelu', form, 1, n, ptrOf(wx), 0, y))]);
    },
  },

  /** Softmax (opset < 13: over the dimensions from axis on, flattened; 13 on: along axis alone), MLAS's (qw_f32_softmax). */
  Softmax: {
    inputs: ['input: float32'],
    attributes: { axis: A.int(undefined) },
    prepare: (attrs, node, opset) => ({ ...attrs, axis: attrs.axis ?? (opset < 13 ? 1 : -1), flatten: opset < 13 }),
    run(ctx, [x], attrs) {
      const w = where(ctx.node);
      requireFloat(w, [x], ['input']);
      const dims = dimsOf(x);
      const p = ctx.memo([x], () => {
        const a = axisOf(attrs.axis, dims.length, w);
        const [len, inner] = attrs.flatten ? [numel(dims.slice(a)), 1] : [dims[a], numel(dims.slice(a + 1))];
        const outer = len * inner === 0 ? 0 : numel(dims) / (len * inner);
        return { outer, len, inner, workspace: backend().size('qw_f32_softmax_workspace_size', len, inner) };
      });
      return withWasm(ctx, [x], (wx) => [produce('float32', dims, (y) => backend().withBuffers([p.workspace], (ws) =>
        backend().call(w, 'qw_f32_softmax', p.outer, p.len, p.inner, ptrOf(wx), y, p.workspace ? ws : 0)))]);
    },
  },

  /** MatMul: N-D with broadcasting; a 2-D constant B counts as pre-packed (MLAS's K blocks of 256), as onnxruntime packs it. */
  MatMul: {
    inputs: ['A: float32', 'B: float32'],
    attributes: LAYOUT_ATTRIBUTES,
    run(ctx, [a, b], attrs) {
      const w = where(ctx.node);
      const bPrepacked = ctx.isConstant(ctx.node.inputs[1]) && dimsOf(b).length === 2 ? 1 : 0;
      return floatMatMul(ctx, w, a, b, { bPrepacked, permA: attrs.qwasm_perm_a, permB: attrs.qwasm_perm_b, permY: attrs.qwasm_perm_y });
    },
    pack: (ctx, [, b], attrs) => packFloatBAtLoad(ctx, b, attrs.qwasm_perm_b ? undefined : 0),
  },

  Gemm: {
    inputs: ['A: float32 rank 2', 'B: float32 rank 2', 'C?: float32 rank<=2'],
    attributes: GEMM_ATTRIBUTES,
    pack: (ctx, [, b], attrs) => packFloatBAtLoad(ctx, b, attrs.transB),
    run(ctx, inputs, attrs) {
      return gemm(ctx, where(ctx.node), inputs, attrs, null);
    },
  },
};

export const TRANSFORMER_CONTRIB_OPERATORS = {
  /** com.microsoft SkipLayerNormalization: (input + skip) (+ bias), then LayerNorm over the last axis; output 3 the sum. */
  SkipLayerNormalization: {
    inputs: ['input: float32', 'skip: float32', 'gamma: float32', 'beta?: float32', 'bias?: float32'],
    outputs: ['output', 'mean?', 'inv_std_var?', 'input_skip_bias_sum?'],
    attributes: { epsilon: A.float(1e-12) },
    prepare(attrs, node, opset, label) {
      if (node.outputs[1] || node.outputs[2]) throw new UnsupportedError(`${label}: the mean and inv_std_var outputs are not supported`);
      return attrs;
    },
    run(ctx, [x, skip, gamma, beta, bias], attrs) {
      const w = where(ctx.node);
      requireFloat(w, [x, skip, gamma, beta, bias], ['input', 'skip', 'gamma', 'beta', 'bias']);
      const [y, sum] = layerNorm(ctx, w, x, { skip, bias, gamma, beta, epsilon: attrs.epsilon, axis: -1, sumOutput: !!ctx.node.outputs[3] });
      return [y, undefined, undefined, sum];
    },
  },

  /** com.microsoft Gelu: the erf form, (x * 0.5) * (erf(x * 0.70710677) + 1). */
  Gelu: {
    inputs: ['X: float32'],
    run(ctx, [x]) {
      const w = where(ctx.node);
      requireFloat(w, [x], ['X']);
      const n = numel(dimsOf(x));
      return withWasm(ctx, [x], (wx) => [produce('float32', dimsOf(x), (y) => backend().call(w, 'qw_f32_gelu', QW_GELU_FORM.QW_GELU_ERF, 1, n, ptrOf(wx), 0, y))]);
    },
  },

  /** com.microsoft BiasGelu (erf) and FastGelu (tanh, bias optional): GELU of x + bias, the bias over the last axis. */
  BiasGelu: biasGelu(QW_GELU_FORM.QW_GELU_ERF, ['A: float32', 'B: float32']),
  FastGelu: biasGelu(QW_GELU_FORM.QW_GELU_TANH, ['X: float32', 'bias?: float32']),

  /** com.microsoft FusedMatMul: alpha * A B (transB), MatMul's batching; B is never pre-packed here. */
  FusedMatMul: {
    inputs: ['A: float32', 'B: float32'],
    attributes: { alpha: A.float(1), transA: A.flag(0), transB: A.flag(0), transBatchA: A.flag(0), transBatchB: A.flag(0), ...LAYOUT_ATTRIBUTES },
    prepare(attrs, node, opset, label) {
      if (attrs.transA || attrs.transBatchA || attrs.transBatchB) throw new UnsupportedError(`${label}: transA, transBatchA and transBatchB are not supported`);
      return attrs;
    },
    run(ctx, [a, b], attrs) {
      const w = where(ctx.node);
      if (attrs.transB && dimsOf(b).length < 2) throw new ModelFormatError(`${w}: transB needs a B of 2 or more dimensions`);
      return floatMatMul(ctx, w, a, b, { alpha: attrs.alpha, transB: attrs.transB, permA: attrs.qwasm_perm_a, permB: attrs.qwasm_perm_b, permY: attrs.qwasm_perm_y });
    },
  },

  /** com.microsoft FusedGemm: Gemm, then its activation (Tanh supported). */
  FusedGemm: {
    inputs: ['A: float32 rank 2', 'B: float32 rank 2', 'C?: float32 rank<=2'],
    attributes: { ...GEMM_ATTRIBUTES, activation: A.string(undefined), activation_alpha: A.float(undefined), activation_beta: A.float(undefined), activation_gamma: A.float(undefined) },
    prepare(attrs, node, opset, label) {
      if (attrs.activation !== undefined && attrs.activation !== 'Tanh') throw new UnsupportedError(`${label}: activation ${attrs.activation} is not supported (Tanh is)`);
      return attrs;
    },
    pack: (ctx, [, b], attrs) => packFloatBAtLoad(ctx, b, attrs.transB),
    run(ctx, inputs, attrs) {
      return gemm(ctx, where(ctx.node), inputs, attrs, attrs.activation);
    },
  },

  /**
   * com.microsoft MatMulIntegerToFloat: uint8 A (scale, zero point) times constant B packed once, to float:
   * (float)acc * (a_scale * b_scale) (+ bias), qw_matmul_integer_to_float.
   */
  MatMulIntegerToFloat: {
    inputs: ['A: uint8 ~int8', 'B: 8bit', 'a_scale: float32 scalar', 'b_scale: float32 rank<=1', 'a_zero_point?: =A scalar', 'b_zero_point?: =B rank<=1', 'bias?: float32 rank 1'],
    pack: (ctx, inputs) => packIfConstant(ctx, [1, 3, 5, 6], inputs),
    run(ctx, inputs) {
      const w = where(ctx.node);
      const [a, , as, , az] = inputs;
      const packed = dynamicWeights(ctx, w, [1, 3, 5, 6], inputs);
      const { m, outDims } = rowsOf(w, a, packed);
      const aScale = scalarOf(as, w, 'a_scale');
      const aZero = az ? scalarOf(az, w, 'a_zero_point') : 0;
      return withUint8(ctx, w, a, (pa) => [produce('float32', outDims, (y) => backend().withBuffers([backend().size('qw_dynamic_matmul_workspace_size', m, packed.n, packed.k)], (ws) =>
        backend().call(w, 'qw_matmul_integer_to_float', m, packed.n, packed.k, pa, aZero, aScale, packed.packed, packed.scales, packed.scaleCount, packed.bias, y, ws)))]);
    },
  },

  /**
   * com.microsoft DynamicQuantizeMatMul: the float input quantized to uint8 from its own range (onnxruntime's
   * DynamicQuantizeLinear), times constant B packed once, to float (+ bias): qw_dynamic_matmul.
   */
  DynamicQuantizeMatMul: {
    inputs: ['A: float32', 'B: 8bit rank 2 const', 'b_scale: float32 rank<=1 const', 'b_zero_point?: =B rank<=1 const', 'bias?: float32 rank 1 const'],
    uses: ['dynamic'],
    pack: (ctx, inputs) => packIfConstant(ctx, [1, 2, 3, 4], inputs),
    run(ctx, inputs) {
      const w = where(ctx.node);
      const [a] = inputs;
      requireFloat(w, [a], ['A']);
      if (dynamicForm(ctx) !== 'onnx') {
        const x = toHost(a);
        const y = dynamicLinear(x.data, x.dims, pytorchLinearWeights(ctx, w, inputs), { semantics: ctx.semantics });
        return [host('float32', y.shape, y.data)];
      }
      const packed = dynamicWeights(ctx, w, [1, 2, 3, 4], inputs);
      const { m, outDims } = rowsOf(w, a, packed);
      return withWasm(ctx, [a], (wa) => [produce('float32', outDims, (y) => backend().withBuffers([backend().size('qw_dynamic_matmul_workspace_size', m, packed.n, packed.k)], (ws) =>
        backend().call(w, 'qw_dynamic_matmul', m, packed.n, packed.k, ptrOf(wa), packed.packed, packed.scales, packed.scaleCount, packed.bias, y, ws)))]);
    },
  },

  /** com.microsoft EmbedLayerNormalization (word + position + segment embeddings, LayerNorm): onnxruntime's float kernel. */
  EmbedLayerNormalization: {
    inputs: ['input_ids: int32', 'segment_ids?: int32', 'word_embedding: float32 rank 2', 'position_embedding: float32 rank 2', 'segment_embedding?: float32 rank 2', 'gamma: float32', 'beta: float32', 'mask?: int32', 'position_ids?'],
    outputs: ['output', 'mask_index?', 'embedding_sum?'],
    attributes: { epsilon: A.float(1e-12), mask_index_type: A.int(1) },
    prepare(attrs, node, opset, label) {
      if (node.inputs[8]) throw new UnsupportedError(`${label}: position_ids are not supported`);
      if (node.outputs[2]) throw new UnsupportedError(`${label}: the embedding_sum output is not supported`);
      return attrs;
    },
    run(ctx, [idsV, segV, wordV, posV, segEmbV, gammaV, betaV, mask], attrs) {
      const w = where(ctx.node);
      requireFloat(w, [wordV, posV, segEmbV, gammaV, betaV], ['word_embedding', 'position_embedding', 'segment_embedding', 'gamma', 'beta']);
      const [word, position, segment, gamma, beta] = [wordV, posV, segEmbV, gammaV, betaV].map((v) => v && toHost(v));
      const { ids, segments, hidden } = embedInputs(w, idsV, segV, { word, position, segment: segV ? segment : null });
      checkFeature(w, gammaV, hidden, 'gamma');
      checkFeature(w, betaV, hidden, 'beta');
      const [batch, seq] = ids.dims;
      const y = produce('float32', [batch, seq, hidden], (py) => {
        const out = backend().f32(py, batch * seq * hidden);
        const wd = word.data;
        const pd = position.data;
        const sd = segments ? segment.data : null;
        embedLayerNorm(w, ids, segments, (wi, pi, si, i) => {
          const v = f(wd[wi * hidden + i] + pd[pi * hidden + i]);
          return sd ? f(v + sd[si * hidden + i]) : v;
        },
          (i) => gamma.data[i], (i) => beta.data[i], attrs.epsilon, hidden, out);
      });
      return [y, maskIndex(mask, batch)];
    },
  },

  /** com.microsoft QEmbedLayerNormalization: EmbedLayerNormalization over uint8 / int8 tables dequantized per element. */
  QEmbedLayerNormalization: {
    inputs: ['input_ids: int32', 'segment_ids?: int32', 'word_embedding_quant: 8bit rank 2', 'position_embedding_quant: =word_embedding_quant rank 2',
      'segment_embedding?: =word_embedding_quant rank 2', 'gamma_quant: =word_embedding_quant', 'beta_quant: =word_embedding_quant', 'mask?: int32',
      'word_embedding_scale: float32 scalar', 'position_embedding_scale: float32 scalar', 'segment_embedding_scale?: float32 scalar', 'gamma_scale: float32 scalar', 'beta_scale: float32 scalar',
      'word_embedding_zero_point: =word_embedding_quant scalar', 'position_embedding_zero_point: =word_embedding_quant scalar', 'segment_embedding_zero_point?: =word_embedding_quant scalar',
      'gamma_zero_point: =word_embedding_quant scalar', 'beta_zero_point: =word_embedding_quant scalar'],
    outputs: ['output', 'mask_index?'],
    attributes: { epsilon: A.float(1e-12) },
    run(ctx, inputs, attrs) {
      const w = where(ctx.node);
      const [idsV, segV, wordV, posV, segEmbV, gammaV, betaV, mask] = inputs;
      const [word, position, segment, gamma, beta] = [wordV, posV, segEmbV, gammaV, betaV].map((v) => v && toHost(v));
      const type = word.dtype;
      if (type !== 'uint8' && type !== 'int8') throw new ModelFormatError(`${w}: word_embedding_quant must be uint8 or int8, got ${type}`);
      const params = [8, 9, 10, 11, 12].map((i, j) => (inputs[i] === undefined ? null : { scale: f(scalarOf(inputs[i], w, `input ${i}`)), zp: scalarOf(inputs[i + 5], w, `input ${i + 5}`), name: j }));
      for (const t of [word, position, segV ? segment : null, gamma, beta]) if (t && t.dtype !== type) throw new ModelFormatError(`${w}: every quantized table must be ${type}, got ${t.dtype}`);
      const { ids, segments, hidden } = embedInputs(w, idsV, segV, { word, position, segment: segV ? segment : null });
      checkFeature(w, gammaV, hidden, 'gamma');
      checkFeature(w, betaV, hidden, 'beta');
      const dq = (t, p, i) => f((t.data[i] - p.zp) * p.scale);
      const [batch, seq] = ids.dims;
      const y = produce('float32', [batch, seq, hidden], (py) => {
        const out = backend().f32(py, batch * seq * hidden);
        embedLayerNorm(w, ids, segments, (wi, pi, si, i) => {
          const v = f(dq(word, params[0], wi * hidden + i) + dq(position, params[1], pi * hidden + i));
          return segments ? f(v + dq(segment, params[2], si * hidden + i)) : v;
        }, (i) => dq(gamma, params[3], i), (i) => dq(beta, params[4], i), attrs.epsilon, hidden, out);
      });
      return [y, maskIndex(mask, batch)];
    },
  },
};

function biasGelu(form, inputs) {
  return {
    inputs,
    run(ctx, [x, bias]) {
      const w = where(ctx.node);
      requireFloat(w, [x, bias], ['input', 'bias']);
      const dims = dimsOf(x);
      const n = numel(dims);
      const cols = bias === undefined ? n : numel(dimsOf(bias));
      if (bias !== undefined && (dims.length === 0 || dims.at(-1) !== cols || dimsOf(bias).length !== 1)) throw new ModelFormatError(`${w}: bias must be 1-D of the last dimension ${dims.at(-1)}, got [${dimsOf(bias)}]`);
      const rows = cols === 0 ? 0 : n / cols;
      return withWasm(ctx, [x, bias], (wx, wb) => [produce('float32', dims, (y) => backend().call(w, 'qw_f32_gelu', form, rows, cols, ptrOf(wx), ptrOrNull(wb), y))]);
    },
  };
}

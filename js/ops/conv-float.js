// float32 2-D convolution on NCHW data, in wasm (src/operators/conv2d-f32.c): what the model loader
// runs for a float ONNX Conv, so float models (calibration, post-training quantization) run end to end.
// Weights are packed once into wasm memory; every call copies the input in and the output out.
import { backend } from '../runtime/runtime.js';
import { Allocations, forget, releaseWhenCollected } from '../runtime/owned.js';
import { checkBytes, show } from '../tensor/check.js';
import { convGeometry, convOutputSize, convShapeStruct } from '../tensor/layout.js';

const numel = (dims) => dims.reduce((a, b) => a * b, 1);

function floatArray(v, where, name) {
  if (v instanceof Float32Array) return v;
  if (ArrayBuffer.isView(v) || Array.isArray(v)) return Float32Array.from(v, Number);
  throw new TypeError(`${where}: ${name} must be a Float32Array, got ${show(v)}`);
}

/** A float convolution's weights packed in wasm memory, with its geometry. Made by packConv2dFloat. */
export class PackedConv2dFloat {
  #backend;
  #mem; // packed, workspace: freed by dispose(), or when the object is collected undisposed
  #workspaceBytes = 0;

  constructor(weight, weightDims, bias, { stride = 1, padding = 0, dilation = 1, groups = 1 } = {}) {
    const where = 'packConv2dFloat';
    if (!Array.isArray(weightDims) || weightDims.length !== 4 || !weightDims.every((d) => Number.isInteger(d) && d > 0)) {
      throw new RangeError(`${where}: weight must be [outChannels, inChannels / groups, kH, kW] with positive sizes, got shape ${show(weightDims)}`);
    }
    const w = floatArray(weight, where, 'weight');
    if (w.length !== numel(weightDims)) throw new RangeError(`${where}: weight has ${w.length} values for shape ${show(weightDims)}`);
    const b = bias == null ? null : floatArray(bias, where, 'bias');
    const outC = weightDims[0];
    if (b && b.length !== outC) throw new RangeError(`${where}: bias must have ${outC} values (one per output channel), got ${b.length}`);
    this.geometry = convGeometry(weightDims, { stride, padding, dilation, groups }, where);
    const be = backend();
    this.#backend = be;
    const mem = new Allocations(be);
    this.#mem = mem;
    const g = this.geometry;
    // The packing needs channels and kernel only; the spatial size of a call comes later.
    const shape = convShapeStruct(g, 1, (g.kh - 1) * g.dilation[0] + 1, (g.kw - 1) * g.dilation[1] + 1);
    checkBytes(w.length, 4, where, 'the weight');
    be.withBuffers([64, 4 * w.length, 4 * outC], (ps, pw, pb) => {
      be.i32(ps, 16).set(shape);
      be.f32(pw, w.length).set(w);
      if (b) be.f32(pb, outC).set(b);
      const ptr = be.alloc(be.bytes(where, `the packed weights of shape ${show(weightDims)}`, 'qw_f32_conv2d_pack_size', ps), where);
      try {
        be.call(where, 'qw_f32_conv2d_pack', ps, pw, b ? pb : 0, ptr);
      } catch (error) {
        be.free(ptr);
        throw error;
      }
      mem.set('packed', ptr);
    }, where);
    releaseWhenCollected(this, mem);
  }

  get packedPtr() {
    const ptr = this.#mem.get('packed');
    if (ptr === 0) throw new TypeError('PackedConv2dFloat: the packed weights were disposed');
    return ptr;
  }

  /** A workspace of at least `bytes`, kept between calls. */
  workspace(bytes, where = 'conv2dFloat') {
    if (bytes > this.#workspaceBytes) {
      this.#mem.free('workspace');
      this.#workspaceBytes = 0;
      this.#mem.set('workspace', this.#backend.outsidePlan(() => this.#backend.alloc(bytes, where))); // lives with the weights
      this.#workspaceBytes = bytes;
    }
    return this.#mem.get('workspace');
  }

  dispose() {
    forget(this);
    this.#mem.freeAll();
    this.#workspaceBytes = 0;
  }
}

/**
 * Packs a float convolution weight [outChannels, inChannels / groups, kH, kW] (row-major Float32Array)
 * and an optional bias [outChannels]. options: { stride = 1, padding = 0 (number, [h, w] or
 * [top, left, bottom, right]), dilation = 1, groups = 1 }.
 */
export function packConv2dFloat(weight, weightDims, bias = null, options = {}) {
  return new PackedConv2dFloat(weight, weightDims, bias, options);
}

/**
 * float32 convolution: x [N, C, H, W] (row-major Float32Array) -> { dims: [N, outC, outH, outW], data }.
 * Each output is bias + the taps in (channel, kernel row, kernel column) order, float32 without FMA:
 * the SIMD and scalar builds give the same bits. With { relu: true }, the output goes through
 * v > 0 ? v : 0 in wasm before it is copied out (the bits of the loader's float Relu).
 */
export function conv2dFloat(x, xDims, weights, { relu = false } = {}) {
  const where = 'conv2dFloat';
  if (!(weights instanceof PackedConv2dFloat)) throw new TypeError(`${where}: weights must come from packConv2dFloat(), got ${show(weights)}`);
  const g = weights.geometry;
  if (!Array.isArray(xDims) || xDims.length !== 4 || xDims[1] !== g.inC || !xDims.every((d) => Number.isInteger(d) && d >= 0)) {
    throw new RangeError(`${where}: input must be [N, ${g.inC}, H, W], got shape ${show(xDims)}`);
  }
  const xd = floatArray(x, where, 'input');
  if (xd.length !== numel(xDims)) throw new RangeError(`${where}: input has ${xd.length} values for shape ${show(xDims)}`);
  const [batch, , h, w] = xDims;
  const b = backend();
  void weights.packedPtr;
  const [oh, ow] = convOutputSize(g, h, w, where);
  const dims = [batch, g.outC, oh, ow];
  const n = numel(dims);
  checkBytes(xd.length, 4, where, 'the input');
  checkBytes(n, 4, where, () => `the output of shape ${show(dims)}`);
  return b.withBuffers([64], (ps) => {
    b.i32(ps, 16).set(convShapeStruct(g, batch, h, w));
    const ws = weights.workspace(b.bytes(where, 'the workspace', 'qw_f32_conv2d_workspace_size', ps), where);
    return b.withBuffers([4 * xd.length, 4 * n], (px, py) => {
      b.f32(px, xd.length).set(xd);
      b.call(where, 'qw_f32_conv2d', ps, px, weights.packedPtr, py, ws);
      if (relu) b.call(where, 'qw_f32_relu', n, py, py);
      return { dims, data: b.f32(py, n).slice() };
    }, where);
  }, where);
}

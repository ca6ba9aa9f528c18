// loadModel: an ONNX file (QOperator, QDQ, dynamically quantized, float, or written by tools/export_torch.py)
// as a Model that runs with qwasm's kernels. Tensors live in wasm memory between layers and are released
// right after their last consumer (liveness computed once at load); their bytes come from one arena
// planned on the first run with given input shapes (js/model/memory-plan.js). Everything that depends only
// on the input shapes (Shape / Gather / Concat chains, position ids, constant masks) is computed on that first
// run and kept for those shapes (js/model/shape-plans.js), so later runs do no shape arithmetic.
import { ModelFormatError, NotImplementedError, UnsupportedError } from '../errors.js';
import { readBytes } from '../runtime/host.js';
import { backend } from '../runtime/runtime.js';
import { forget, releaseWhenCollected } from '../runtime/owned.js';
import { untracked } from '../tensor/scope.js';
import { semanticsOf } from '../semantics.js';
import { QTensor, fromIntRepr, fromIntReprPerChannel } from '../tensor/qtensor.js';
import { newStorage } from '../tensor/qtensor.js';
import { MemoryPlan } from './memory-plan.js';
import { checkGraphNames, decodeOnnx, isDecodedGraph } from './onnx.js';
import { optimize } from './passes/passes.js';
import { checkInputValues, checkNodesBeforePasses, nodeLabel, prepareNode } from './operators/registry.js';
import { describeNodes } from './layers.js';
import { MAX_RANK } from '../tensor/check.js';
import { sameShape } from '../ops/op.js';
import { ShapePlans, staticNodes } from './shape-plans.js';
import { BYTES, ONNX_OF, dimsOf, dimsView, dtypeOf, constantValue, host, numel, qvalue, releaseValue, toHost, viewValue, wasmValue } from './values.js';

export async function readSource(source) {
  if (source instanceof Uint8Array) return source;
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  if (typeof source === 'string' || source instanceof URL) return readBytes(source, 'loadModel');
  throw new TypeError('loadModel: the model must be a Uint8Array, an ArrayBuffer or a URL / path');
}

/**
 * Loads an ONNX model. options: { semantics } (a profile of semantics.js) overrides the file's: files written by
 * tools/export_torch.py record theirs in the metadata entry qwasm.semantics; other files are 'onnx'.
 */
export async function loadModel(source, options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError(`loadModel: options must be an object, got ${String(options)}`);
  const bytes = await readSource(source);
  const graph = await decodeOnnx(bytes);
  checkNodesBeforePasses(graph); // the passes read attributes and inputs: they see only well-formed ones
  optimize(graph);
  return new Model(graph, options);
}

export class Model {
  #graph;
  #ctx;
  #order;
  #steps; // per node: { operator, attrs } from the registry, attributes parsed once
  #lastUse;
  #releases; // per node: the values that are dead once it has run (inputs read for the last time, outputs never read)
  #memory;
  #described;
  #prepared = new Map(); // node -> { key, packed }: weights packed on the node's first run
  #static; // per node: true when its outputs depend only on constants and the input shapes
  #plans; // shape key -> what depends on the input shapes alone (js/model/shape-plans.js)
  #plan = null; // the current run's
  #step = 0; // the index of the running node
  #persistent = new Set(); // host data that outlives runs (initializers, shape-plan values): uploaded once
  #constants = new Map(); // initializer name -> its value (frozen), made on first read and shared by every run
  #uploads = new Map(); // such data -> its storage in wasm memory
  #graphInputs;
  #inputConstants = []; // per node: its inputs' constant values (undefined for the others), resolved on its first run
  #checked = []; // per node: { shapes, dtypes } of its non-constant inputs (null elsewhere) when they last passed the checks
  #memoryOwner; // ModelMemory: what dispose() (or the finalizer) gives back
  #disposed = false;

  /** @internal Use loadModel(). */
  constructor(graph, options = {}) {
    if (!isDecodedGraph(graph)) throw new TypeError('Model: use loadModel() to load a model');
    if (options === null || typeof options !== 'object') throw new TypeError(`Model: options must be an object, got ${String(options)}`);
    this.#graph = graph;
    const name = options.semantics ?? graph.metadata.get('qwasm.semantics') ?? 'onnx';
    let semantics;
    try {
      semantics = semanticsOf({ semantics: name }, 'loadModel');
    } catch (error) {
      throw new UnsupportedError(error.message, { cause: error });
    }
    this.semantics = name;
    // PyTorch's ATen dispatch level where the file was exported (tools/export_torch.py): which channels PyTorch
    // 2.x's channels-last pooling rounds in its vector loops (ops/pooling.js).
    const capability = graph.metadata.get('qwasm.torch_cpu_capability')?.toLowerCase();
    if (capability !== undefined && !['avx512', 'avx2', 'default'].includes(capability)) {
      throw new ModelFormatError(`metadata qwasm.torch_cpu_capability: expected AVX512, AVX2 or DEFAULT, got "${graph.metadata.get('qwasm.torch_cpu_capability')}"`);
    }
    // Every node must have an operator whose semantics forms exist, valid attributes, every input a producer:
    // checked now, not in the middle of a run.
    checkGraphNames(graph, 'after the graph passes');
    this.#steps = graph.nodes.map((node) => prepareNode(node, graph, semantics));
    const available = new Set([...graph.initializers.keys(), ...graph.inputs.map((i) => i.name), '']);
    for (const node of graph.nodes) {
      for (const input of node.inputs) {
        if (!available.has(input)) throw new ModelFormatError(`node "${node.name}" (${node.opType}) reads "${input}", which no earlier node or input produces`);
      }
      for (const output of node.outputs) available.add(output);
    }
    for (const o of graph.outputs) {
      if (!available.has(o.name)) throw new ModelFormatError(`graph output "${o.name}" is not produced by any node`);
    }
    this.#order = graph.nodes;
    const last = new Map();
    graph.nodes.forEach((node, i) => node.inputs.forEach((n) => last.set(n, i)));
    for (const o of graph.outputs) last.set(o.name, Infinity);
    this.#lastUse = last;
    this.#graphInputs = new Set(graph.inputs.map((i) => i.name));
    this.#releases = graph.nodes.map((node, i) => [
      ...new Set(node.inputs.filter((n) => n !== '' && last.get(n) === i && !this.#graphInputs.has(n))),
      ...node.outputs.filter((n) => n !== '' && !last.has(n)),
    ]);
    this.#described = describeNodes(graph.nodes, graph.initializers);
    this.#static = staticNodes(graph, this.#steps.map((s) => s.operator));
    for (const init of graph.initializers.values()) this.#persistent.add(init.data);
    this.#memory = new MemoryPlan(backend());
    // The callback is made outside this constructor: a closure made here would keep the constructor's scope, and
    // with it the Model, alive from the finalizer's ModelMemory (which holds the plans).
    this.#plans = new ShapePlans(planForgetter(this.#persistent, this.#uploads));
    const prepared = this.#prepared;
    this.#memoryOwner = new ModelMemory(prepared, this.#plans, this.#uploads, this.#memory);
    releaseWhenCollected(this, this.#memoryOwner); // a safety net: dispose() what you load
    const constantNames = new Set(graph.initializers.keys());
    this.#ctx = {
      semantics: name,
      cpuCapability: capability,
      opset: graph.opsets.get(''),
      // Packed weights outlive the run, so they are allocated outside the activation arena. key: what
      // the packing depends on besides the constants (e.g. auto_pad's pads); a new key packs again.
      prepare: (make, key = '') => {
        let p = prepared.get(this.#ctx.node);
        if (p && p.key !== key) {
          p.packed.dispose();
          p = null;
        }
        if (!p) {
          p = { key, packed: backend().outsidePlan(make) };
          prepared.set(this.#ctx.node, p);
        }
        return p.packed;
      },
      isConstant: (valueName) => constantNames.has(valueName),
      node: null,
      /** The value in wasm memory, as a wasm value the caller releases (host data is copied in; constants once). */
      wasm: (v) => this.#toWasm(v),
      /**
       * What fn() computes from the shapes of `inputs` (stride lists, kernel arguments), computed once per shape
       * plan and node, outside the arena (a `dispose()` of the result runs when the plan is dropped).
       */
      memo: (inputs, fn) => this.#memo(inputs, fn),
    };
    this.inputs = graph.inputs.map((i) => ({ ...i, qparams: this.#inputQParams(i.name) }));
    this.outputs = graph.outputs.map((o) => ({ ...o, qparams: this.#outputQParams(o.name) }));
    this.metadata = Object.fromEntries(graph.metadata);
    this.peakBytes = 0;
    this.#packAtLoad();
  }

  /**
   * Packs the constant weights of the operators that declare `pack` (the dynamic int8 products) now, so that no
   * run pays for it. A node whose weights are not constants is left to fail or pack at run time.
   */
  #packAtLoad() {
    const inits = this.#graph.initializers;
    try {
      this.#order.forEach((node, i) => {
        const { operator, attrs } = this.#steps[i];
        if (!operator.pack) return;
        this.#ctx.node = node;
        operator.pack(this.#ctx, node.inputs.map((n) => (inits.has(n) ? host(inits.get(n).dtype, inits.get(n).dims, inits.get(n).data) : undefined)), attrs);
      });
    } catch (error) {
      this.dispose();
      throw error;
    } finally {
      this.#ctx.node = null;
    }
  }

  /** The qparams a graph input is quantized with (by its QuantizeLinear) or read with (8-bit input); null if none. */
  #inputQParams(name) {
    const i = this.#order.findIndex((n) => n.inputs.includes(name));
    if (i < 0) return null;
    const node = this.#order[i];
    const d = this.#described[i];
    if (node.opType === 'QuantizeLinear') return d.output && { ...d.output };
    return node.inputs[0] === name && d.input ? { ...d.input } : null;
  }

  /** The qparams of an 8-bit graph output, or of the 8-bit tensor a float output was dequantized from; null if none. */
  #outputQParams(name) {
    const i = this.#order.findIndex((n) => n.outputs.includes(name));
    if (i < 0) return null;
    const d = this.#described[i];
    const q = this.#order[i].opType === 'DequantizeLinear' ? d.input : d.output;
    return q && { ...q };
  }

  /**
   * One entry per node, in execution order: { name, opType, domain, inputs, outputs, attributes, input,
   * output, weight, bias } (js/model/layers.js: the qparams of its 8-bit input and output, its weight's
   * dtype, dims and qparams, its bias; null where they do not apply). weight(name) gives the weight itself.
   */
  get layers() {
    return this.#order.map((n, i) => {
      const { input, output, weight, bias } = this.#described[i];
      return {
        name: n.name, opType: n.opType, domain: n.domain, inputs: n.inputs.slice(), outputs: n.outputs.slice(), attributes: { ...n.attributes },
        input: input && { ...input }, output: output && { ...output }, bias: bias && { ...bias, dims: bias.dims.slice() },
        weight: weight && { ...weight, dims: weight.dims.slice(), scales: weight.scales.slice(), zeroPoints: weight.zeroPoints.slice() },
      };
    });
  }

  /**
   * A layer's weight as a new QTensor with its qparams (per channel along `layers[i].weight.axis` when
   * it has several scales). The caller owns it (dispose()). Throws when the layer has no constant weight.
   */
  weight(layerName) {
    if (typeof layerName !== 'string') throw new TypeError(`Model.weight: layerName must be a string, got ${typeof layerName}`);
    const i = this.#order.findIndex((n) => n.name === layerName);
    if (i < 0) throw new RangeError(`Model.weight: no layer named "${layerName}"`);
    const w = this.#described[i].weight;
    if (!w) throw new RangeError(`Model.weight: layer "${layerName}" (${this.#order[i].opType}) has no constant quantized weight`);
    const data = this.#graph.initializers.get(w.name).data;
    const dtype = w.dtype === 'uint8' ? 'quint8' : 'qint8';
    return w.scales.length > 1
      ? fromIntReprPerChannel(data, w.dims, w.scales, w.zeroPoints, w.axis, dtype)
      : fromIntRepr(data, w.dims, w.scales[0], w.zeroPoints[0], dtype);
  }

  /**
   * A copy of a constant (initializer) of the graph: { dtype, dims, data }, or undefined when `name` is not one.
   * For inspecting a layer's weights, bias and qparams (the names Model.layers lists as inputs).
   */
  initializer(name) {
    const init = this.#graph.initializers.get(name);
    if (!init) return undefined;
    return { dtype: init.dtype, dims: init.dims.slice(), data: init.data.slice() };
  }

  /**
   * A feed checked against its input: { q } (a QTensor, cloned when the run starts) or { dims, data }. Everything
   * is checked here, before the run allocates anything.
   */
  #feed(spec, value) {
    const where = `Model.run: input "${spec.name}"`;
    const fixedDims = spec.dims.length > 0; // a file without a shape declares no dimensions at all
    const checkShape = (dims) => {
      if (fixedDims && dims.length !== spec.dims.length) {
        throw new RangeError(`${where} has ${dims.length} dimensions [${dims}], the model expects ${spec.dims.length} [${spec.dims}]`);
      }
      spec.dims.forEach((d, i) => {
        if (typeof d === 'number' && d !== dims[i]) throw new RangeError(`${where}: dimension ${i} is ${dims[i]}, the model expects ${d}`);
      });
    };
    if (value instanceof QTensor) {
      if (value.disposed) throw new TypeError(`${where} is a disposed QTensor`);
      if (ONNX_OF[value.dtype] !== spec.dtype) throw new TypeError(`${where} must be ${spec.dtype}, got a ${value.dtype} QTensor`);
      checkShape(value.shape);
      return { q: value, dims: value.shape.slice() };
    }
    const data = ArrayBuffer.isView(value) ? value : value?.data;
    const Expected = INPUT_ARRAYS[spec.dtype];
    if (!Expected || !(data instanceof Expected)) {
      const shown = value !== null && typeof value === 'object' && 'data' in value ? data : value; // { data } reports its data
      const got = shown === null ? 'null' : shown?.constructor?.name ?? typeof shown;
      throw new TypeError(`${where} must be ${spec.dtype}: a ${INPUT_ARRAY_NAMES[spec.dtype] ?? Expected?.name ?? 'typed array'} or { data, dims }${ONNX_OF.quint8 === spec.dtype || ONNX_OF.qint8 === spec.dtype ? ' or a QTensor' : ''}, got ${got}`);
    }
    let dims = ArrayBuffer.isView(value) ? undefined : value.dims;
    if (dims === undefined) {
      dims = spec.dims.map((d) => {
        if (typeof d !== 'number') throw new TypeError(`${where}: dimension "${d}" is symbolic; pass { data, dims }`);
        return d;
      });
    } else {
      if (!Array.isArray(dims)) throw new TypeError(`${where}: dims must be an array of non-negative integers, got ${typeof dims === 'string' ? JSON.stringify(dims) : typeof dims}`);
      if (dims.length > MAX_RANK) throw new RangeError(`${where}: dims has ${dims.length} dimensions; at most ${MAX_RANK} are supported`);
      dims.forEach((d, i) => {
        if (!Number.isSafeInteger(d) || d < 0) throw new RangeError(`${where}: dims[${i}] must be a non-negative integer, got ${typeof d === 'bigint' ? `${d}n` : String(d)}`);
      });
      dims = dims.slice();
    }
    const expected = dims.reduce((a, b) => a * b, 1);
    if (data.length !== expected) throw new RangeError(`${where} has ${data.length} values, its shape [${dims}] needs ${expected}`);
    checkShape(dims);
    return { dims, data };
  }

  /** A value in wasm memory (a reference the caller releases): wasm data shared, host data copied in. */
  #toWasm(v) {
    if (v.kind === 'wasm') return viewValue(v, v.dims);
    if (v.kind !== 'host') throw new Error(`qwasm internal error: ${v.kind} value where plain data is expected`);
    const bytes = numel(v.dims) * BYTES[v.dtype];
    const source = new Uint8Array(v.data.buffer, v.data.byteOffset, bytes);
    let storage = this.#uploads.get(v.data);
    if (!storage && this.#persistent.has(v.data)) {
      // constants and shape-plan values: copied into wasm memory once, outside the arena
      storage = backend().outsidePlan(() => newStorage(Math.max(1, bytes)));
      backend().u8(storage.ptr, bytes).set(source);
      this.#uploads.set(v.data, storage);
    }
    if (storage) return { kind: 'wasm', dtype: v.dtype, dims: v.dims, storage: storage.retain(), offset: 0 };
    const w = wasmValue(v.dtype, v.dims);
    backend().u8(w.storage.ptr, bytes).set(source);
    return w;
  }

  #memo(inputs, fn) {
    const memos = this.#plan.memos;
    const m = memos[this.#step];
    if (m && sameShapes(m.shapes, inputs)) return m.value;
    m?.value?.dispose?.();
    memos[this.#step] = undefined;
    const value = backend().outsidePlan(fn);
    memos[this.#step] = { shapes: inputs.map(shapeRecord), value };
    return value;
  }

  /**
   * The activation arena: { arenaBytes, slots, plannedBytes } (plannedBytes: the sum of the sizes the
   * arena overlaps; zeros until a run has planned it). Planned on the first run for given input shapes.
   */
  get memoryPlan() {
    return this.#memory.stats;
  }

  /**
   * Runs the model. feeds: { inputName: Float32Array | QTensor | { data, dims } }. Returns
   * { outputName: { dtype, dims, data } } (and, with { intermediates: true }, every node output too;
   * with { profile: true }, `profile`: each node's wall time in ms, for finding the slow layers).
   */
  async run(feeds, options = {}) {
    if (this.#disposed) throw new TypeError('Model.run: the model was disposed');
    if (feeds === null || typeof feeds !== 'object' || ArrayBuffer.isView(feeds) || feeds instanceof QTensor) {
      throw new TypeError(`Model.run: feeds must be { inputName: data }, got ${feeds === null ? 'null' : feeds?.constructor?.name ?? typeof feeds}`);
    }
    if (options === null || typeof options !== 'object') throw new TypeError(`Model.run: options must be { intermediates, profile }, got ${String(options)}`);
    const { intermediates = false, profile = false } = options;
    for (const [name, v] of [['intermediates', intermediates], ['profile', profile]]) {
      if (typeof v !== 'boolean') throw new TypeError(`Model.run: options.${name} must be a boolean, got ${String(v)}`);
    }
    for (const name of Object.keys(feeds)) {
      if (!this.inputs.some((i) => i.name === name)) throw new RangeError(`Model.run: the model has no input "${name}"; its inputs are ${this.inputs.map((i) => `"${i.name}"`).join(', ')}`);
    }
    const checked = new Map(this.inputs.map((spec) => {
      if (!Object.hasOwn(feeds, spec.name)) throw new RangeError(`Model.run: input "${spec.name}" is missing`);
      return [spec.name, this.#feed(spec, feeds[spec.name])];
    }));
    const key = JSON.stringify([...checked.values()].map((f) => f.dims));
    this.#plan = this.#plans.get(key, this.#order.length);
    // Untracked: what a run makes is the model's own (it disposes its temporaries itself, and whatever it keeps for
    // the next runs must outlive a tidy() open around this call).
    const result = untracked(() => this.#memory.run(key, () => this.#runGraph(checked, intermediates, profile)));
    this.peakBytes = Math.max(this.peakBytes, this.#memory.runPeakBytes);
    return result;
  }

  #runGraph(feeds, intermediates, profile) {
    const values = new Map();
    const release = (name) => {
      releaseValue(values.get(name));
      values.delete(name);
    };
    const captured = {};
    const timings = [];
    const plan = this.#plan;
    try {
      for (const [name, f] of feeds) values.set(name, f.q ? qvalue(f.q.clone()) : host(this.inputs.find((s) => s.name === name).dtype, f.dims, f.data));
      const lookup = (name, node) => {
        if (name === '') return undefined;
        const value = values.get(name);
        if (value !== undefined) return value;
        const known = this.#constants.get(name);
        if (known) return known;
        const init = this.#graph.initializers.get(name);
        if (init) {
          const value = constantValue(init);
          this.#constants.set(name, value);
          return value;
        }
        throw new ModelFormatError(`node "${node.name}" reads "${name}", which has no value`);
      };
      const inputsOf = (i, node) => {
        const constants = this.#inputConstants[i] ??= node.inputs.map((n) =>
          (n !== '' && !this.#graphInputs.has(n) && this.#graph.initializers.has(n) ? lookup(n, node) : undefined));
        const names = node.inputs;
        const inputs = new Array(names.length);
        for (let k = 0; k < names.length; k++) inputs[k] = constants[k] ?? lookup(names[k], node);
        return inputs;
      };
      for (let i = 0; i < this.#order.length; i++) {
        const node = this.#order[i];
        this.#ctx.node = node;
        this.#step = i;
        const t0 = profile ? performance.now() : 0;
        const { operator, attrs } = this.#steps[i];
        let outs;
        try {
          if (this.#static[i]) {
            // Depends on the input shapes alone: computed on the first run with these shapes, then reused.
            outs = plan.statics[i];
            if (!outs) {
              const inputs = inputsOf(i, node);
              checkInputValues(operator, node, inputs, dtypeOf, dimsView);
              outs = backend().outsidePlan(() => operator.run(this.#ctx, inputs, attrs).map(keepOnHost));
              for (const v of outs) if (v) this.#persistent.add(v.data);
              plan.statics[i] = outs;
            }
          } else {
            const inputs = inputsOf(i, node);
            this.#checkInputs(i, operator, node, inputs);
            outs = operator.run(this.#ctx, inputs, attrs);
          }
        } catch (error) {
          throw atNode(error, node);
        }
        if (profile) timings.push({ name: node.name, opType: node.opType, ms: performance.now() - t0, ...(this.#static[i] ? { static: true } : {}) });
        // outputs nobody named, released first so that an error below leaves nothing behind (released once: a
        // second release would drop a reference some other value holds)
        for (let k = 0; k < outs.length; k++) if (outs[k] !== undefined && !(k < node.outputs.length && node.outputs[k] !== '')) releaseValue(outs[k]);
        for (let k = 0; k < node.outputs.length; k++) {
          const name = node.outputs[k];
          if (name === '') continue;
          if (outs[k] === undefined) {
            if (this.#lastUse.has(name)) throw new ModelFormatError(`${nodeLabel(node)}: gives no value for its output ${k} ("${name}"), which is read`);
            continue;
          }
          values.set(name, outs[k]);
          if (intermediates) captured[name] = snapshot(outs[k]);
        }
        for (const name of this.#releases[i]) if (values.has(name)) release(name);
      }
      const result = {};
      for (const o of this.outputs) result[o.name] = snapshot(values.get(o.name) ?? lookup(o.name, { name: 'graph output' }));
      if (intermediates) result.intermediates = captured;
      if (profile) result.profile = timings;
      return result;
    } finally {
      for (const name of [...values.keys()]) release(name);
    }
  }

  /**
   * checkInputValues for node i, skipped when its non-constant inputs have the element types and shapes they had when
   * they last passed (the checks read nothing else, and the constants do not change).
   */
  #checkInputs(i, operator, node, inputs) {
    const constants = this.#inputConstants[i];
    const last = this.#checked[i];
    if (last !== undefined && passedBefore(last, inputs, constants)) return;
    const dynamic = inputs.map((v, k) => (constants[k] === undefined ? v : undefined));
    this.#checked[i] = undefined;
    checkInputValues(operator, node, inputs, dtypeOf, dimsView);
    this.#checked[i] = {
      shapes: dynamic.map(shapeRecord),
      dtypes: dynamic.map((v) => (v ? dtypeOf(v) : null)),
    };
  }

  /** Frees the packed weights. Idempotent; later runs throw. */
  dispose() {
    if (this.#disposed) return;
    this.#disposed = true;
    forget(this);
    this.#memoryOwner.release();
  }
}

/** What a Model holds in wasm memory (packed layers, shape plans, uploaded constants, the arena), and how it is given back. */
class ModelMemory {
  constructor(prepared, plans, uploads, memory) {
    this.prepared = prepared;
    this.plans = plans;
    this.uploads = uploads;
    this.memory = memory;
  }

  release() {
    for (const p of this.prepared.values()) p.packed.dispose();
    this.prepared.clear();
    this.plans.clear();
    for (const storage of this.uploads.values()) storage.release();
    this.uploads.clear();
    this.memory.dispose();
  }
}

if (typeof Symbol.dispose === 'symbol') Model.prototype[Symbol.dispose] = Model.prototype.dispose;

/** The typed array that carries a model input of each element type (bool: 0 / 1 bytes). */
const INPUT_ARRAYS = Object.freeze({ float32: Float32Array, uint8: Uint8Array, int8: Int8Array, int32: Int32Array, int64: BigInt64Array, bool: Uint8Array });
const INPUT_ARRAY_NAMES = Object.freeze({ bool: 'Uint8Array (0 / 1)' });

/** Whether the non-constant inputs have the shapes and element types #checkInputs recorded (no allocation: every node, every run). */
function passedBefore(last, inputs, constants) {
  if (last.shapes.length !== inputs.length) return false;
  for (let k = 0; k < inputs.length; k++) {
    const v = constants[k] === undefined ? inputs[k] : undefined;
    if (!hasShape(v, last.shapes[k]) || (v == null ? last.dtypes[k] !== null : dtypeOf(v) !== last.dtypes[k])) return false;
  }
  return true;
}

/** Whether value v (absent: undefined or null) has the shape shapeRecord recorded (null for an absent value). */
function hasShape(v, s) {
  if (v === undefined || v === null) return s === null;
  return s !== null && sameShape(dimsView(v), s); // identity first: shapeRecord keeps frozen shapes
}

/** A value's shape as sameShapes records it: a frozen shape itself (a QTensor's, a constant's), others copied; null for none. */
function shapeRecord(v) {
  if (v === undefined || v === null) return null;
  const d = dimsView(v);
  return Object.isFrozen(d) ? d : Array.from(d);
}

/** Whether values have the shapes a memo recorded (null for an absent value). */
function sameShapes(shapes, values) {
  if (shapes.length !== values.length) return false;
  for (let i = 0; i < values.length; i++) if (!hasShape(values[i], shapes[i])) return false;
  return true;
}

/** A value as host data, its wasm memory given back (a shape-plan value, kept across runs). */
function keepOnHost(v) {
  if (v === undefined) return v;
  const h = toHost(v);
  releaseValue(v);
  return h;
}

/** A value copied out to the host: { dtype, dims, data } (host data copied too: it may be a constant or a shape-plan value). */
function snapshot(v) {
  const data = v.kind === 'host' ? v.data.slice() : backend().outsidePlan(() => toHost(v)).data;
  return { dtype: dtypeOf(v), dims: dimsOf(v).slice(), data };
}

/** What a dropped shape plan calls: forgetPlan over the Model's persistent data and uploads (and nothing else). */
const planForgetter = (persistent, uploads) => (plan) => forgetPlan(plan, persistent, uploads);

/** A shape plan was dropped: its memos and the wasm copies of its values go. */
function forgetPlan(plan, persistent, uploads) {
  for (const m of plan.memos) m?.value?.dispose?.();
  for (const outs of plan.statics) {
    for (const v of outs ?? []) {
      if (!v) continue;
      persistent.delete(v.data);
      uploads.get(v.data)?.release();
      uploads.delete(v.data);
    }
  }
}

const NAMED_ERRORS = [ModelFormatError, UnsupportedError, NotImplementedError, TypeError, RangeError];

/**
 * An error thrown while a node ran, naming the node and its operator (same class, the original as its cause);
 * errors of other kinds (a wasm trap, an internal error) pass unchanged.
 */
function atNode(error, node) {
  const label = nodeLabel(node);
  if (!NAMED_ERRORS.some((E) => error?.constructor === E) || error.message.includes(label)) return error;
  return new error.constructor(`${label}: ${error.message}`, { cause: error });
}

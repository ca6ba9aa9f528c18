// One runtime of the browser benchmark in its own dedicated (classic) worker, so that every runtime keeps its
// own globals and thread pool in the one page: qwasm, onnxruntime-web or LiteRT.js (XNNPACK). Driven by page.js:
//   { type: 'init', runtime, threads, root, relaxed, wasm } -> { info }   (wasm: a qwasm build's folder under root)
//   { type: 'load', id, spec }                      -> { output } (after one untimed run)
//   { type: 'time', id, reps, inner }               -> { ms: [per-run ms of each sample of `inner` runs] }
//   { type: 'unload', id }                          -> {}
//   { type: 'profile', id, reps }                   -> { nodes: [{ name, opType, ms }] } (qwasm models: median per node)
// spec: { kind: 'op' | 'model' | 'transformer', case, data, modelUrl, input, inputs }: the same bytes for every
// runtime, each in its own layout (qwasm: channels-last uint8 views; onnxruntime-web: NCHW uint8; LiteRT: NHWC int8);
// a transformer's inputs are { name: { data: numbers, dims } } of int64 token ids, its output the first float one.
/* global importScripts */
let runtime;
const loaded = new Map();

const post = (id, body) => self.postMessage({ id, ...body });

self.onmessage = async ({ data: m }) => {
  try {
    if (m.type === 'init') post(m.id, { info: await init(m) });
    else if (m.type === 'load') post(m.id, { output: await load(m.key, m.spec) });
    else if (m.type === 'time') post(m.id, { ms: await time(m.key, m.reps, m.inner) });
    else if (m.type === 'profile') post(m.id, { nodes: await profile(m.key, m.reps) });
    else if (m.type === 'unload') {
      await loaded.get(m.key)?.dispose();
      loaded.delete(m.key);
      post(m.id, {});
    }
  } catch (error) {
    post(m.id, { error: `${error.message}\n${error.stack ?? ''}` });
  }
};

async function init({ runtime: kind, threads, root, relaxed, wasm }) {
  if (kind === 'qwasm') {
    importScripts(`${root}node_modules/protobufjs/dist/light/protobuf.min.js`); // globalThis.protobuf for qwasm's ONNX reader
    const qwasm = await import(`${root}js/index.js`);
    if (relaxed === 'force') {
      // Timing only: the relaxed kernels on an engine whose probe refuses them (their results are then not exact).
      (await import(`${root}js/runtime/wasm.js`)).setRelaxedProbeForTests(() => ({ semantics: 'usdot' }));
    }
    const info = await qwasm.init({
      numThreads: threads, relaxedSimd: relaxed === undefined ? false : true, ...(wasm ? { wasmPaths: `${root}${wasm}` } : {}),
    });
    runtime = { kind, qwasm };
    return info;
  }
  if (kind === 'ort') {
    const ort = await import(`${root}node_modules/onnxruntime-web/dist/ort.wasm.min.mjs`);
    ort.env.wasm.wasmPaths = `${root}node_modules/onnxruntime-web/dist/`;
    ort.env.wasm.numThreads = threads;
    ort.env.wasm.proxy = false;
    ort.env.logLevel = 'error';
    runtime = { kind, ort };
    return { version: ort.env.versions.web, threads };
  }
  if (kind === 'litert') {
    const litert = await import(`${root}build/bench-browser/litert-core.js`);
    // Emscripten finds its files next to the script that loaded it: in a worker, that is this file, so the
    // wasm directory (and, for the threaded build, its own script for the pthread workers) are given.
    const wasmDir = `${root}node_modules/@litertjs/core/wasm/`;
    self.Module = { locateFile: (path) => wasmDir + path, mainScriptUrlOrBlob: `${wasmDir}litert_wasm_threaded_internal.js` };
    await litert.loadLiteRt(wasmDir, { threads: threads > 1 });
    runtime = { kind, litert, threads };
    return { threads, threadedWasm: threads > 1 };
  }
  throw new Error(`unknown runtime ${kind}`);
}

async function fetchBytes(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

async function load(key, spec) {
  const entry = runtime.kind === 'qwasm' ? await loadQwasm(spec) : runtime.kind === 'ort' ? await loadOrt(spec) : await loadLiteRt(spec);
  loaded.set(key, entry);
  return entry.run(true);
}

/** ms per run of reps samples, each the mean of `inner` consecutive runs (the page's clock steps by 5 us or more). */
async function time(key, reps, inner = 1) {
  const entry = loaded.get(key);
  const ms = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    for (let i = 0; i < inner; i++) await entry.run(false);
    ms.push((performance.now() - t0) / inner);
  }
  return ms;
}

/** Each node's median wall time over reps runs of Model.run's profile (qwasm models only). */
async function profile(key, reps) {
  const entry = loaded.get(key);
  if (!entry.profile) return null;
  const runs = [];
  for (let r = 0; r < reps; r++) runs.push(await entry.profile());
  return runs[0].map(({ name, opType }, i) => {
    const ms = runs.map((run) => run[i].ms).sort((a, b) => a - b);
    return { name, opType, ms: ms[ms.length >> 1] };
  });
}

// ---- qwasm ---------------------------------------------------------------------------------------------------

/** A transformer's recorded int64 inputs as [name, BigInt64Array, dims] triples. */
const int64Inputs = (inputs) => Object.entries(inputs).map(([name, t]) => [name, BigInt64Array.from(t.data, BigInt), t.dims]);

async function loadQwasm(spec) {
  const { qwasm } = runtime;
  if (spec.kind === 'transformer') {
    const model = await qwasm.loadModel(await fetchBytes(spec.modelUrl));
    const feeds = Object.fromEntries(int64Inputs(spec.inputs).map(([name, data, dims]) => [name, { data, dims }]));
    const output = model.outputs[0].name;
    return {
      async run(keep) {
        const out = await model.run(feeds);
        return keep ? out[output].data : null;
      },
      profile: async () => (await model.run(feeds, { profile: true })).profile,
      dispose: () => model.dispose(),
    };
  }
  if (spec.kind === 'model') {
    const model = await qwasm.loadModel(await fetchBytes(spec.modelUrl));
    const feeds = { [model.inputs[0].name]: { data: spec.input.nchw, dims: spec.input.dims } };
    return {
      async run(keep) {
        const out = await model.run(feeds);
        return keep ? Object.values(out)[0].data : null;
      },
      profile: async () => (await model.run(feeds, { profile: true })).profile,
      dispose: () => model.dispose(),
    };
  }
  const c = spec.case;
  const { q, d } = spec;
  const onnx = { scale: q.yScale, zeroPoint: q.yZp, mode: 'onnx' };
  let x;
  let packed;
  if (c.kind === 'gemm') {
    x = qwasm.fromIntRepr(d.a, [c.M, c.K], q.xScale, q.xZp, 'quint8');
    const b = qwasm.fromIntRepr(d.b, [c.K, c.N], q.wScale, q.wZp, 'qint8');
    packed = qwasm.packMatMul(b, { mode: 'onnx' });
    b.dispose();
  } else {
    // channels-last storage (NHWC bytes viewed as NCHW), as qwasm's own layers hand it on: no transpose timed
    const nhwc = qwasm.fromIntRepr(d.xNhwc, [c.N, c.H, c.W, c.Cin], q.xScale, q.xZp, 'quint8');
    x = nhwc.permute([0, 3, 1, 2]);
    nhwc.dispose();
    const w = qwasm.fromIntRepr(d.w, [c.Cout, c.Cin / c.group, c.kh, c.kw], q.wScale, q.wZp, 'qint8');
    packed = qwasm.packConv2d(w, d.bias, { stride: c.stride, padding: c.pad, groups: c.group, mode: 'onnx' });
    w.dispose();
  }
  const op = c.kind === 'gemm' ? qwasm.matmul : qwasm.conv2d;
  return {
    async run(keep) {
      const y = op(x, packed, onnx);
      const out = keep ? y.intRepr() : null; // logical (NCHW / [M, N]) order
      y.dispose();
      return out;
    },
    dispose: () => (x.dispose(), packed.dispose()),
  };
}

// ---- onnxruntime-web -------------------------------------------------------------------------------------------

async function loadOrt(spec) {
  const { ort } = runtime;
  const session = await ort.InferenceSession.create(await fetchBytes(spec.modelUrl), {
    executionProviders: ['wasm'],
    graphOptimizationLevel: 'all',
  });
  const [name] = session.inputNames;
  if (spec.kind === 'transformer') {
    const feeds = Object.fromEntries(int64Inputs(spec.inputs).map(([n, data, dims]) => [n, new ort.Tensor('int64', data, dims)]));
    const output = session.outputNames[0];
    return {
      async run(keep) {
        const out = await session.run(feeds);
        return keep ? out[output].data : null;
      },
      dispose: () => session.release(),
    };
  }
  const feeds = spec.kind === 'model'
    ? { [name]: new ort.Tensor('float32', spec.input.nchw, spec.input.dims) }
    : { [name]: new ort.Tensor('uint8', spec.case.kind === 'gemm' ? spec.d.a : spec.d.x, spec.dims) };
  return {
    async run(keep) {
      const out = await session.run(feeds);
      const y = out[session.outputNames[0]].data;
      return keep ? y : null;
    },
    dispose: () => session.release(),
  };
}

// ---- LiteRT.js (XNNPACK) ---------------------------------------------------------------------------------------

async function loadLiteRt(spec) {
  const { litert, threads } = runtime;
  const model = await litert.loadAndCompile(spec.tfliteUrl, { accelerator: 'wasm', cpuOptions: { numThreads: threads } });
  const input = spec.kind === 'model'
    ? new litert.Tensor(spec.input.nhwc, spec.input.nhwcDims)
    : new litert.Tensor(spec.case.kind === 'gemm' ? spec.d.aI8 : spec.d.xNhwcI8, spec.tfliteDims);
  return {
    async run(keep) {
      const outputs = await model.run(input);
      let y = null;
      if (keep) y = outputs[0].toTypedArray().slice();
      for (const t of outputs) t.delete();
      return y;
    },
    dispose: () => (input.delete(), model.delete()),
  };
}

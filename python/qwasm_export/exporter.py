"""Export a PyTorch post-training-quantized model to ONNX for qwasm, bit-exact with PyTorch.

The converted (eager-mode or FX) quantized model is traced with torch.fx and run once on the example input to
record every tensor's shape, qparams and memory layout; each quantized module / op is then written as ONNX nodes
with onnx.helper (not torch.onnx.export). The file records the semantics profile of the engine the model was
converted for (metadata qwasm.semantics): integer results follow PyTorch's kernels, which standard ONNX rounding
rules do not always match. The profile (ops, inputs, attributes, metadata) is described in docs/exporter.md.

Python API:
    from qwasm_export import export
    exported = export(model_int8, example_input, "model.onnx")   # engine: torch.backends.quantized.engine
    exported.model                   # the onnx.ModelProto
    exported.capture(x)              # {onnx tensor name: torch value} for another input (torch's own results)
"""
import collections
import operator
import os
import warnings

import numpy as np
import onnx
import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

from . import reference as R
from .reference import run_reference

import torch.ao.nn.quantized as nnq
import torch.ao.nn.quantized.dynamic as nnqd
try:
    import torch.ao.nn.intrinsic.quantized as nniq
except ImportError:  # torch 1.13 has no torch.ao.nn.intrinsic.quantized
    import torch.nn.intrinsic.quantized as nniq

__version__ = "0.1.0"
EXPORTER = "qwasm-export " + __version__
OPSET = 13
MS_DOMAIN = "com.microsoft"
F32 = np.float32
SUPPORTED_ENGINES = ("qnnpack", "fbgemm", "x86")

__all__ = ["export", "ExportError", "Exported", "run_reference", "verify", "quantize_bias", "semantics_for"]


def semantics_for(engine):
    """The qwasm semantics profile of PyTorch's quantized kernels on `engine` in this torch build (docs/exporter.md):
    qnnpack in a build without FBGEMM (Debian's torch 1.13) rounds as 'pytorch-qnnpack'; in an x86 build with FBGEMM
    (every PyPI wheel, e.g. torch 2.13) quantize is FBGEMM's ('pytorch2-qnnpack'); fbgemm and x86 are torch 2.x's."""
    if engine == "qnnpack":
        return "pytorch2-qnnpack" if "fbgemm" in torch.backends.quantized.supported_engines else "pytorch-qnnpack"
    return "pytorch-" + engine


def cpu_capability():
    """ATen's CPU dispatch level (AVX512, AVX2 or DEFAULT): which channels PyTorch 2.x's channels-last pooling rounds
    in its vector loops. torch 1.13 has no torch.backends.cpu; its qnnpack profile does not depend on it."""
    get = getattr(getattr(torch.backends, "cpu", None), "get_cpu_capability", None)
    cap = get() if get else "AVX2"
    return cap if cap in R.VECTOR_WIDTH else "DEFAULT"


class ExportError(Exception):
    """The model uses something this exporter cannot write with PyTorch's exact semantics."""


# ---------------------------------------------------------------------------------------------------------
# Tracing: torch.fx with module scopes (so ops inside a block, and FloatFunctional calls, get a module path)

_QFUNCTIONAL_METHODS = ("add", "add_relu", "add_scalar", "mul", "mul_scalar", "cat", "matmul")


class _Proxy(torch.fx.Proxy):
    def __iter__(self):
        # torch 1.13's Proxy.__iter__ decodes the caller's bytecode, which fails on Python 3.11: ask the tracer.
        return self.tracer.iter(self)


class _ScopeTracer(torch.fx.Tracer):
    """fx tracer that records module scopes and, where symbolic tracing would fail (iterating over x.size(),
    branching on a tensor-derived value), evaluates the graph built so far on the example input and
    specializes to the concrete value: the exported graph is static anyway."""

    def __init__(self, example_inputs):
        super().__init__()
        self.qwasm_scope = []
        self.example_inputs = example_inputs
        self.concrete_mode = False  # True while evaluating a partial graph (modules' __call__ is still patched)

    def _concrete(self, node):
        g, env = torch.fx.Graph(), {}
        for nd in self.graph.nodes:
            env[nd] = g.node_copy(nd, lambda a: env[a])
            if nd is node:
                break
        g.output(env[node])
        self.concrete_mode = True
        try:
            with torch.no_grad():
                return torch.fx.GraphModule(self.root, g).forward(*self.example_inputs)
        finally:
            self.concrete_mode = False

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        if self.concrete_mode:
            return attr_val
        return super().getattr(attr, attr_val, parameter_proxy_cache)

    def proxy(self, node):
        return _Proxy(node, self)

    def iter(self, obj):
        val = self._concrete(obj.node)
        if isinstance(val, (tuple, list, torch.Size)):
            return iter([obj[i] for i in range(len(val))])
        return super().iter(obj)

    def to_bool(self, obj):
        return bool(self._concrete(obj.node))

    def call_module(self, m, forward, args, kwargs):
        if self.concrete_mode:
            return forward(*args, **kwargs)
        self.qwasm_scope.append(self.path_of_module(m))
        try:
            return super().call_module(m, forward, args, kwargs)
        finally:
            self.qwasm_scope.pop()

    def create_node(self, *args, **kwargs):
        node = super().create_node(*args, **kwargs)
        node.meta["qwasm_scope"] = self.qwasm_scope[-1] if self.qwasm_scope else ""
        return node

    def trace(self, root, concrete_args=None):
        # FloatFunctional / QFunctional are used through methods (self.skip.add(a, b)), not __call__: give
        # the ops they record the module's path by wrapping the methods for the duration of the trace.
        patched = []
        for path, m in root.named_modules():
            if isinstance(m, (nnq.QFunctional, nnq.FloatFunctional, nnq.FXFloatFunctional)):
                for meth in _QFUNCTIONAL_METHODS:
                    if hasattr(type(m), meth):
                        m.__dict__[meth] = self._scoped(path, getattr(m, meth))
                        patched.append((m, meth))
        try:
            return super().trace(root, concrete_args)
        finally:
            for m, meth in patched:
                del m.__dict__[meth]

    def _scoped(self, path, fn):
        def call(*args, **kwargs):
            self.qwasm_scope.append(path)
            try:
                return fn(*args, **kwargs)
            finally:
                self.qwasm_scope.pop()
        return call


def _trace(model, inputs):
    if isinstance(model, torch.fx.GraphModule):
        return model
    tracer = _ScopeTracer(inputs)
    try:
        graph = tracer.trace(model)
    except Exception as e:  # noqa: BLE001
        raise ExportError("torch.fx could not trace %s (the forward must be symbolically traceable): %s"
                          % (type(model).__name__, e)) from e
    return torch.fx.GraphModule(model, graph, type(model).__name__)


class _Recorder(torch.fx.Interpreter):
    """Runs the traced model and keeps every node's value (copied: later in-place ops must not change it; the
    copy keeps a channels-last layout, which decides some of PyTorch's results)."""

    def __init__(self, gm):
        super().__init__(gm)
        self.values = {}
        self.layouts = {}
        self.strides = {}

    def run_node(self, n):
        out = super().run_node(n)
        self.values[n] = _snapshot(out)
        if isinstance(out, torch.Tensor):
            self.layouts[n] = layout(out)
            self.strides[n] = (tuple(out.stride()), out.storage_offset())
        return out


def layout(t):
    """'nchw' (contiguous), 'nhwc' (4-D channels-last, not contiguous) or 'other' (a strided view)."""
    if t.is_contiguous():
        return "nchw"
    if t.dim() == 4 and t.is_contiguous(memory_format=torch.channels_last):
        return "nhwc"
    return "other"


def _snapshot(v):
    if isinstance(v, torch.Tensor):
        c = v.clone()  # quantized clone() is always contiguous
        return c.contiguous(memory_format=torch.channels_last) if layout(v) == "nhwc" else c
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
        return type(v)(_snapshot(x) for x in v)
    return v


def _record(gm, inputs, engine):
    prev = torch.backends.quantized.engine
    torch.backends.quantized.engine = engine
    try:
        with torch.no_grad():
            rec = _Recorder(gm)
            out = rec.run(*inputs)
    finally:
        torch.backends.quantized.engine = prev
    return rec, out


# ---------------------------------------------------------------------------------------------------------
# Small helpers

def _tuple1(v):
    return (int(v),) if isinstance(v, int) else tuple(int(x) for x in v)


def _pair(v):
    return [int(v), int(v)] if isinstance(v, int) else [int(x) for x in v]


def _f32_exact(v):
    v = np.asarray(v, dtype=np.float64)
    return bool(np.all(v.astype(F32).astype(np.float64) == v))


def quantize_bias(bias, w_scales, x_scale):
    """int32 bias exactly as PyTorch's qnnpack engine makes it (quantize_per_tensor / per_channel to qint32):
    rint(b * (1.0f / (float)((double)w_scale * (double)x_scale))), float32 multiply, saturated to int32."""
    b = np.asarray(bias, dtype=F32)
    bs = (np.asarray(w_scales, dtype=np.float64) * float(x_scale)).astype(F32)
    v = np.rint(b * (F32(1.0) / bs)).astype(np.float64)
    if np.any(np.isnan(v)):
        raise ExportError("bias contains NaN")
    return np.clip(v, -(2 ** 31), 2 ** 31 - 1).astype(np.int32)


def _quint8_table_input(scale, zp, values):
    return torch._make_per_tensor_quantized_tensor(torch.tensor(values, dtype=torch.uint8), scale, zp)


class _Args:
    """Positional + keyword arguments of an fx node bound to parameter names."""

    def __init__(self, node, names, defaults=None):
        self.v = dict(defaults or {})
        for k, a in zip(names, node.args):
            self.v[k] = a
        for k, a in node.kwargs.items():
            self.v[k] = a

    def __getitem__(self, k):
        return self.v[k]

    def get(self, k, d=None):
        return self.v.get(k, d)


# Elementwise unary ops on a quantized tensor (output depends only on the input integer and qparams).
_UNARY_MODULES = (nn.ReLU, nn.ReLU6, nnq.ReLU6, nn.Hardtanh, nnq.Hardswish, nn.Hardswish, nn.Sigmoid,
                  nn.Hardsigmoid, nn.Tanh, nn.LeakyReLU, nnq.LeakyReLU, nnq.ELU, nn.ELU)
_UNARY_FUNCTIONS = {F.relu, torch.relu, torch.relu_, F.relu6, F.hardtanh, F.hardtanh_, torch.clamp, torch.clip,
                    torch.sigmoid, F.hardsigmoid, torch.tanh, F.leaky_relu, F.elu, F.hardswish,
                    torch.ops.quantized.hardswish, torch.ops.quantized.leaky_relu, torch.ops.quantized.elu,
                    torch.ops.quantized.relu6, torch.ops.quantized.sigmoid}
_UNARY_METHODS = {"relu", "relu_", "clamp", "clamp_", "clip", "clip_", "sigmoid", "sigmoid_", "tanh", "tanh_",
                  "hardtanh", "hardtanh_"}
_ALIAS_MODULES = (nn.Identity, nn.Dropout, nnq.Dropout)
_ALIAS_METHODS = {"contiguous", "clone", "detach"}


# ---------------------------------------------------------------------------------------------------------
# The exporter

class Exported:
    """Result of export(): the ModelProto and a way to get torch's own value of every exported tensor."""

    def __init__(self, model, gm, tensor_names, engine):
        self.model = model
        self.graph_module = gm
        self.tensor_names = tensor_names  # fx node name -> onnx tensor name (module outputs)
        self.engine = engine

    def capture(self, *inputs):
        """Run torch on inputs; return {onnx tensor name: torch tensor} for every exported tensor, in order."""
        rec, _ = _record(self.graph_module, inputs, self.engine)
        out = collections.OrderedDict()
        for n, v in rec.values.items():
            name = self.tensor_names.get(n.name)
            if isinstance(name, str) and isinstance(v, torch.Tensor) and name not in out:
                out[name] = v
        return out


class _Builder:
    def __init__(self, gm, rec, inputs, engine, allow_inexact_lut, original):
        self.gm = gm
        # the GraphModule keeps only the submodules it calls; FloatFunctional paths come from the original model
        self.modules = dict(gm.named_modules())
        self.modules.update(original.named_modules())
        self.values = rec.values
        self.layouts = rec.layouts
        self.strides = rec.strides
        self.inputs = inputs
        self.engine = engine
        self.semantics = semantics_for(engine)
        self.profile = R.PROFILES[self.semantics]
        self.allow_inexact_lut = allow_inexact_lut
        self.nodes, self.inits, self.vinfo = [], [], collections.OrderedDict()
        self.names = {}          # fx node -> onnx tensor name | list of names | None (not a tensor)
        self.used = set()        # onnx names in use (tensors, initializers, nodes)
        self.node_names = set()
        self.qp_cache = {}
        self.graph_inputs, self.graph_outputs = [], []
        self.live = set()  # nodes whose value depends on a graph input; the others are constants
        for nd in gm.graph.nodes:
            if nd.op == "placeholder" or any(a in self.live for a in nd.all_input_nodes):
                self.live.add(nd)
        self.opset = OPSET
        out_node = next(n for n in gm.graph.nodes if n.op == "output")
        outs = out_node.args[0]
        self.out_list = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        self.out_index = {n: i for i, n in enumerate(self.out_list) if isinstance(n, torch.fx.Node)}

    # --- names -------------------------------------------------------------------------------------------
    @staticmethod
    def _fresh(base, taken):
        name, k = base, 1
        while name in taken:
            name = "%s_%d" % (base, k)
            k += 1
        taken.add(name)
        return name

    def unique(self, base):
        return self._fresh(base, self.used)

    def node_name(self, base):
        return self._fresh(base, self.node_names)

    def path(self, n):
        if n.op == "call_module":
            return n.target
        scope = n.meta.get("qwasm_scope", "")
        m = self.modules.get(scope)
        if isinstance(m, (nnq.QFunctional, nnq.FloatFunctional, nnq.FXFloatFunctional)) and n.op == "call_function":
            return scope
        return "%s.%s" % (scope, n.name) if scope else n.name

    def out_name(self, n, path):
        if n in self.out_index and self.values[n].dtype == torch.float32:
            k = self.out_index[n]
            return self.unique("output" if len(self.out_list) == 1 else "output_%d" % k)
        return self.unique(path)

    # --- graph pieces -----------------------------------------------------------------------------------
    def init(self, name, arr):
        name = self.unique(name)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def emit(self, op, inputs, outputs, name, domain=None, doc=None, **attrs):
        node = helper.make_node(op, inputs, outputs, name=self.node_name(name), domain=domain, **attrs)
        if doc:
            node.doc_string = doc
        self.nodes.append(node)
        return node

    def tensor_info(self, name, t):
        if t.is_quantized:
            et = {torch.quint8: TensorProto.UINT8, torch.qint8: TensorProto.INT8}[t.dtype]
        else:
            et = {torch.float32: TensorProto.FLOAT, torch.int64: TensorProto.INT64, torch.int32: TensorProto.INT32}[t.dtype]
        return helper.make_tensor_value_info(name, et, list(t.shape))

    def set_info(self, name, t):
        self.vinfo[name] = self.tensor_info(name, t)

    def qp(self, name, t):
        """Scale (float32 scalar) and zero point (uint8 scalar) initializers of quantized tensor `name`."""
        if name in self.qp_cache:
            return self.qp_cache[name]
        self.check_q(t, name)
        s, z = t.q_scale(), t.q_zero_point()
        if not _f32_exact(s):
            raise ExportError("tensor '%s': scale %r is not a float32 value (PyTorch computed it in double, as "
                              "mul_scalar's |c| * scale; ONNX scales are float32)" % (name, s))
        r = (self.init(name + "/scale", np.array(s, dtype=F32)), self.init(name + "/zero_point", np.array(z, np.uint8)))
        self.qp_cache[name] = r
        return r

    def check_q(self, t, where):
        if not isinstance(t, torch.Tensor) or not t.is_quantized:
            raise ExportError("'%s': expected a quantized tensor, got %s" % (where, _describe(t)))
        if t.qscheme() != torch.per_tensor_affine or t.dtype != torch.quint8:
            raise ExportError("'%s': activations must be quint8 per-tensor affine (PyTorch's qnnpack kernels), "
                              "got %s %s" % (where, t.dtype, t.qscheme()))

    def check_layout_input(self, t, where):
        """Data-movement ops (Flatten, Reshape, Transpose, Split) take quint8 tensors or, between an FX model's
        dequantize and quantize, float32 ones."""
        if isinstance(t, torch.Tensor) and not t.is_quantized and t.dtype == torch.float32:
            return
        self.check_q(t, where)

    def maybe_qp(self, name, t):
        return self.qp(name, t) if t.is_quantized else None

    def arg_name(self, a, n):
        if not isinstance(a, torch.fx.Node):
            raise ExportError("'%s': expected a tensor argument, got constant %r" % (n.name, a))
        name = self.names.get(a)
        v = self.values.get(a)
        if name is None and a not in self.live and isinstance(v, torch.Tensor) and not v.is_quantized:
            name = self.names[a] = self.init(self.path(a) + "/constant", v.detach().numpy())  # a constant folded
        if not isinstance(name, str):
            raise ExportError("'%s': argument '%s' is not an exported tensor" % (n.name, a.name))
        return name

    def same_qparams(self, a, b):
        return a.q_scale() == b.q_scale() and a.q_zero_point() == b.q_zero_point()

    def clip(self, x, y_t, lo, hi, y_name, node_name, doc):
        lo_n = self.init(node_name + "/min", np.array(lo, dtype=np.uint8))
        hi_n = self.init(node_name + "/max", np.array(hi, dtype=np.uint8))
        self.emit("Clip", [x, lo_n, hi_n], [y_name], node_name, doc=doc)

    def weight(self, w, path):
        """int8 weight initializer + scale (float32) and zero point (int8), scalars or 1-D along axis 0."""
        if w.dtype != torch.qint8:
            raise ExportError("'%s': weight dtype %s (expected qint8)" % (path, w.dtype))
        qs = w.qscheme()
        if qs in (torch.per_tensor_affine, torch.per_tensor_symmetric):
            s64 = np.array([w.q_scale()], dtype=np.float64)
            z = np.array([w.q_zero_point()], dtype=np.int64)
            s_arr, z_arr = np.array(s64[0], dtype=F32), np.array(z[0], dtype=np.int8)
        elif qs in (torch.per_channel_affine, torch.per_channel_symmetric):
            if w.q_per_channel_axis() != 0:
                raise ExportError("'%s': per-channel weight axis %d (expected 0)" % (path, w.q_per_channel_axis()))
            s64 = w.q_per_channel_scales().numpy().astype(np.float64)
            z = w.q_per_channel_zero_points().numpy().astype(np.int64)
            s_arr, z_arr = s64.astype(F32), z.astype(np.int8)
        else:
            raise ExportError("'%s': weight qscheme %s is not supported" % (path, qs))
        if not _f32_exact(s64):
            raise ExportError("'%s': weight scales are not float32 values" % path)
        if np.any(z < -128) or np.any(z > 127):
            raise ExportError("'%s': weight zero point out of int8 range" % path)
        wq = w.int_repr().numpy().astype(np.int8)
        return (self.init(path + "/weight", wq), self.init(path + "/weight_scale", s_arr),
                self.init(path + "/weight_zero_point", z_arr), s64)

    def bias(self, b, ws64, w, xt, path):
        """The bias input of QLinearConv / QGemm: qnnpack's int32 integers, or, for FBGEMM / oneDNN (which keep the
        bias in float and add it after scaling the accumulator), the float32 bias itself (docs/exporter.md)."""
        channels = w.shape[0]
        if self.profile["requant"] == "qnnpack":
            return self.init(path + "/bias", quantize_bias(b.detach().numpy(), np.broadcast_to(ws64, (channels,)),
                                                           xt.q_scale()))
        bf = b.detach().numpy().astype(F32)
        if channels == 1 and w.qscheme() in (torch.per_channel_affine, torch.per_channel_symmetric):
            # one scale in the file reads as per tensor, where FBGEMM divides per channel instead of multiplying
            if R.fbgemm_bias(bf, ws64, xt.q_scale(), True)[0] != R.fbgemm_bias(bf, ws64, xt.q_scale(), False)[0]:
                raise ExportError("'%s': a per-channel weight with one output channel: FBGEMM scales its bias per "
                                  "channel, which a file with one weight scale reads as per tensor" % path)
        return self.init(path + "/bias", bf)

    # --- main loop ---------------------------------------------------------------------------------------
    def build(self):
        for n in self.gm.graph.nodes:
            v = self.values.get(n)
            if n.op == "placeholder":
                self.placeholder(n)
            elif n.op == "get_attr":
                self.names[n] = None
            elif n.op == "output":
                self.output(n)
            elif not _has_tensor(v):
                self.names[n] = None  # sizes, ints: folded into the shapes recorded for the nodes that use them
            elif n.op == "call_module":
                self.call_module(n, self.modules[n.target])
            elif n.op == "call_function":
                self.call_function(n)
            elif n.op == "call_method":
                self.call_method(n)
            else:
                raise ExportError("unsupported fx node %s (%s)" % (n.name, n.op))

    def placeholder(self, n):
        v = self.values[n]
        if not isinstance(v, torch.Tensor) or v.dtype not in (torch.float32, torch.int64, torch.int32) or v.is_quantized:
            raise ExportError("input '%s' must be a float32 tensor (or int64 / int32 indices of an embedding), got %s"
                              % (n.name, _describe(v)))
        k = sum(1 for m in self.gm.graph.nodes if m.op == "placeholder")
        name = self.unique("input" if k == 1 else n.name)
        self.names[n] = name
        self.graph_inputs.append(self.tensor_info(name, v))

    def output(self, n):
        for a in self.out_list:
            if not isinstance(a, torch.fx.Node) or not isinstance(self.names.get(a), str):
                raise ExportError("model outputs must be tensors")
            name = self.names[a]
            if any(o.name == name for o in self.graph_outputs) or name in [i.name for i in self.graph_inputs]:
                new = self.unique(name + "/out")
                self.emit("Identity", [name], [new], name + "/out")
                name = new
            self.graph_outputs.append(self.tensor_info(name, self.values[a]))
            self.vinfo.pop(name, None)

    def alias(self, n, src):
        self.names[n] = self.arg_name(src, n)

    # --- modules ----------------------------------------------------------------------------------------
    def call_module(self, n, m):
        path = n.target
        doc = type(m).__name__
        if isinstance(m, nnqd.Linear):
            return self.dynamic_linear(n, m, path, doc)
        if self.float_compute(n) and self.float_node(n, m, path, doc):
            return
        if isinstance(m, nnq.Quantize):
            return self.quantize(n, n.args[0], path, doc)
        if isinstance(m, nnq.DeQuantize):
            return self.dequantize(n, n.args[0], path, doc)
        if isinstance(m, (nniq.ConvReLU2d, nnq.Conv2d)):
            return self.conv(n, m, path, isinstance(m, nniq.ConvReLU2d), doc)
        if isinstance(m, (nniq.ConvReLU1d, nnq.Conv1d)):
            return self.conv1d(n, m, path, isinstance(m, nniq.ConvReLU1d), doc)
        if isinstance(m, nnq.ConvTranspose2d):
            return self.conv_transpose2d(n, m, path, doc)
        if isinstance(m, (nniq.LinearReLU, nnq.Linear)):
            return self.linear(n, m, path, isinstance(m, nniq.LinearReLU), doc)
        if isinstance(m, nn.MaxPool2d):
            return self.maxpool(n, n.args[0], m.kernel_size, m.stride, m.padding, m.dilation, m.ceil_mode,
                                m.return_indices, path, doc)
        if isinstance(m, nn.AvgPool2d):
            return self.avgpool(n, n.args[0], m.kernel_size, m.stride, m.padding, m.ceil_mode,
                                m.count_include_pad, m.divisor_override, path, doc)
        if isinstance(m, nn.AdaptiveAvgPool2d):
            return self.adaptive_avgpool(n, n.args[0], path, doc)
        if isinstance(m, nn.Flatten):
            return self.flatten(n, n.args[0], m.start_dim, m.end_dim, path, doc)
        if isinstance(m, _ALIAS_MODULES) or type(m).__name__ == "Identity":
            return self.alias(n, n.args[0])
        if isinstance(m, nn.Upsample):
            return self.upsample(n, n.args[0], m.mode, lambda t: m(t), path, doc)
        if isinstance(m, (nn.PixelShuffle, nn.PixelUnshuffle)):
            r = m.upscale_factor if isinstance(m, nn.PixelShuffle) else m.downscale_factor
            return self.pixel_shuffle(n, n.args[0], r, isinstance(m, nn.PixelShuffle), path, doc)
        if isinstance(m, (nnq.Embedding, nn.Embedding)):
            return self.embedding(n, m, path, doc)
        if isinstance(m, (nnq.LayerNorm, nn.LayerNorm)) and self.values[n].is_quantized:
            raise ExportError("'%s': quantized LayerNorm: PyTorch's kernel (quantized_normalize_kernel) sums the row's "
                              "integers and their squares, then normalizes in float with fused multiply-adds and "
                              "rounds in vector blocks and a scalar tail; no ONNX operator qwasm's loader runs "
                              "expresses that (it needs a LayerNormalization with PyTorch's arithmetic); keep the "
                              "LayerNorm in float (qconfig None)" % path)
        if isinstance(m, _UNARY_MODULES):
            return self.unary(n, n.args[0], lambda t: m(t), path, doc)
        raise ExportError("unsupported module %s at '%s'" % (type(m).__name__, path))

    def quantize(self, n, x, path, doc):
        y = self.values[n]
        if y.dtype != torch.quint8:
            raise ExportError("'%s': QuantStub dtype %s (qnnpack models use quint8)" % (path, y.dtype))
        name = self.out_name(n, path)
        s, z = self.qp(name, y)
        self.emit("QuantizeLinear", [self.arg_name(x, n), s, z], [name], path, doc=doc)
        self.names[n] = name
        self.set_info(name, y)

    def dequantize(self, n, x, path, doc):
        xt = self.values[x]
        xn = self.arg_name(x, n)
        s, z = self.qp(xn, xt)
        name = self.out_name(n, path)
        self.emit("DequantizeLinear", [xn, s, z], [name], path, doc=doc)
        self.names[n] = name
        self.set_info(name, self.values[n])

    def conv(self, n, m, path, relu, doc):
        x = n.args[0]
        xt = self.values[x]
        if m.padding_mode != "zeros":
            raise ExportError("'%s': padding_mode %s is not supported" % (path, m.padding_mode))
        if isinstance(m.padding, str):
            raise ExportError("'%s': string padding %r is not supported" % (path, m.padding))
        ph, pw = _pair(m.padding)
        attrs = dict(kernel_shape=_pair(m.kernel_size), strides=_pair(m.stride), pads=[ph, pw, ph, pw],
                     dilations=_pair(m.dilation), group=int(m.groups))
        self.emit_conv(n, self.arg_name(x, n), xt, m.weight(), m.bias(), attrs, relu, path, doc)

    def emit_conv(self, n, xn, xt, w, b, attrs, relu, path, doc, xq=None, shape=None):
        """A QLinearConv (and its ReLU Clip) producing node n's tensor from 4-D input xn (qparams of xq, default xt):
        weight w (quantized [O, C/g, kH, kW]), float bias b. shape: reshape the result to it (Conv1d)."""
        yt = self.values[n]
        xs, xz = self.qp(xq or xn, xt)
        wn, wsn, wzn, ws64 = self.weight(w, path)
        name = self.out_name(n, path)
        ys, yz = self.qp(name, yt)
        inputs = [xn, xs, xz, wn, wsn, wzn, ys, yz]
        if b is not None:
            inputs.append(self.bias(b, ws64, w, xt, path))
        out = self.unique(name + "/as_2d") if shape is not None else name
        pre = self.unique(out + "/pre_relu") if relu else out
        self.emit("QLinearConv", inputs, [pre], path, doc=doc, **attrs)
        y4 = list(yt.shape[:2]) + [1] + list(yt.shape[2:]) if shape is not None else list(yt.shape)
        if relu:
            self.vinfo[pre] = helper.make_tensor_value_info(pre, TensorProto.UINT8, y4)
            self.clip(pre, yt, yt.q_zero_point(), 255, out, path + "/relu", doc + " (fused ReLU)")
        if shape is not None:
            self.vinfo[out] = helper.make_tensor_value_info(out, TensorProto.UINT8, y4)
            sn = self.init(path + "/shape", np.array(shape, dtype=np.int64))
            self.emit("Reshape", [out, sn], [name], path + "/as_1d", doc=doc)
        self.names[n] = name
        self.set_info(name, yt)

    def conv1d(self, n, m, path, relu, doc):
        """Conv1d / ConvReLU1d: PyTorch runs them as 2-D convolutions of height 1 (its conv1d prepacks a [O, C/g,
        1, k] weight); so does the file, between two Reshapes."""
        x = n.args[0]
        xt = self.values[x]
        if m.padding_mode != "zeros" or isinstance(m.padding, str):
            raise ExportError("'%s': padding_mode %s / padding %r is not supported" % (path, m.padding_mode, m.padding))
        xn = self.arg_name(x, n)
        x4 = self.unique(xn + "/as_2d")
        self.emit("Reshape", [xn, self.init(path + "/shape_2d", np.array([xt.shape[0], xt.shape[1], 1, xt.shape[2]],
                                                                           dtype=np.int64))],
                  [x4], path + "/as_2d", doc=doc)
        self.vinfo[x4] = helper.make_tensor_value_info(x4, TensorProto.UINT8, [xt.shape[0], xt.shape[1], 1, xt.shape[2]])
        (k,), (s,), (p,), (d,) = (_tuple1(v) for v in (m.kernel_size, m.stride, m.padding, m.dilation))
        attrs = dict(kernel_shape=[1, k], strides=[1, s], pads=[0, p, 0, p], dilations=[1, d], group=int(m.groups))
        self.emit_conv(n, x4, xt, m.weight().unsqueeze(2), m.bias(), attrs, relu, path, doc, xq=xn,
                       shape=list(self.values[n].shape))

    def conv_transpose2d(self, n, m, path, doc):
        """ConvTranspose2d as the convolution it equals: the input spread out by the stride with the input's zero
        point between its elements (an integer that adds (zp - zp) * w = 0 to every sum, exactly as the
        transposed convolution's missing terms), padded with the zero point by dilation * (k - 1) - padding (plus
        output_padding on the bottom / right) and cropped where that is negative, then a stride-1 convolution with
        the kernel flipped and its input / output channels swapped per group. All padding is explicit, so no
        depthwise special case of the reference engines applies (PyTorch's transposed kernels have none)."""
        x = n.args[0]
        xt = self.values[x]
        if m.padding_mode != "zeros":
            raise ExportError("'%s': padding_mode %s is not supported" % (path, m.padding_mode))
        wt = m.weight()
        if wt.qscheme() not in (torch.per_tensor_affine, torch.per_tensor_symmetric):
            raise ExportError("'%s': ConvTranspose2d with %s weights is not supported" % (path, wt.qscheme()))
        g = int(m.groups)
        cin, og, kh, kw = wt.shape
        ig = cin // g
        if self.semantics == "pytorch-x86" and R.x86_conv_onednn([wt.q_zero_point()], g):
            if any(_pair(m.output_padding)):
                raise ExportError("'%s': PyTorch's x86 engine runs a transposed convolution with output_padding "
                                  "through FBGEMM, where qwasm's pytorch-x86 profile takes oneDNN for symmetric "
                                  "weights; quantize it on the fbgemm engine" % path)
            if ig != og:
                raise ExportError("'%s': PyTorch 2.13's x86 engine (oneDNN) computes a transposed convolution with "
                                  "%d input and %d output channels per group wrongly (results far from the float "
                                  "op's; docs/exporter.md), which qwasm does not reproduce; quantize it on the fbgemm "
                                  "engine" % (path, ig, og))
        q = wt.int_repr().reshape(g, ig, og, kh, kw).permute(0, 2, 1, 3, 4).flip(3, 4).reshape(g * og, ig, kh, kw)
        w = torch._make_per_tensor_quantized_tensor(q.contiguous(), wt.q_scale(), wt.q_zero_point())
        xn = self.arg_name(x, n)
        cur, shape = xn, list(xt.shape)
        (sh, sw), (ph, pw), (dh, dw), (oph, opw) = (_pair(v) for v in (m.stride, m.padding, m.dilation, m.output_padding))
        for axis, stride, lo, hi in ((2, sh, dh * (kh - 1) - ph, dh * (kh - 1) - ph + oph),
                                     (3, sw, dw * (kw - 1) - pw, dw * (kw - 1) - pw + opw)):
            cur, shape = self.spread(cur, shape, axis, stride, lo, hi, xt.q_zero_point(), path, doc)
        attrs = dict(kernel_shape=[kh, kw], strides=[1, 1], pads=[0, 0, 0, 0], dilations=[dh, dw], group=g)
        self.emit_conv(n, cur, xt, w, m.bias(), attrs, False, path, doc, xq=xn)

    def spread(self, xn, shape, axis, stride, lo, hi, zp, path, doc):
        """uint8 x along `axis` spread by `stride` (stride - 1 zero points after each element), then lo zero points
        before and hi after the last element (negative: that many elements cut off). Concat / Reshape / Split."""
        def const(tag, shp):
            return self.init("%s/%s" % (path, tag), np.full(shp, zp, dtype=np.uint8))

        def node(op, inputs, tag, shp, **attrs):
            out = self.unique("%s/%s" % (xn, tag))
            self.emit(op, inputs, [out], "%s/%s" % (path, tag), doc=doc, **attrs)
            self.vinfo[out] = helper.make_tensor_value_info(out, TensorProto.UINT8, shp)
            return out
        size = shape[axis]
        tag = "hw"[axis - 2]
        if stride > 1:  # [.., L, ..] -> [.., L, 1, ..] ++ zps [.., L, s-1, ..] -> [.., L * s, ..]; s - 1 zps at the end
            ext = shape[:axis + 1] + [1] + shape[axis + 1:]
            xn = node("Reshape", [xn, self.init("%s/%s_ext" % (path, tag), np.array(ext, dtype=np.int64))],
                      tag + "_ext", ext)
            zs = shape[:axis + 1] + [stride - 1] + shape[axis + 1:]
            both = shape[:axis + 1] + [stride] + shape[axis + 1:]
            xn = node("Concat", [xn, const(tag + "_gaps", zs)], tag + "_gaps", both, axis=axis + 1)
            shape = shape[:axis] + [size * stride] + shape[axis + 1:]
            xn = node("Reshape", [xn, self.init("%s/%s_spread" % (path, tag), np.array(shape, dtype=np.int64))],
                      tag + "_spread", shape)
            hi -= stride - 1  # the trailing gaps count toward the end padding
        parts = [xn]
        if lo > 0:
            parts.insert(0, const(tag + "_lo", shape[:axis] + [lo] + shape[axis + 1:]))
        if hi > 0:
            parts.append(const(tag + "_hi", shape[:axis] + [hi] + shape[axis + 1:]))
        if len(parts) > 1:
            shape = shape[:axis] + [shape[axis] + max(lo, 0) + max(hi, 0)] + shape[axis + 1:]
            xn = node("Concat", parts, tag + "_pad", shape, axis=axis)
        cut_lo, cut_hi = max(-lo, 0), max(-hi, 0)
        if cut_lo or cut_hi:
            keep = shape[axis] - cut_lo - cut_hi
            sizes = [v for v in (cut_lo, keep, cut_hi) if v]
            outs = [self.unique("%s/%s_cut%d" % (xn, tag, i)) for i in range(len(sizes))]
            self.emit("Split", [xn, self.init("%s/%s_cut" % (path, tag), np.array(sizes, dtype=np.int64))], outs,
                      "%s/%s_cut" % (path, tag), doc=doc, axis=axis)
            shape = shape[:axis] + [keep] + shape[axis + 1:]
            xn = outs[1 if cut_lo else 0]
            for o, sz in zip(outs, sizes):
                self.vinfo[o] = helper.make_tensor_value_info(o, TensorProto.UINT8, shape[:axis] + [sz] + shape[axis + 1:])
        return xn, shape

    def linear(self, n, m, path, relu, doc):
        """Linear / LinearReLU: QGemm; inputs of more than two dimensions are flattened to [M, K] around it, as
        PyTorch's linear does."""
        x = n.args[0]
        xt, yt = self.values[x], self.values[n]
        if xt.dim() < 1:
            raise ExportError("'%s': Linear needs an input of at least one dimension" % path)
        xn = self.arg_name(x, n)
        xs, xz = self.qp(xn, xt)
        w, b = m.weight(), m.bias()
        wn, wsn, wzn, ws64 = self.weight(w, path)
        name = self.out_name(n, path)
        ys, yz = self.qp(name, yt)
        bn = self.bias(b, ws64, w, xt, path) if b is not None else ""  # an optional input left empty
        flat = xt.dim() != 2
        a, out = xn, name
        if flat:
            rows, k, nout = int(np.prod(xt.shape[:-1])), xt.shape[-1], yt.shape[-1]
            a, out = self.unique(name + "/rows_in"), self.unique(name + "/rows")
            self.emit("Reshape", [xn, self.init(path + "/rows_in", np.array([rows, k], dtype=np.int64))], [a],
                      path + "/rows_in", doc=doc)
            self.vinfo[a] = helper.make_tensor_value_info(a, TensorProto.UINT8, [rows, k])
            self.vinfo[out] = helper.make_tensor_value_info(out, TensorProto.UINT8, [rows, nout])
        pre = self.unique(out + "/pre_relu") if relu else out
        self.emit("QGemm", [a, xs, xz, wn, wsn, wzn, bn, ys, yz], [pre], path, domain=MS_DOMAIN, doc=doc,
                  transA=0, transB=1, alpha=1.0)
        if relu:
            self.vinfo[pre] = self.vinfo.get(out) or self.tensor_info(pre, yt)
            self.clip(pre, yt, yt.q_zero_point(), 255, out, path + "/relu", doc + " (fused ReLU)")
        if flat:
            self.emit("Reshape", [out, self.init(path + "/shape", np.array(list(yt.shape), dtype=np.int64))], [name],
                      path + "/rows_out", doc=doc)
        self.names[n] = name
        self.set_info(name, yt)

    def maxpool(self, n, x, k, s, p, d, ceil, ret_idx, path, doc):
        if ret_idx:
            raise ExportError("'%s': max pooling with return_indices is not supported" % path)
        xt, yt = self.values[x], self.values[n]
        xn = self.arg_name(x, n)
        self.check_q(xt, xn)
        if not self.same_qparams(xt, yt):
            raise ExportError("'%s': max pooling changed qparams" % path)
        k = _pair(k)
        s = _pair(s) if s not in (None, [], ()) else k
        ph, pw = _pair(p)
        name = self.out_name(n, path)
        self.qp(name, yt)
        self.emit("MaxPool", [xn], [name], path, doc=doc, kernel_shape=k, strides=s, pads=[ph, pw, ph, pw],
                  dilations=_pair(d), ceil_mode=int(bool(ceil)))
        self.names[n] = name
        self.set_info(name, yt)

    # --- pooling ------------------------------------------------------------------------------------------
    def vector_channels(self, c):
        """Channels PyTorch 2.x's channels-last pooling kernels take through their vector loops on this host."""
        vw = R.VECTOR_WIDTH[cpu_capability()]
        return c // vw * vw if vw and self.profile["tail"] == "fbgemm" else 0

    def nhwc_kernel(self, x, xt):
        """Whether PyTorch's generic pooling kernels take their channels-last variant for this input."""
        return self.layouts.get(x) == "nhwc" or xt.shape[1] == 1 or xt.shape[2] * xt.shape[3] == 1

    def same_pooling(self, path, torch_form, file_form, counts, zp, vector_channels, what):
        """Requires PyTorch's pooling rounding (torch_form) and the file's (file_form) to agree on every window sum
        the input can produce: counts = the distinct (number of input taps, divisor) of its windows."""
        for valid, d in counts:
            acc = np.arange(-zp * valid, (255 - zp) * valid + 1, dtype=np.int64)
            raw = acc + zp * valid
            for vector in sorted({False, vector_channels > 0}):
                t = np.clip(R.pool_formula(torch_form, acc, raw, d, zp, vector), 0, 255)
                f = np.clip(R.pool_formula(file_form, acc, raw, d, zp, vector), 0, 255)
                if not np.array_equal(t, f):
                    k = int(np.argmax(t != f))
                    raise ExportError("'%s': %s: PyTorch's %s kernel rounds a window sum of %d (%d taps) to %d where "
                                      "the nearest ONNX form computes %d; not expressible"
                                      % (path, what, torch_form, int(acc[k]), valid, int(t[k]), int(f[k])))

    def nhwc_pool_node(self, op, inputs, name, xt, yt, path, doc, **attrs):
        """A pooling node run on channels-last data (channels_last = 1) between two Transposes: PyTorch pooled a
        channels-last tensor, whose kernel rounds differently."""
        def shp(t):
            return [t.shape[0], t.shape[2], t.shape[3], t.shape[1]]
        xin, yout = self.unique(name + "/nhwc_in"), self.unique(name + "/nhwc_out")
        self.emit("Transpose", [inputs[0]], [xin], path + "/to_nhwc", perm=[0, 2, 3, 1])
        self.emit(op, [xin] + inputs[1:], [yout], path, domain=MS_DOMAIN, doc=doc + " (PyTorch's channels-last kernel)",
                  channels_last=1, **attrs)
        self.emit("Transpose", [yout], [name], path + "/to_nchw", perm=[0, 3, 1, 2])
        self.vinfo[xin] = helper.make_tensor_value_info(xin, TensorProto.UINT8, shp(xt))
        self.vinfo[yout] = helper.make_tensor_value_info(yout, TensorProto.UINT8, shp(yt))

    def avgpool(self, n, x, k, s, p, ceil, count_include_pad, divisor_override, path, doc):
        xt, yt = self.values[x], self.values[n]
        xn = self.arg_name(x, n)
        xs, xz = self.qp(xn, xt)
        k = _pair(k)
        s = _pair(s) if s not in (None, [], ()) else k
        ph, pw = _pair(p)
        qnnpack = self.profile["pool"] == "qnnpack" and not ceil
        if qnnpack:
            # QNNPACK's kernel: padding counts (as the zero point), divisor kh*kw; it ignores count_include_pad=False
            # and divisor_override, so the file records what it computes.
            count_include_pad = True
        elif divisor_override:
            count_include_pad = self.divisor_as_padding_rule(xt, k, s, (ph, pw), ceil, divisor_override, path)
        name = self.out_name(n, path)
        ys, yz = self.qp(name, yt)
        attrs = dict(kernel_shape=k, strides=s, pads=[ph, pw, ph, pw], ceil_mode=int(bool(ceil)),
                     count_include_pad=int(bool(count_include_pad)))
        if qnnpack or self.layouts.get(x) != "nhwc":
            self.emit("QLinearAveragePool", [xn, xs, xz, ys, yz], [name], path, domain=MS_DOMAIN, doc=doc,
                      channels_last=0, **attrs)
        else:
            self.nhwc_pool_node("QLinearAveragePool", [xn, xs, xz, ys, yz], name, xt, yt, path, doc, **attrs)
        self.names[n] = name
        self.set_info(name, yt)

    def divisor_as_padding_rule(self, xt, k, s, p, ceil, divisor, path):
        """avg_pool2d's divisor_override has no ONNX attribute: accepted where it equals the divisor one of
        count_include_pad's rules gives every window; returns that count_include_pad."""
        h, w = xt.shape[2], xt.shape[3]
        oh, ow = R.out_size(h, k[0], s[0], p[0], 1, ceil), R.out_size(w, k[1], s[1], p[1], 1, ceil)
        for cip in (True, False):
            ok = True
            for i in range(oh):
                for j in range(ow):
                    hs, ws = i * s[0] - p[0], j * s[1] - p[1]
                    he, we = min(hs + k[0], h + p[0]), min(ws + k[1], w + p[1])
                    d = (he - hs) * (we - ws) if cip else (min(he, h) - max(hs, 0)) * (min(we, w) - max(ws, 0))
                    ok &= d == divisor
            if ok:
                return cip
        raise ExportError("'%s': avg_pool2d with divisor_override=%d: ONNX's QLinearAveragePool has no divisor "
                          "attribute and count_include_pad does not give %d for every window" % (path, divisor, divisor))

    def adaptive_avgpool(self, n, x, path, doc):
        xt, yt = self.values[x], self.values[n]
        self.arg_name(x, n)
        if xt.dim() != 4:
            raise ExportError("'%s': adaptive average pooling needs a 4-D input" % path)
        h, w = xt.shape[2], xt.shape[3]
        oh, ow = yt.shape[2], yt.shape[3]
        qnnpack = self.profile["pool"] == "qnnpack"
        if h % oh or w % ow:
            raise ExportError("'%s': adaptive_avg_pool2d from %dx%d to %dx%d: windows of different sizes (PyTorch's "
                              "generic kernel), which ONNX's average pooling cannot express" % (path, h, w, oh, ow))
        kh, kw = h // oh, w // ow
        if qnnpack:  # QNNPACK's average pool, as for avg_pool2d (global: its global pool, the same rounding)
            if (oh, ow) == (1, 1):
                return self.global_avgpool(n, x, path, doc, keepdim=True)
            return self.avgpool(n, x, (kh, kw), (kh, kw), 0, False, True, None, path, doc)
        zp, taps = xt.q_zero_point(), kh * kw
        if self.nhwc_kernel(x, xt):  # the channels-last adaptive kernel: FBGEMM's quantize in its vector loop
            vch = self.vector_channels(xt.shape[1])
            if (oh, ow) == (1, 1):
                return self.global_avgpool(n, x, path, doc, keepdim=True, channels_last=True)
            self.same_pooling(path, "adaptive_nhwc", "nhwc", [(taps, taps)], zp, vch, "adaptive_avg_pool2d")
            self.avgpool_as(n, x, (kh, kw), path, doc, channels_last=True)
        else:  # the generic NCHW kernel: rint((float)sum(q) * (1 / n)), the zero point never subtracted
            if (oh, ow) == (1, 1):
                self.same_pooling(path, "adaptive_nchw", "mean", [(taps, taps)], zp, 0, "adaptive_avg_pool2d")
                return self.global_avgpool(n, x, path, doc, keepdim=True)
            self.same_pooling(path, "adaptive_nchw", "nchw", [(taps, taps)], zp, 0, "adaptive_avg_pool2d")
            self.avgpool_as(n, x, (kh, kw), path, doc, channels_last=False)

    def avgpool_as(self, n, x, k, path, doc, channels_last):
        """An average pool with kernel = stride = k and no padding, on the layout PyTorch pooled."""
        xt, yt = self.values[x], self.values[n]
        xn = self.arg_name(x, n)
        xs, xz = self.qp(xn, xt)
        name = self.out_name(n, path)
        ys, yz = self.qp(name, yt)
        attrs = dict(kernel_shape=list(k), strides=list(k), pads=[0, 0, 0, 0], ceil_mode=0, count_include_pad=1)
        if channels_last:
            self.nhwc_pool_node("QLinearAveragePool", [xn, xs, xz, ys, yz], name, xt, yt, path, doc, **attrs)
        else:
            self.emit("QLinearAveragePool", [xn, xs, xz, ys, yz], [name], path, domain=MS_DOMAIN, doc=doc,
                      channels_last=0, **attrs)
        self.names[n] = name
        self.set_info(name, yt)

    def global_avgpool(self, n, x, path, doc, keepdim, channels_last=False):
        xt, yt = self.values[x], self.values[n]
        xn = self.arg_name(x, n)
        xs, xz = self.qp(xn, xt)
        name = self.out_name(n, path)
        pooled = self.unique(name + "/pooled") if not keepdim else name
        ys, yz = self.qp(name, yt)
        if channels_last:
            self.nhwc_pool_node("QLinearGlobalAveragePool", [xn, xs, xz, ys, yz], pooled, xt,
                                xt[:, :, :1, :1], path, doc)
        else:
            self.emit("QLinearGlobalAveragePool", [xn, xs, xz, ys, yz], [pooled], path, domain=MS_DOMAIN, doc=doc,
                      channels_last=0)
        if not keepdim:
            shp = list(xt.shape[:2]) + [1, 1]
            self.vinfo[pooled] = helper.make_tensor_value_info(pooled, TensorProto.UINT8, shp)
            sn = self.init(path + "/shape", np.array(list(yt.shape), dtype=np.int64))
            self.emit("Reshape", [pooled, sn], [name], path + "/squeeze", doc=doc)
        self.names[n] = name
        self.set_info(name, yt)

    def flatten(self, n, x, start, end, path, doc):
        xt, yt = self.values[x], self.values[n]
        xn = self.arg_name(x, n)
        self.check_layout_input(xt, xn)
        nd = xt.dim()
        start = start + nd if start < 0 else start
        end = end + nd if end < 0 else end
        onnx_shape = [int(np.prod(xt.shape[:start])), int(np.prod(xt.shape[start:]))]
        name = self.out_name(n, path)
        self.maybe_qp(name, yt)
        if end == nd - 1 and list(yt.shape) == onnx_shape:
            self.emit("Flatten", [xn], [name], path, doc=doc, axis=int(start))
        else:
            sn = self.init(path + "/shape", np.array(list(yt.shape), dtype=np.int64))
            self.emit("Reshape", [xn, sn], [name], path, doc=doc)
        self.names[n] = name
        self.set_info(name, yt)

    def reshape(self, n, x, path, doc):
        yt = self.values[n]
        self.layout_op(n, x, "Reshape", path, doc, [self.init(path + "/shape", np.array(list(yt.shape), dtype=np.int64))])

    def transpose(self, n, x, perm, path, doc):
        self.layout_op(n, x, "Transpose", path, doc, perm=[int(p) for p in perm])

    def layout_op(self, n, x, op, path, doc, extra=(), **attrs):
        """A data-movement op on quint8 (or, in FX models, float32) data: the output keeps the qparams."""
        xt, yt = self.values[x], self.values[n]
        xn = self.arg_name(x, n)
        self.check_layout_input(xt, xn)
        name = self.out_name(n, path)
        self.maybe_qp(name, yt)
        self.emit(op, [xn, *extra], [name], path, doc=doc, **attrs)
        self.names[n] = name
        self.set_info(name, yt)

    def split(self, n, x, dim, path, doc):
        xt, parts = self.values[x], self.values[n]
        xn = self.arg_name(x, n)
        self.check_layout_input(xt, xn)
        dim = dim + xt.dim() if dim < 0 else dim
        names = [self.unique("%s/%d" % (path, i)) for i in range(len(parts))]
        sizes = self.init(path + "/split", np.array([p.shape[dim] for p in parts], dtype=np.int64))
        self.emit("Split", [xn, sizes], names, path, doc=doc, axis=int(dim))
        for nm, p in zip(names, parts):
            self.maybe_qp(nm, p)
            self.set_info(nm, p)
        self.names[n] = names

    # --- elementwise ------------------------------------------------------------------------------------
    def unary(self, n, x, fn, path, doc):
        """Any elementwise op: run torch on all 256 input integers. A clamp becomes Clip, anything else a table.

        Then torch runs on a random probe with the recorded input's shape, qparams and memory layout, to catch
        kernels whose result is not `table[x]` element by element: PyTorch 1.13's quantized relu6 / hardtanh /
        clamp read a channels-last input in memory order and write a contiguous NCHW result, i.e. the values land
        transposed; that is reproduced with Transpose + Reshape. Anything else position-dependent is refused."""
        xt, yt = self.values[x], self.values[n]
        xn = self.arg_name(x, n)
        self.check_q(xt, xn)
        self.check_q(yt, path)
        s, z = xt.q_scale(), xt.q_zero_point()
        allq = list(range(256))
        with torch.no_grad():
            vec = fn(_quint8_table_input(s, z, allq))   # 4 whole blocks of 64: the generic kernels' vector path
            one = [fn(_quint8_table_input(s, z, [q])) for q in allq]  # one element: their scalar path
        for t in [vec] + one:
            if not t.is_quantized or t.q_scale() != yt.q_scale() or t.q_zero_point() != yt.q_zero_point():
                raise ExportError("'%s': output qparams depend on the input values; cannot tabulate" % path)
        table = vec.int_repr().numpy().astype(np.int64)
        scalar = np.array([int(t.int_repr()[0]) for t in one])
        inexact = ""
        if np.any(table != scalar):
            bad = [q for q in allq if table[q] != scalar[q]]
            inexact = ("'%s' (%s): PyTorch's kernel gives position-dependent results for input integers %s (vector "
                       "vs scalar code path); a 256-entry table cannot match it everywhere" % (path, doc, bad[:8]))
            if not self.allow_inexact_lut:
                raise ExportError(inexact + " (export(..., allow_inexact_lut=True) writes the vector-path table)")
            warnings.warn(inexact)
        scramble = self.probe_layout(x, xt, fn, table, path, doc, inexact)

        name = self.out_name(n, path)
        res = self.unique(name + "/logical") if scramble else name
        lo, hi = int(table[0]), int(table[255])
        if self.same_qparams(xt, yt) and lo <= hi and np.array_equal(table, np.clip(np.arange(256), lo, hi)):
            self.qp(name, yt)
            self.clip(xn, yt, lo, hi, res, path, doc)
        elif np.array_equal(table, np.arange(256)):  # the same integers read with other qparams (add_scalar, ...)
            self.qp(name, yt)
            self.emit("Identity", [xn], [res], path, doc=doc + " (the same integers, new qparams)")
        else:
            self.qp(name, yt)
            idx = self.unique(name + "/index")
            tab = self.init(path + "/table", table.astype(np.uint8))
            self.emit("Cast", [xn], [idx], path + "/cast", doc=doc, to=TensorProto.INT32)
            self.vinfo[idx] = helper.make_tensor_value_info(idx, TensorProto.INT32, list(xt.shape))
            self.emit("Gather", [tab, idx], [res], path, doc=doc + " (table of PyTorch's output for every input)",
                      axis=0)
        if scramble:
            self.vinfo[res] = helper.make_tensor_value_info(res, TensorProto.UINT8, list(xt.shape))
            tr = self.unique(name + "/memory_order")
            self.emit("Transpose", [res], [tr], path + "/memory_order", perm=[0, 2, 3, 1],
                      doc="PyTorch %s: a channels-last input is read in memory order (NHWC) and written as a "
                          "contiguous NCHW tensor; reproduced as Transpose + Reshape" % torch.__version__)
            nhwc = list(xt.shape)
            self.vinfo[tr] = helper.make_tensor_value_info(tr, TensorProto.UINT8,
                                                           [nhwc[0], nhwc[2], nhwc[3], nhwc[1]])
            sn = self.init(path + "/shape", np.array(list(yt.shape), dtype=np.int64))
            self.emit("Reshape", [tr, sn], [name], path + "/reinterpret", doc=doc)
        self.names[n] = name
        self.set_info(name, yt)

    def probe_layout(self, x, xt, fn, table, path, doc, inexact):
        lay = self.layouts.get(x, "nchw")
        shape = tuple(xt.shape)
        stride, offset = self.strides.get(x, (tuple(xt.stride()), 0))
        size = offset + sum((d - 1) * st for d, st in zip(shape, stride)) + 1 if all(shape) else 1
        g = torch.Generator().manual_seed(1234)
        base = torch._make_per_tensor_quantized_tensor(
            torch.randint(0, 256, (size,), generator=g, dtype=torch.uint8), xt.q_scale(), xt.q_zero_point())
        probe = base.as_strided(shape, stride, offset)  # same strides as the real input
        rl = probe.int_repr().numpy().astype(np.int64)     # (read before: fn may work in place)
        with torch.no_grad():
            got = fn(probe).int_repr().numpy().astype(np.int64)
        if np.array_equal(got, table[rl]) or inexact:
            return False
        if lay == "nhwc" and np.array_equal(got, table[rl.transpose(0, 2, 3, 1)].reshape(rl.shape)):
            warnings.warn("'%s' (%s): PyTorch %s reads this channels-last input in memory order and writes NCHW, so "
                          "its values land transposed (a PyTorch bug); the file reproduces it. Fuse the op or "
                          "call .contiguous() before it to avoid this." % (path, doc, torch.__version__))
            return True
        raise ExportError("'%s' (%s): PyTorch's result depends on element position for this input layout (%s); "
                          "a table cannot reproduce it" % (path, doc, lay))

    def binary(self, n, op, a, b, relu, path, doc):
        at, bt, yt = self.values[a], self.values[b], self.values[n]
        an, bn = self.arg_name(a, n), self.arg_name(b, n)
        as_, az = self.qp(an, at)
        bs, bz = self.qp(bn, bt)
        name = self.out_name(n, path)
        ys, yz = self.qp(name, yt)
        order = None
        if op == "QLinearAdd" and not (self.profile["add"] == "qnnpack" and list(at.shape) == list(bt.shape)):
            order = self.add_order(a, b, at, bt, yt, path)
        pre = self.unique(name + "/pre_relu") if relu else name
        if order is None:
            self.emit(op, [an, as_, az, bn, bs, bz, ys, yz], [pre], path, domain=MS_DOMAIN, doc=doc)
        else:
            # PyTorch's float add rounds its vector blocks and its tail differently, and these qparams meet such a
            # pair of inputs: qwasm must walk the elements in PyTorch's order. Transposes to that order (row-major
            # data) around the add; perm is the identity for NCHW, which still gives row-major data.
            perm, back = ([0, 2, 3, 1], [0, 3, 1, 2]) if order == "nhwc" else ([0, 1, 2, 3], [0, 1, 2, 3])
            ins = []
            for xn_, xt_, tag in ((an, at, "a"), (bn, bt, "b")):
                t = self.unique("%s/%s_%s" % (name, order, tag))
                self.emit("Transpose", [xn_], [t], "%s/%s_%s" % (path, order, tag), perm=perm,
                          doc="the element order of PyTorch's float add")
                self.vinfo[t] = helper.make_tensor_value_info(t, TensorProto.UINT8, [xt_.shape[k] for k in perm])
                ins.append(t)
            mid = self.unique(name + "/" + order)
            self.emit(op, [ins[0], as_, az, ins[1], bs, bz, ys, yz], [mid], path, domain=MS_DOMAIN, doc=doc)
            self.vinfo[mid] = helper.make_tensor_value_info(mid, TensorProto.UINT8, [yt.shape[k] for k in perm])
            self.emit("Transpose", [mid], [pre], path + "/back", perm=back)
        if relu:
            self.set_info(pre, yt)
            self.clip(pre, yt, yt.q_zero_point(), 255, name, path + "/relu", doc + " (ReLU)")
        self.names[n] = name
        self.set_info(name, yt)

    def add_order(self, a, b, at, bt, yt, path):
        """PyTorch's float quantized add (every add on the fbgemm / x86 engines, broadcasting ones on qnnpack)
        dequantizes and quantizes whole blocks of 64 elements one way and the rest another (reference.add_float).
        None when the two ways agree on every pair of input integers with these qparams (then positions do not
        matter); else the memory order PyTorch walked ('nchw' or 'nhwc'), which the file must make qwasm follow."""
        qa, qb = np.meshgrid(np.arange(256), np.arange(256), indexing="ij")
        vec, tail = R.add_float_paths(qa, at.q_zero_point(), at.q_scale(), qb, bt.q_zero_point(), bt.q_scale(),
                                      yt.q_scale(), yt.q_zero_point(), False, self.profile["tail"])
        if np.array_equal(vec, tail):
            return None
        la, lb = self.layouts.get(a), self.layouts.get(b)
        same = list(at.shape) == list(bt.shape)
        if la == lb == "nchw" or (not same and {la, lb} <= {"nchw"}):
            return "nchw"
        if same and la == lb == "nhwc" and self.strides.get(a, (None,))[0] == self.strides.get(b, (None,))[0]:
            return "nhwc"
        raise ExportError("'%s': PyTorch's float add rounds by element position and these inputs (%s and %s, shapes %s "
                          "and %s) take an order this exporter does not reproduce" % (path, la, lb, list(at.shape),
                                                                                    list(bt.shape)))

    def concat(self, n, xs, dim, path, doc):
        yt = self.values[n]
        name = self.out_name(n, path)
        ys, yz = self.qp(name, yt)
        inputs = [ys, yz]
        for x in xs:
            xn = self.arg_name(x, n)
            s, z = self.qp(xn, self.values[x])
            inputs += [xn, s, z]
        dim = dim + yt.dim() if dim < 0 else dim
        if yt.dim() == 4 and dim == 1 and all(self.layouts.get(x) == "nhwc" for x in xs):
            self.check_nhwc_cat(xs, yt, path)
        self.emit("QLinearConcat", inputs, [name], path, domain=MS_DOMAIN, doc=doc, axis=int(dim))
        self.names[n] = name
        self.set_info(name, yt)

    def check_nhwc_cat(self, xs, yt, path):
        """PyTorch concatenates channels-last tensors along channels with its own kernel (qcat_nhwc_kernel): inputs
        with the output's qparams are copied; the others are requantized in vector chunks of channels (dequantize
        fma(s, q, s * -zp), quantize zp + rint(x * (float)(1.0 / s_out))) and a scalar rest (quantize_val). The
        file's QLinearConcat requantizes every element one way: each input's 256 integers must agree."""
        ys, yz = yt.q_scale(), yt.q_zero_point()
        q = np.arange(256)
        for x in xs:
            xt = self.values[x]
            s, z = xt.q_scale(), xt.q_zero_point()
            if s == ys and z == yz:
                continue
            dv = R.fma32(s, q, F32(F32(s) * F32(-z)))
            vec = np.clip(R.rint((dv * F32(1.0 / np.float64(ys))).astype(F32)) + yz, 0, 255)
            dt = R.dequantize(q, s, z)
            scalar = R.quantize(dt, ys, yz, "torch") if self.profile["tail"] == "torch" else R.quantize_scalar_fbgemm(
                dt, ys, yz)
            written = R.quantize(dt, ys, yz, self.profile["rounding"])
            for label, got in (("vector", vec), ("scalar", scalar)):
                if not np.array_equal(got, written):
                    k = int(np.argmax(got != written))
                    raise ExportError("'%s': PyTorch's channels-last cat requantizes input '%s' integer %d to %d in its "
                                      "%s loop, QLinearConcat to %d; not expressible" % (path, x.name, k, int(got[k]),
                                                                                         label, int(written[k])))

    # --- resampling and lookups --------------------------------------------------------------------------
    def upsample(self, n, x, mode, fn, path, doc):
        """Nearest upsampling copies integers: two Gathers with the row and column indices PyTorch's own kernel
        picks (read off its output for inputs that hold their index)."""
        xt, yt = self.values[x], self.values[n]
        xn = self.arg_name(x, n)
        self.check_q(xt, xn)
        if mode != "nearest":
            raise ExportError("'%s': %s upsampling: PyTorch's quantized kernel for channels-last tensors (every conv "
                              "output) computes with fused multiply-adds in its vector and scalar loops, which no ONNX "
                              "operator qwasm's loader runs can express (it needs a Resize with PyTorch's "
                              "arithmetic); only mode 'nearest' is exported" % (path, mode))
        if xt.dim() != 4 or not self.same_qparams(xt, yt):
            raise ExportError("'%s': nearest upsampling of a 4-D tensor that keeps its qparams expected" % path)
        h, w = xt.shape[2], xt.shape[3]
        rows, cols = self.probe_indices(fn, xt, (h, w))
        name = self.out_name(n, path)
        self.qp(name, yt)
        cur = xn
        for axis, idx, tag in ((3, cols, "cols"), (2, rows, "rows")):
            if np.array_equal(idx, np.arange(xt.shape[axis])):
                continue
            out = name if (axis == 2 or np.array_equal(rows, np.arange(h))) else self.unique(name + "/" + tag)
            self.emit("Gather", [cur, self.init("%s/%s" % (path, tag), idx.astype(np.int64))], [out],
                      "%s/%s" % (path, tag) if out != name else path, doc=doc + " (the source %s PyTorch picks)" % tag,
                      axis=axis)
            if out != name:
                self.vinfo[out] = helper.make_tensor_value_info(out, TensorProto.UINT8, list(yt.shape[:3]) + [len(cols)])
            cur = out
        if cur == xn:
            self.emit("Identity", [xn], [name], path, doc=doc)
        self.names[n] = name
        self.set_info(name, yt)

    def probe_indices(self, fn, xt, size):
        """The input row and column each output element of a nearest resampling reads: fn on uint8 inputs of the
        recorded size whose values are their row (column) index, split into bytes for sizes beyond 256."""
        h, w = size
        out = []
        for axis, length in ((2, h), (3, w)):
            grid = torch.arange(length).reshape([1, 1, -1, 1] if axis == 2 else [1, 1, 1, -1]).expand(1, 1, h, w)
            idx = 0
            for byte in range((max(length - 1, 1).bit_length() + 7) // 8):
                probe = torch._make_per_tensor_quantized_tensor(((grid >> (8 * byte)) & 255).to(torch.uint8).contiguous(),
                                                                xt.q_scale(), xt.q_zero_point())
                with torch.no_grad():
                    y = fn(probe).int_repr().to(torch.int64)
                idx = idx + (y << (8 * byte))
            line = idx[0, 0, :, 0] if axis == 2 else idx[0, 0, 0, :]
            full = line.reshape(-1, 1) if axis == 2 else line.reshape(1, -1)
            if not torch.equal(idx[0, 0], full.expand_as(idx[0, 0])):
                raise ExportError("resampling that is not separable by rows and columns is not supported")
            out.append(line.numpy())
        return out

    def pixel_shuffle(self, n, x, r, up, path, doc):
        """pixel_shuffle / pixel_unshuffle move integers: Reshape, Transpose, Reshape."""
        xt, yt = self.values[x], self.values[n]
        xn = self.arg_name(x, n)
        self.check_q(xt, xn)
        nb, c, h, w = xt.shape
        if up:
            mid, perm = [nb, c // (r * r), r, r, h, w], [0, 1, 4, 2, 5, 3]
        else:
            mid, perm = [nb, c, h // r, r, w // r, r], [0, 1, 3, 5, 2, 4]
        name = self.out_name(n, path)
        self.qp(name, yt)
        a, b = self.unique(name + "/split"), self.unique(name + "/moved")
        self.emit("Reshape", [xn, self.init(path + "/split", np.array(mid, dtype=np.int64))], [a], path + "/split", doc=doc)
        self.emit("Transpose", [a], [b], path + "/move", doc=doc, perm=perm)
        self.emit("Reshape", [b, self.init(path + "/shape", np.array(list(yt.shape), dtype=np.int64))], [name], path,
                  doc=doc)
        self.vinfo[a] = helper.make_tensor_value_info(a, TensorProto.UINT8, mid)
        self.vinfo[b] = helper.make_tensor_value_info(b, TensorProto.UINT8, [mid[k] for k in perm])
        self.names[n] = name
        self.set_info(name, yt)

    def embedding(self, n, m, path, doc):
        """Embedding lookups give float rows: a Gather from the table of PyTorch's own output for every index
        (exact; for a quantized Embedding that is each row as its kernel dequantizes it)."""
        x = n.args[0]
        xt, yt = self.values[x], self.values[n]
        xn = self.arg_name(x, n)
        if yt.is_quantized or xt.dtype not in (torch.int64, torch.int32):
            raise ExportError("'%s': an embedding of int64 / int32 indices with float output expected" % path)
        with torch.no_grad():
            table = m(torch.arange(m.num_embeddings, dtype=xt.dtype)).detach().numpy().astype(F32)
        name = self.out_name(n, path)
        self.emit("Gather", [self.init(path + "/table", table), xn], [name], path, doc=doc + " (PyTorch's rows)", axis=0)
        self.names[n] = name
        self.set_info(name, yt)

    # --- dynamic quantization and float operators (quantize_dynamic models) --------------------------------
    def float_compute(self, n):
        """A node computing on float tensors: its output a float tensor and no input quantized."""
        v = self.values.get(n)
        if not (isinstance(v, torch.Tensor) and not v.is_quantized and v.dtype.is_floating_point) or n not in self.live:
            return False
        return not any(isinstance(self.values.get(a), torch.Tensor) and self.values[a].is_quantized
                       for a in n.all_input_nodes)

    def dynamic_linear(self, n, m, path, doc):
        """torch.ao.nn.quantized.dynamic.Linear: com.microsoft DynamicQuantizeMatMul(x, W^T int8 [K, N], w_scale,
        w_zero_point, bias); its arithmetic in qwasm is the profile's dynamic form (PyTorch's, per engine)."""
        x = n.args[0]
        xt, yt = self.values[x], self.values[n]
        xn = self.arg_name(x, n)
        w, b = m._weight_bias()
        if w.dtype != torch.qint8:
            raise ExportError("'%s': dynamic linear weights of dtype %s (qint8 expected)" % (path, w.dtype))
        if w.qscheme() in (torch.per_channel_affine, torch.per_channel_symmetric, torch.per_channel_affine_float_qparams):
            scales = w.q_per_channel_scales().numpy().astype(np.float64)
            zps = w.q_per_channel_zero_points().numpy().astype(np.int64)
        else:
            scales, zps = np.array([w.q_scale()]), np.array([w.q_zero_point()])
        if not _f32_exact(scales):
            raise ExportError("'%s': weight scales are not float32 values" % path)
        name = self.out_name(n, path)
        wq = np.ascontiguousarray(w.int_repr().numpy().astype(np.int8).T)  # [K, N]
        one = len(scales) == 1
        inputs = [xn, self.init(path + "/weight", wq),
                  self.init(path + "/weight_scale", np.array(scales[0] if one else scales, dtype=F32)),
                  self.init(path + "/weight_zero_point", np.array(zps[0] if one else zps, dtype=np.int8))]
        if b is not None:
            inputs.append(self.init(path + "/bias", b.detach().numpy().astype(F32)))
        self.emit("DynamicQuantizeMatMul", inputs, [name], path, domain=MS_DOMAIN,
                  doc=doc + " (PyTorch's dynamic linear: qwasm.semantics names the engine's arithmetic)")
        self.names[n] = name
        self.set_info(name, yt)

    _FLOAT_BINARY = {operator.add: "Add", torch.add: "Add", "add": "Add", operator.sub: "Sub", torch.sub: "Sub",
                     "sub": "Sub", operator.mul: "Mul", torch.mul: "Mul", "mul": "Mul", operator.truediv: "Div",
                     torch.div: "Div", "div": "Div"}

    def float_node(self, n, target, path, doc):
        """The float operators of a quantize_dynamic model; False for anything else (handled, or refused, later)."""
        v = self.values[n]
        module = target if isinstance(target, nn.Module) else None
        key = target if module is None else None
        if module is not None:
            if isinstance(module, nn.LayerNorm):
                return self.float_layer_norm(n, module.normalized_shape, module.eps, module.weight, module.bias, path)
            if isinstance(module, nn.GELU):
                return self.float_gelu(n, module.approximate, path)
            if isinstance(module, nn.Softmax):
                return self.float_op(n, "Softmax", [n.args[0]], path, axis=int(module.dim) % v.dim())
            if isinstance(module, (nn.Tanh, nn.ReLU)):
                return self.float_op(n, "Tanh" if isinstance(module, nn.Tanh) else "Relu", [n.args[0]], path)
            if isinstance(module, nn.Embedding):
                return self.embedding(n, module, path, doc) or True
            return False
        try:
            op = self._FLOAT_BINARY.get(key)
        except TypeError:
            op = None
        if op is not None and len(n.args) == 2 and not n.kwargs:
            return self.float_op(n, op, list(n.args), path)
        if key in (torch.matmul, operator.matmul, torch.bmm, "matmul", "bmm"):
            return self.float_op(n, "MatMul", list(n.args[:2]), path)
        if key in (F.softmax, torch.softmax, "softmax"):
            dim = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim")
            return self.float_op(n, "Softmax", [n.args[0]], path, axis=int(dim) % v.dim())
        if key in (torch.tanh, "tanh", F.relu, torch.relu, "relu"):
            return self.float_op(n, "Tanh" if key in (torch.tanh, "tanh") else "Relu", [n.args[0]], path)
        if key is F.gelu:
            return self.float_gelu(n, n.kwargs.get("approximate", "none"), path)
        if key is F.layer_norm:
            a = _Args(n, ["input", "normalized_shape", "weight", "bias", "eps"], {"weight": None, "bias": None,
                                                                                    "eps": 1e-5})
            w = self.values.get(a["weight"]) if isinstance(a["weight"], torch.fx.Node) else None
            b = self.values.get(a["bias"]) if isinstance(a["bias"], torch.fx.Node) else None
            return self.float_layer_norm(n, a["normalized_shape"], a["eps"], w, b, path)
        if key in (operator.getitem,) and isinstance(n.args[1], (int, tuple)):
            return self.float_select(n, path)
        if key in ("unsqueeze", "squeeze", torch.unsqueeze, torch.squeeze, "expand_as") and key != "expand_as":
            return self.reshape(n, n.args[0], path, str(key)) or True
        if key in ("to", "float", "type_as") and v.dtype == torch.float32 and self.values[n.args[0]].dtype == torch.float32:
            return self.alias(n, n.args[0]) or True
        if key in (torch.cat, torch.concat):
            xs = list(n.args[0])
            dim = int(n.args[1] if len(n.args) > 1 else n.kwargs.get("dim", 0)) % v.dim()
            return self.float_op(n, "Concat", xs, path, axis=dim)
        return False

    def float_op(self, n, op, args, path, **attrs):
        ins = []
        for k, a in enumerate(args):
            if isinstance(a, torch.fx.Node):
                ins.append(self.arg_name(a, n))
            elif isinstance(a, (int, float)):
                ins.append(self.init("%s/c%d" % (path, k), np.array(a, dtype=F32)))
            else:
                raise ExportError("'%s': operand %r of %s is not supported" % (path, a, op))
        name = self.out_name(n, path)
        self.emit(op, ins, [name], path, doc=str(n.target), **attrs)
        self.names[n] = name
        self.set_info(name, self.values[n])
        return True

    def float_layer_norm(self, n, shape, eps, weight, bias, path):
        """LayerNormalization (opset 17): the file's default-domain opset becomes 17."""
        v = self.values[n]
        dims = len(shape) if isinstance(shape, (list, tuple, torch.Size)) else 1
        k = int(np.prod(v.shape[-dims:]))
        w = (weight.detach().numpy() if weight is not None else np.ones(k)).astype(F32).reshape(v.shape[-dims:])
        ins = [self.arg_name(n.args[0], n), self.init(path + "/weight", w)]
        if bias is not None:
            ins.append(self.init(path + "/bias", bias.detach().numpy().astype(F32)))
        self.opset = max(self.opset, 17)
        name = self.out_name(n, path)
        self.emit("LayerNormalization", ins, [name], path, doc="LayerNorm", axis=-dims, epsilon=float(eps))
        self.names[n] = name
        self.set_info(name, v)
        return True

    def float_gelu(self, n, approximate, path):
        """GELU as torch.onnx.export writes it: x * 0.5 * (1 + erf(x / sqrt(2)))."""
        if approximate != "none":
            raise ExportError("'%s': GELU with approximate=%r is not supported (the erf form is)" % (path, approximate))
        v = self.values[n]
        xn = self.arg_name(n.args[0], n)
        name = self.out_name(n, path)
        t = [self.unique("%s/gelu_%d" % (name, i)) for i in range(4)]
        self.emit("Div", [xn, self.init(path + "/sqrt2", np.array(1.4142135381698608, dtype=F32))], [t[0]], path + "/div")
        self.emit("Erf", [t[0]], [t[1]], path + "/erf")
        self.emit("Add", [t[1], self.init(path + "/one", np.array(1.0, dtype=F32))], [t[2]], path + "/add")
        self.emit("Mul", [xn, t[2]], [t[3]], path + "/mul")
        self.emit("Mul", [t[3], self.init(path + "/half", np.array(0.5, dtype=F32))], [name], path, doc="GELU")
        for nm in t:
            self.vinfo[nm] = helper.make_tensor_value_info(nm, TensorProto.FLOAT, list(v.shape))
        self.names[n] = name
        self.set_info(name, v)
        return True

    def float_select(self, n, path):
        """x[..., i, ...]: one index (the other dimensions whole) as a Gather."""
        idx = n.args[1] if isinstance(n.args[1], tuple) else (n.args[1],)
        ints = [(d, i) for d, i in enumerate(idx) if isinstance(i, int)]
        whole = all(isinstance(i, int) or (isinstance(i, slice) and i == slice(None)) for i in idx)
        if len(ints) != 1 or not whole:
            raise ExportError("'%s': indexing %r is not supported (one integer index, the rest ':')" % (path, idx))
        d, i = ints[0]
        xn = self.arg_name(n.args[0], n)
        name = self.out_name(n, path)
        self.emit("Gather", [xn, self.init(path + "/index", np.array(i, dtype=np.int64))], [name], path, axis=d)
        self.names[n] = name
        self.set_info(name, self.values[n])
        return True

    # --- functions and methods --------------------------------------------------------------------------
    def call_function(self, n):
        t = n.target
        path = self.path(n)
        doc = getattr(t, "__name__", str(t))
        if self.float_compute(n) and self.float_node(n, t, path, doc):
            return
        q = torch.ops.quantized
        if t in (q.add, q.add_relu, q.add_out, q.add_relu_out):
            a = _Args(n, ["qa", "qb", "scale", "zero_point"])
            if not isinstance(a["qb"], torch.fx.Node) or not isinstance(self.values[a["qb"]], torch.Tensor):
                raise ExportError("'%s': quantized add with a scalar is not supported" % path)
            return self.binary(n, "QLinearAdd", a["qa"], a["qb"], t in (q.add_relu, q.add_relu_out), path,
                               "quantized::" + str(t).split(".")[-1])
        if t in (q.mul, q.mul_relu):
            a = _Args(n, ["qa", "qb", "scale", "zero_point"])
            if not isinstance(a["qb"], torch.fx.Node) or not isinstance(self.values[a["qb"]], torch.Tensor):
                raise ExportError("'%s': quantized mul with a scalar is not supported" % path)
            return self.binary(n, "QLinearMul", a["qa"], a["qb"], t is q.mul_relu, path,
                               "quantized::" + str(t).split(".")[-1])
        if t in (q.cat, torch.cat, torch.concat):
            a = _Args(n, ["qx", "dim"] if t is not q.cat else ["qx", "scale", "zero_point", "dim"], {"dim": 0})
            a.v.setdefault("dim", a.v.get("axis", 0))
            return self.concat(n, list(a["qx"]), int(a["dim"]), path, "cat")
        if t in (torch.quantize_per_tensor,):
            return self.quantize(n, n.args[0], path, "quantize_per_tensor")
        if t in (torch.dequantize,):
            return self.dequantize(n, n.args[0], path, "dequantize")
        if t is torch.flatten:
            a = _Args(n, ["input", "start_dim", "end_dim"], {"start_dim": 0, "end_dim": -1})
            return self.flatten(n, a["input"], int(a["start_dim"]), int(a["end_dim"]), path, doc)
        if t in (torch.reshape,):
            return self.reshape(n, n.args[0], path, doc)
        if t in (torch.transpose, torch.swapaxes, torch.permute):
            return self.transpose(n, n.args[0], self._perm(n, "transpose" if t is not torch.permute else "permute"),
                                  path, doc)
        if t in (torch.chunk, torch.split, torch.tensor_split):
            a = _Args(n, ["input", "arg", "dim"], {"dim": 0})
            return self.split(n, a["input"], int(a["dim"]), path, doc)
        if t is operator.getitem:
            src = self.names.get(n.args[0])
            if isinstance(src, list):
                self.names[n] = src[n.args[1]]
                return
            raise ExportError("'%s': indexing a tensor is not supported" % path)
        if t in (F.max_pool2d, torch.max_pool2d):
            a = _Args(n, ["input", "kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices"],
                      {"stride": None, "padding": 0, "dilation": 1, "ceil_mode": False, "return_indices": False})
            return self.maxpool(n, a["input"], a["kernel_size"], a["stride"], a["padding"], a["dilation"],
                                a["ceil_mode"], a["return_indices"], path, doc)
        if t in (F.avg_pool2d, torch._C._nn.avg_pool2d):
            a = _Args(n, ["input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                          "divisor_override"],
                      {"stride": None, "padding": 0, "ceil_mode": False, "count_include_pad": True,
                       "divisor_override": None})
            return self.avgpool(n, a["input"], a["kernel_size"], a["stride"], a["padding"], a["ceil_mode"],
                                a["count_include_pad"], a["divisor_override"], path, doc)
        if t in (F.adaptive_avg_pool2d, torch._C._nn.adaptive_avg_pool2d):
            return self.adaptive_avgpool(n, n.args[0], path, doc)
        if t is torch.mean:
            return self.mean(n, path, doc)
        if t in (F.interpolate, F.upsample, F.upsample_nearest, F.upsample_bilinear):
            x, rest, kw = n.args[0], n.args[1:], dict(n.kwargs)
            mode = {F.upsample_nearest: "nearest", F.upsample_bilinear: "bilinear"}.get(
                t, kw.get("mode", rest[2] if len(rest) > 2 else "nearest"))
            return self.upsample(n, x, mode, lambda v: t(v, *rest, **kw), path, doc)
        if t in (F.pixel_shuffle, F.pixel_unshuffle, torch.pixel_shuffle, torch.pixel_unshuffle):
            r = n.args[1] if len(n.args) > 1 else next(iter(n.kwargs.values()))
            return self.pixel_shuffle(n, n.args[0], int(r), t in (F.pixel_shuffle, torch.pixel_shuffle), path, doc)
        if t in (q.add_scalar, q.mul_scalar, q.add_scalar_relu, q.mul_scalar_relu):
            x, c = n.args[0], n.args[1]
            return self.unary(n, x, lambda v: t(v, c), path, "quantized::" + str(t).split(".")[-1])
        if t in _UNARY_FUNCTIONS:
            x, rest, kw = n.args[0], n.args[1:], dict(n.kwargs)
            kw.pop("inplace", None)
            fn = {torch.relu_: torch.relu, F.hardtanh_: F.hardtanh}.get(t, t)
            return self.unary(n, x, lambda v: fn(v, *rest, **kw), path, doc)
        raise ExportError("unsupported function %s at '%s'" % (doc, path))

    def _perm(self, n, kind):
        nd = self.values[n.args[0]].dim()
        if kind == "permute":
            p = n.args[1:] if len(n.args) > 2 or isinstance(n.args[1], int) else n.args[1]
            return [int(d) % nd for d in p]
        d0 = n.args[1] if len(n.args) > 1 else n.kwargs["dim0"]
        d1 = n.args[2] if len(n.args) > 2 else n.kwargs["dim1"]
        perm = list(range(nd))
        perm[d0 % nd], perm[d1 % nd] = perm[d1 % nd], perm[d0 % nd]
        return perm

    def mean(self, n, path, doc):
        x = n.args[0]
        xt = self.values[x]
        dims = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim")
        keep = n.args[2] if len(n.args) > 2 else n.kwargs.get("keepdim", False)
        dims = sorted(int(d) % xt.dim() for d in (dims if isinstance(dims, (list, tuple)) else [dims]))
        if xt.dim() != 4 or dims != [2, 3]:
            raise ExportError("'%s': mean over dims %s (only a 4-D mean over (2, 3) is QNNPACK global pooling)"
                              % (path, dims))
        return self.global_avgpool(n, x, path, doc, keepdim=bool(keep))

    def call_method(self, n):
        m = n.target
        path = self.path(n)
        if self.float_compute(n) and self.float_node(n, m, path, m):
            return
        if m in _ALIAS_METHODS:
            return self.alias(n, n.args[0])
        if m == "dequantize":
            return self.dequantize(n, n.args[0], path, "dequantize")
        if m in ("view", "reshape"):
            return self.reshape(n, n.args[0], path, m)
        if m == "flatten":
            a = _Args(n, ["self", "start_dim", "end_dim"], {"start_dim": 0, "end_dim": -1})
            return self.flatten(n, n.args[0], int(a["start_dim"]), int(a["end_dim"]), path, m)
        if m in ("transpose", "permute"):
            return self.transpose(n, n.args[0], self._perm(n, m), path, m)
        if m in ("chunk", "split"):
            a = _Args(n, ["self", "arg", "dim"], {"dim": 0})
            return self.split(n, n.args[0], int(a["dim"]), path, m)
        if m == "mean":
            return self.mean(n, path, m)
        if m in _UNARY_METHODS:
            x, rest, kw = n.args[0], n.args[1:], dict(n.kwargs)
            name = m.rstrip("_")
            return self.unary(n, x, lambda v: getattr(v, name)(*rest, **kw), path, m)
        raise ExportError("unsupported method Tensor.%s at '%s'" % (m, path))


def _has_tensor(v):
    if isinstance(v, torch.Tensor):
        return True
    if isinstance(v, (list, tuple)):
        return any(_has_tensor(x) for x in v)
    return False


def _describe(v):
    if isinstance(v, torch.Tensor):
        return "%s tensor %s" % (v.dtype, list(v.shape))
    return type(v).__name__


def verify(exported, inputs, where="model"):
    """Torch's value of every exported tensor vs run_reference() of the file; returns torch's tensors.

    Quantized and integer tensors must be equal. Float tensors too, unless the file computes in float (a
    quantize_dynamic model: LayerNorm, GELU, Softmax, MatMul, ... run in qwasm with ONNX Runtime's arithmetic, not
    PyTorch's): then each DynamicQuantizeMatMul must reproduce torch's output bit for bit from torch's own input,
    and the largest float difference is kept in exported.float_error."""
    cap = exported.capture(*inputs)
    model = exported.model
    feeds = {i.name: x.numpy() for i, x in zip(model.graph.input, inputs)}
    ref = run_reference(model, feeds)
    floaty = any(nd.op_type in R.FLOAT_COMPUTE for nd in model.graph.node)
    bad, worst = [], 0.0
    for name, t in cap.items():
        r = ref[name]
        if t.is_quantized:
            ok = list(r.shape) == list(t.shape) and np.array_equal(r.astype(np.int64), t.int_repr().numpy())
        elif not t.dtype.is_floating_point:
            ok = np.array_equal(r, t.numpy())
        else:
            tv = t.detach().numpy().astype(F32)
            ok = r.shape == tv.shape and np.array_equal(r.view(np.uint32), tv.view(np.uint32))
            if not ok and floaty and r.shape == tv.shape:
                worst = max(worst, float(np.max(np.abs(r.astype(np.float64) - tv))))
                ok = True
        if not ok:
            bad.append(name)
    if floaty:
        meta = R.metadata(model)
        form = R.PROFILES[meta["qwasm.semantics"]]
        inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
        for nd in model.graph.node:
            if nd.op_type != "DynamicQuantizeMatMul" or nd.input[0] not in cap or nd.output[0] not in cap:
                continue
            x = cap[nd.input[0]].detach().numpy().astype(F32)
            args = [inits[i] if i else None for i in nd.input[1:]]
            y = R.dynamic_matmul(x, args[0], args[1], args[2] if len(args) > 2 and args[2] is not None else 0,
                                 args[3] if len(args) > 3 else None,
                                 "fbgemm" if form["requant"] in ("fbgemm", "x86") else "qnnpack", form["rounding"])
            if not np.array_equal(y.view(np.uint32), cap[nd.output[0]].detach().numpy().astype(F32).view(np.uint32)):
                bad.append(nd.output[0])
    if bad:
        raise ExportError("%s: the exported file does not reproduce PyTorch at tensors %s (please report)"
                          % (where, bad))
    exported.float_error = max(getattr(exported, "float_error", 0.0), worst)
    return cap


def export(model_int8, example_input, path=None, engine=None, allow_inexact_lut=False, check=True):
    """Write the converted quantized model as ONNX for qwasm to `path` (if given); return an Exported.

    model_int8     an eager-mode model after torch.ao.quantization.convert (or an FX convert_fx GraphModule)
    example_input  a float32 tensor (or a tuple of them); its shape becomes the graph input's shape
    engine         the engine the model was converted for: 'qnnpack', 'fbgemm' or 'x86' (default: the current
                   torch.backends.quantized.engine); the file records its semantics profile (semantics_for)
    check          run the file with run_reference() on the example input and two random inputs (randn, and
                   randn * 8 to saturate the input quantizer) and require every tensor to equal torch's
    Raises ExportError for anything that cannot be written with PyTorch's exact semantics.
    """
    engine = engine or torch.backends.quantized.engine
    if engine not in SUPPORTED_ENGINES:
        raise ExportError("engine %r: only %s semantics are implemented" % (engine, ", ".join(SUPPORTED_ENGINES)))
    inputs = tuple(example_input) if isinstance(example_input, (list, tuple)) else (example_input,)
    model_int8.eval()
    prev = torch.backends.quantized.engine
    torch.backends.quantized.engine = engine
    try:
        gm = _trace(model_int8, inputs)
    finally:
        torch.backends.quantized.engine = prev
    rec, traced_out = _record(gm, inputs, engine)
    prev = torch.backends.quantized.engine
    torch.backends.quantized.engine = engine
    try:
        with torch.no_grad():
            direct = model_int8(*inputs)
    finally:
        torch.backends.quantized.engine = prev
    if not _same(direct, traced_out):
        raise ExportError("the fx trace of the model does not reproduce the model's output")

    b = _Builder(gm, rec, inputs, engine, allow_inexact_lut, model_int8)
    b.build()
    graph = helper.make_graph(b.nodes, type(model_int8).__name__, b.graph_inputs, b.graph_outputs,
                              initializer=b.inits, value_info=list(b.vinfo.values()))
    model = helper.make_model(graph, producer_name="qwasm-export", producer_version=__version__,
                              opset_imports=[helper.make_opsetid("", b.opset), helper.make_opsetid(MS_DOMAIN, 1)])
    model.ir_version = 7 if b.opset <= 15 else 8
    model.doc_string = ("%s quantized with PyTorch (%s engine), exported by %s. Integer results follow PyTorch's "
                        "kernels: see metadata qwasm.semantics and qwasm's docs/exporter.md."
                        % (type(model_int8).__name__, engine, EXPORTER))
    props = {"qwasm.semantics": b.semantics, "qwasm.exporter": EXPORTER, "qwasm.torch_version": torch.__version__}
    if b.semantics != "pytorch-qnnpack":  # 1.13's profile has no dispatch-dependent kernels
        props["qwasm.torch_cpu_capability"] = cpu_capability()
    helper.set_model_props(model, props)
    onnx.checker.check_model(model)
    tensor_names = {n.name: nm for n, nm in b.names.items() if isinstance(nm, str)}
    exported = Exported(model, gm, tensor_names, engine)
    if check:
        g = torch.Generator().manual_seed(0)
        verify(exported, inputs, "example input")
        for k, mult in enumerate((1.0, 8.0)):
            verify(exported, tuple(_random_like(x, g, mult) for x in inputs), "random input %d" % k)
    if path:
        d = os.path.dirname(os.path.abspath(path))
        os.makedirs(d, exist_ok=True)
        onnx.save(model, path)
    return exported


def _random_like(x, g, mult):
    """randn * mult for float inputs; for integer (index) inputs, random indices below the example's maximum + 1."""
    if x.dtype.is_floating_point:
        return torch.randn(x.shape, generator=g) * mult
    return torch.randint(0, int(x.max()) + 1, x.shape, generator=g, dtype=x.dtype)


def _same(a, b):
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.is_quantized != b.is_quantized or a.shape != b.shape:
            return False
        if a.is_quantized:
            return (a.q_scale() == b.q_scale() and a.q_zero_point() == b.q_zero_point()
                    and torch.equal(a.int_repr(), b.int_repr()))
        return torch.equal(a, b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def describe(model):
    """One line per node: name, op, inputs -> outputs, attributes."""
    lines = []
    for nd in model.graph.node:
        attrs = ", ".join("%s=%s" % (a.name, helper.get_attribute_value(a)) for a in nd.attribute)
        lines.append("%-28s %s%s(%s) -> %s%s" % (nd.name, nd.domain + "." if nd.domain else "", nd.op_type,
                                                ", ".join(nd.input), ", ".join(nd.output),
                                                "  [" + attrs + "]" if attrs else ""))
    return "\n".join(lines)

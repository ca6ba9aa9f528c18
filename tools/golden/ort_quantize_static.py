"""QDQ models in the form onnxruntime's quantize_static writes them, without onnxruntime.

Written when the project's machines had no onnxruntime Python package: a reimplementation (own code) of the
output format of `onnxruntime.quantization.quantize_static(..., quant_format=QuantFormat.QDQ)` with MinMax
calibration, written from onnxruntime's sources (onnxruntime/python/tools/quantization/: qdq_quantizer.py,
base_quantizer.py, quant_utils.py, calibrate.py, registry.py, operators/*.py; ORT 1.19-1.20 era; see
docs/quantize-static.md for what is reproduced and what is not). The float model is evaluated with torch
(onnx 1.12 has no onnx.reference) for the calibration ranges.

    /usr/bin/python3 tools/golden/ort_quantize_static.py    # -> build/ort_static_reimpl/*.onnx + .json

The fixtures tests/fixtures/ort_static now come from the real tool (tools/golden/ort_quantize_real.py, which
takes the float models, calibration sets and option sets from here and prints how the real files differ).

Library use: quantize_static(model, calibration_feeds, per_channel=False, reduce_range=False,
extra_options={...}) -> onnx.ModelProto. Supported extra_options: ActivationSymmetric, WeightSymmetric,
AddQDQPairToWeight, DedicatedQDQPair, QDQKeepRemovableActivations, OpTypesToExcludeOutputQuantization.
"""
import json
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

# Which op types quantize_static wraps (union of QLinearOpsRegistry and QDQRegistry keys, registry.py),
# and how the QDQ quantizer treats each (QDQRegistry; anything else goes to QDQOperatorBase).
QLINEAR_OPS = ['ArgMax', 'Conv', 'Gemm', 'MatMul', 'Add', 'Mul', 'Relu', 'Clip', 'LeakyRelu', 'Sigmoid', 'MaxPool',
               'GlobalAveragePool', 'Split', 'Pad', 'Reshape', 'Squeeze', 'Unsqueeze', 'Resize', 'AveragePool',
               'Concat', 'Softmax', 'Where', 'Gather', 'Transpose', 'EmbedLayerNormalization']
QDQ_KIND = {
    'Conv': 'conv', 'ConvTranspose': 'conv', 'Gemm': 'gemm', 'MatMul': 'matmul', 'Clip': 'removable', 'Relu': 'removable',
    'Reshape': 'direct8', 'Transpose': 'direct8', 'Squeeze': 'direct8', 'Unsqueeze': 'direct8', 'AveragePool': 'direct8',
    'Slice': 'direct8', 'TopK': 'direct8', 'MaxPool': 'maxpool', 'Resize': 'maxpool',
}
DEFAULT_OPS = sorted(set(QLINEAR_OPS) | set(QDQ_KIND) | {'Split', 'Pad', 'Gather', 'GatherElements', 'Where',
                                                          'InstanceNormalization', 'LayerNormalization',
                                                          'BatchNormalization', 'CumSum'})

# quant_utils.py ranges
RANGE = {TensorProto.UINT8: (0, 255), TensorProto.INT8: (-128, 127), TensorProto.UINT16: (0, 65535), TensorProto.INT16: (-32768, 32767)}
SYMMETRIC_RANGE = {TensorProto.UINT8: (0, 254), TensorProto.INT8: (-127, 127), TensorProto.UINT16: (0, 65534), TensorProto.INT16: (-32767, 32767)}
REDUCED_RANGE = {TensorProto.UINT8: (0, 127), TensorProto.INT8: (-64, 64), TensorProto.UINT16: (0, 32767), TensorProto.INT16: (-16384, 16384)}
NP = {TensorProto.UINT8: np.uint8, TensorProto.INT8: np.int8, TensorProto.UINT16: np.uint16, TensorProto.INT16: np.int16}


def qmin_qmax(qtype, reduce_range=False, symmetric=False):
    if reduce_range:
        lo, hi = REDUCED_RANGE[qtype]
    elif symmetric:
        lo, hi = SYMMETRIC_RANGE[qtype]
    else:
        lo, hi = RANGE[qtype]
    return np.array(lo, dtype=NP[qtype]), np.array(hi, dtype=NP[qtype])


def scale_zero_point(rmin, rmax, qmin, qmax, symmetric):
    """compute_scale_zp: float32 range widened to include 0; scale computed in float64, stored as float32;
    zero point round-half-even (numpy.round) of qmin - rmin / scale (float64), or (qmin + qmax) / 2 if symmetric."""
    rmin = np.minimum(np.float32(rmin), np.float32(0))
    rmax = np.maximum(np.float32(rmax), np.float32(0))
    if symmetric:
        absmax = np.maximum(np.abs(rmin), np.abs(rmax))
        rmin, rmax = -absmax, absmax
    dr = np.float64(np.float32(rmax - rmin))  # the subtraction happens in float32
    scale = dr / (np.float64(qmax) - np.float64(qmin))
    if scale < np.finfo(np.float32).tiny:
        return np.array(0, dtype=qmin.dtype), np.float32(1.0)
    if symmetric:
        zp = np.round((np.float64(qmin) + np.float64(qmax)) / 2.0)
    else:
        zp = np.round(np.float64(qmin) - np.float64(rmin) / scale)
    return np.array(zp, dtype=qmin.dtype), np.float32(scale)


def quantize_array(qtype, arr, scale, zp):
    """quantize_nparray: float32 division, numpy round (half to even), + zero point, clip to the full type range."""
    lo, hi = RANGE[qtype]
    v = (arr.astype(np.float32) / np.float32(scale)).round() + np.float32(zp)
    return np.clip(v, lo, hi).astype(NP[qtype])


def quantize_weight_data(data, qtype, symmetric, reduce_range):
    """quantize_data on a flat float32 array: (zero point, scale, quantized)."""
    data = data.astype(np.float32).ravel()
    qmin, qmax = qmin_qmax(qtype, reduce_range, symmetric)
    rmin, rmax = (data.min(), data.max()) if data.size else (np.float32(0), np.float32(0))
    zp, scale = scale_zero_point(rmin, rmax, qmin, qmax, symmetric)
    return zp, scale, quantize_array(qtype, data, scale, zp)


# ---------------------------------------------------------------------------------------------------------
# Float evaluation with torch (for calibration and for the float reference outputs)

def _attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _pads4(a):
    p = list(a.get('pads', [0, 0, 0, 0]))
    return p


def run_float(model, feeds):
    """Every value of the graph (name -> float32/int64 numpy array) for one set of inputs."""
    env = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    env.update({k: np.asarray(v) for k, v in feeds.items()})
    t = lambda name: torch.from_numpy(np.array(env[name]))
    for node in model.graph.node:
        a = _attrs(node)
        op = node.op_type
        ins = [t(n) if n else None for n in node.input]
        if op == 'Conv':
            p = _pads4(a)
            assert p[0] == p[2] and p[1] == p[3], 'asymmetric pads'
            y = F.conv2d(ins[0], ins[1], ins[2] if len(ins) > 2 else None, stride=a.get('strides', [1, 1]),
                         padding=(p[0], p[1]), dilation=a.get('dilations', [1, 1]), groups=a.get('group', 1))
        elif op == 'Relu':
            y = torch.relu(ins[0])
        elif op == 'Clip':
            lo = ins[1].item() if len(ins) > 1 and ins[1] is not None else a.get('min', -np.inf)
            hi = ins[2].item() if len(ins) > 2 and ins[2] is not None else a.get('max', np.inf)
            y = torch.clamp(ins[0], lo, hi)
        elif op in ('MaxPool', 'AveragePool'):
            p = _pads4(a)
            assert p[0] == p[2] and p[1] == p[3]
            k, s = a['kernel_shape'], a.get('strides', [1, 1])
            if op == 'MaxPool':
                y = F.max_pool2d(ins[0], k, s, (p[0], p[1]), ceil_mode=bool(a.get('ceil_mode', 0)))
            else:
                y = F.avg_pool2d(ins[0], k, s, (p[0], p[1]), ceil_mode=bool(a.get('ceil_mode', 0)),
                                 count_include_pad=bool(a.get('count_include_pad', 0)))
        elif op == 'GlobalAveragePool':
            y = ins[0].mean(dim=(2, 3), keepdim=True)
        elif op == 'Add':
            y = ins[0] + ins[1]
        elif op == 'Mul':
            y = ins[0] * ins[1]
        elif op == 'Concat':
            y = torch.cat(ins, dim=a['axis'])
        elif op == 'Reshape':
            shape = [int(v) for v in env[node.input[1]]]
            shape = [ins[0].shape[i] if v == 0 else v for i, v in enumerate(shape)]
            y = ins[0].reshape(shape)
        elif op == 'Flatten':
            ax = a.get('axis', 1)
            y = ins[0].reshape(int(np.prod(ins[0].shape[:ax])), -1)
        elif op == 'Transpose':
            y = ins[0].permute(*a['perm'])
        elif op == 'Gemm':
            A = ins[0].T if a.get('transA', 0) else ins[0]
            B = ins[1].T if a.get('transB', 0) else ins[1]
            y = a.get('alpha', 1.0) * (A @ B)
            if len(ins) > 2:
                y = y + a.get('beta', 1.0) * ins[2]
        elif op == 'MatMul':
            y = ins[0] @ ins[1]
        elif op == 'Sigmoid':
            y = torch.sigmoid(ins[0])
        elif op == 'Softmax':
            y = torch.softmax(ins[0], dim=a.get('axis', -1))
        elif op == 'Identity':
            y = ins[0]
        else:
            raise NotImplementedError(op)
        env[node.output[0]] = y.numpy()
    return env


def calibrate(model, calibration_feeds):
    """MinMaxCalibrater (calibrate.py), symmetric=False, no moving average: per float activation,
    the minimum of the per-batch minima and the maximum of the per-batch maxima (float32)."""
    inits = {i.name for i in model.graph.initializer}
    ranges = {}
    for feeds in calibration_feeds:
        env = run_float(model, feeds)
        for name, v in env.items():
            if name in inits or v.dtype != np.float32:
                continue
            lo, hi = np.float32(v.min()), np.float32(v.max())
            if name in ranges:
                ranges[name] = (min(ranges[name][0], lo), max(ranges[name][1], hi))
            else:
                ranges[name] = (lo, hi)
    return ranges


# ---------------------------------------------------------------------------------------------------------
# The QDQ quantizer

class QDQStatic:
    def __init__(self, model, ranges, per_channel, reduce_range, activation_type, weight_type, op_types, extra):
        self.model = model
        self.graph = model.graph
        self.per_channel = per_channel
        self.reduce_range = reduce_range
        self.act_type = activation_type
        self.w_type = weight_type
        self.op_types = set(op_types)
        self.extra = extra
        self.act_symmetric = extra.get('ActivationSymmetric', False)
        self.w_symmetric = extra.get('WeightSymmetric', weight_type == TensorProto.INT8)
        self.add_qdq_to_weight = extra.get('AddQDQPairToWeight', False)
        self.dedicated = extra.get('DedicatedQDQPair', False)
        self.keep_removable = extra.get('QDQKeepRemovableActivations', False)
        self.no_output_ops = set(extra.get('OpTypesToExcludeOutputQuantization', []))
        self.opset = next(o.version for o in model.opset_import if o.domain in ('', 'ai.onnx'))
        # 16-bit Q/DQ need opset 21; before that quantize_static moves Q/DQ to com.microsoft
        wide = (TensorProto.UINT16, TensorProto.INT16)
        self.qdq_domain = 'com.microsoft' if extra.get('UseQDQContribOps', False) or (
            self.opset < 21 and (activation_type in wide or weight_type in wide)) else None
        self.inits = {i.name: i for i in self.graph.initializer}
        self.value_types = {}
        inferred = onnx.shape_inference.infer_shapes(model)
        for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
            self.value_types[vi.name] = vi.type.tensor_type.elem_type
        self.ranges = dict(ranges)
        self.adjust_ranges()
        self.qparams = {name: self.activation_qparams(lo, hi) for name, (lo, hi) in self.ranges.items()}
        self.to_quantize = {}  # name -> dict(kind, axis, provider)
        self.biases = {}  # name -> (node name, input, weight, beta)
        self.receivers = {}
        self.quantized = {}  # name -> (dq output / q name, scale name, zp name)
        self.remove = []
        self.new_nodes = []

    # base_quantizer.adjust_tensor_ranges / calc_quant_params
    def adjust_ranges(self):
        for node in self.graph.node:
            if node.op_type in ('Clip', 'Relu'):
                if self.act_symmetric or node.op_type not in self.op_types:
                    continue
                if len(self.consumers(node.input[0])) != 1:
                    continue
                if node.input[0] in self.ranges and node.output[0] in self.ranges:
                    self.ranges[node.input[0]] = self.ranges[node.output[0]]
            elif node.op_type == 'Softmax':
                self.ranges[node.output[0]] = (np.float32(0.0), np.float32(1.0))

    def activation_qparams(self, lo, hi):
        qmin, qmax = qmin_qmax(self.act_type, False, self.act_symmetric)
        return scale_zero_point(lo, hi, qmin, qmax, self.act_symmetric)

    def consumers(self, name):
        return [n for n in self.graph.node if name in n.input]

    def is_graph_output(self, name):
        return any(o.name == name for o in self.graph.output)

    def is_float(self, name):
        if name in self.inits:
            return self.inits[name].data_type == TensorProto.FLOAT
        if name in self.value_types:
            return self.value_types[name] == TensorProto.FLOAT
        return False

    # marking (qdq_quantizer.__quantize_tensor and friends)
    def mark(self, name, kind='activation', provider=None, axis=None):
        if not name or not self.is_float(name):
            return
        if provider is not None:
            self.to_quantize[name] = dict(kind=kind, provider=provider, axis=None)
        elif name not in self.to_quantize:
            self.to_quantize[name] = dict(kind=kind, provider=None, axis=axis)

    def mark_weight(self, name, axis=None):
        if axis is None:
            self.mark(name, 'weight')
        elif name in self.inits and self.inits[name].data_type == TensorProto.FLOAT:
            self.to_quantize[name] = dict(kind='weight', provider=None, axis=axis)

    def is_marked(self, name):
        return name in self.to_quantize or name in self.biases

    def weight_axis(self, name, default_axis):
        if not self.per_channel or name not in self.inits:
            return None
        rank = len(self.inits[name].dims)
        axis = default_axis + rank if default_axis < 0 else default_axis
        return axis if 0 <= axis < rank else None

    def quantize_node(self, node):
        op = node.op_type
        kind = QDQ_KIND.get(op, 'base')
        out_ok = op not in self.no_output_ops
        if kind == 'conv':
            self.mark(node.input[0])
            if out_ok:
                self.mark(node.output[0])
            self.mark_weight(node.input[1], self.weight_axis(node.input[1], 0 if op == 'Conv' else 1))
            if len(node.input) > 2 and node.input[2]:
                self.mark_bias(node.name, node.input[2], node.input[0], node.input[1], 1.0)
        elif kind == 'gemm':
            a = _attrs(node)
            self.mark(node.input[0])
            if out_ok:
                self.mark(node.output[0])
            self.mark_weight(node.input[1], self.weight_axis(node.input[1], 0 if a.get('transB', 0) else 1))
            if len(node.input) > 2 and node.input[2] in self.inits:
                self.mark_bias(node.name, node.input[2], node.input[0], node.input[1], float(a.get('beta', 1.0)))
                kept = [x for x in node.attribute if x.name != 'beta']
                del node.attribute[:]
                node.attribute.extend(kept + [helper.make_attribute('beta', 1.0)])
        elif kind == 'matmul':
            names = list(node.input) + (list(node.output) if out_ok else [])
            for name in names:
                if name in self.inits:
                    self.mark_weight(name, self.weight_axis(name, 1))
                else:
                    self.mark(name)
        elif kind == 'removable':
            if not self.is_marked(node.input[0]):
                return
            if not self.act_symmetric and not self.keep_removable and self.replace_upstream(node.input[0], node.output[0]):
                self.remove.append(node)
            else:
                self.mark(node.input[0])
            if out_ok:
                self.mark(node.output[0])
        elif kind in ('direct8', 'maxpool'):
            if kind == 'maxpool' and self.opset < (12 if op == 'MaxPool' else 11):
                return
            if self.is_marked(node.input[0]) and out_ok:
                self.mark(node.output[0], provider=(node.input[0], node.name))
        else:
            for name in list(node.input) + (list(node.output) if out_ok else []):
                self.mark(name)

    def mark_bias(self, node_name, bias, inp, weight, beta):
        if bias in self.inits and self.inits[bias].data_type == TensorProto.FLOAT and bias not in self.biases:
            self.biases[bias] = (node_name, inp, weight, beta)

    def replace_upstream(self, upstream, output):
        # qdq_quantizer.try_replacing_upstream_output
        if (output in self.qparams and len(self.consumers(upstream)) == 1 and not self.is_graph_output(upstream)
                and not any(i.name == upstream for i in self.graph.input)):
            for n in self.graph.node:
                for k, o in enumerate(n.output):
                    if o == upstream:
                        n.output[k] = output
            self.to_quantize.pop(upstream, None)
            return True
        return False

    # graph edits
    def add_init(self, tensor):
        self.graph.initializer.append(tensor)
        self.inits[tensor.name] = tensor

    def replace_input_all(self, old, new):
        for n in list(self.graph.node) + self.new_nodes:
            for k, i in enumerate(n.input):
                if i == old:
                    n.input[k] = new

    def replace_output_all(self, old, new):
        for n in list(self.graph.node) + self.new_nodes:
            for k, o in enumerate(n.output):
                if o == old:
                    n.output[k] = new

    def q_dq(self, q_in, q_out, q_name, dq_in, dq_out, dq_name, scale, zp, axis=None):
        kw = {} if axis is None else {'axis': axis}
        kw['domain'] = self.qdq_domain
        self.new_nodes.append(helper.make_node('QuantizeLinear', [q_in, scale, zp], [q_out], q_name, **kw))
        self.new_nodes.append(helper.make_node('DequantizeLinear', [dq_in, scale, zp], [dq_out], dq_name, **kw))

    def quantize_initializer(self, name, kind, axis):
        init = self.inits[name]
        data = numpy_helper.to_array(init).astype(np.float32)
        qtype = self.w_type if kind == 'weight' else self.act_type
        if axis is not None:
            if qtype == TensorProto.UINT8:
                qtype = TensorProto.INT8  # forced, qdq_quantizer._add_qdq_pair_for_initializer
            symmetric = self.w_symmetric or qtype == TensorProto.INT8
            zps, scales, parts = [], [], []
            for c in range(data.shape[axis]):
                zp, scale, q = quantize_weight_data(data.take(c, axis), qtype, symmetric, self.reduce_range)
                shape = list(data.shape)
                shape[axis] = 1
                zps.append(zp)
                scales.append(scale)
                parts.append(q.reshape(shape))
            q = np.concatenate(parts, axis)
            dims = [data.shape[axis]]
            scale_t = helper.make_tensor(name + '_scale', TensorProto.FLOAT, dims, [float(s) for s in scales])
            zp_t = helper.make_tensor(name + '_zero_point', qtype, dims, [int(z) for z in zps])
        else:
            # per tensor: reduce_range is not applied (quantize_initializer passes reduce_range=False)
            zp, scale, q = quantize_weight_data(data, qtype, self.w_symmetric, False)
            scale_t = helper.make_tensor(name + '_scale', TensorProto.FLOAT, [], [float(scale)])
            zp_t = helper.make_tensor(name + '_zero_point', qtype, [], [int(zp)])
        self.add_init(scale_t)
        self.add_init(zp_t)
        if not self.add_qdq_to_weight:
            self.add_init(numpy_helper.from_array(q.reshape(data.shape).astype(NP[qtype]), name + '_quantized'))
        return name + '_quantized', scale_t.name, zp_t.name

    def add_qdq_initializer(self, name, kind, axis):
        qname, scale, zp = self.quantize_initializer(name, kind, axis)
        dq_out = name + '_DequantizeLinear_Output'
        self.replace_input_all(name, dq_out)
        if self.add_qdq_to_weight:
            self.q_dq(name, name + '_QuantizeLinear_Output', name + '_QuantizeLinear', name + '_QuantizeLinear_Output',
                      dq_out, name + '_DequantizeLinear', scale, zp, axis)
        else:
            kw = {'domain': self.qdq_domain} if axis is None else {'axis': axis, 'domain': self.qdq_domain}
            self.new_nodes.append(helper.make_node('DequantizeLinear', [qname, scale, zp], [dq_out], name + '_DequantizeLinear', **kw))
        self.quantized[name] = (qname, scale, zp)

    def add_qdq_activation(self, name, scale, zp):
        recv = self.receivers.get(name, [])
        if self.dedicated and len(recv) > 1:
            for i, node in enumerate(recv):
                post = f'_{i + 1}'
                q_out = name + '_QuantizeLinear_Output' + post
                dq_out = name + '_DequantizeLinear_Output' + post
                self.q_dq(name, q_out, name + '_QuantizeLinear' + post, q_out, dq_out, name + '_DequantizeLinear' + post, scale, zp)
                for k, inp in enumerate(node.input):
                    if inp == name:
                        node.input[k] = dq_out
            self.quantized[name] = (name + '_DequantizeLinear_Output_1', scale, zp)
            return
        q_in, dq_out = name, name + '_DequantizeLinear_Output'
        if self.is_graph_output(name):
            q_in, dq_out = name + '_QuantizeLinear_Input', name
            self.replace_output_all(name, q_in)
        else:
            self.replace_input_all(name, dq_out)
        q_out = name + '_QuantizeLinear_Output'
        self.q_dq(q_in, q_out, name + '_QuantizeLinear', q_out, dq_out, name + '_DequantizeLinear', scale, zp)
        self.quantized[name] = (dq_out, scale, zp)

    def activation_initializers(self, name):
        zp, scale = self.qparams[name]
        self.add_init(helper.make_tensor(name + '_zero_point', self.act_type, [], [int(zp)]))
        self.add_init(helper.make_tensor(name + '_scale', TensorProto.FLOAT, [], [float(scale)]))
        return name + '_scale', name + '_zero_point'

    def quantize_bias(self, bias, info):
        _, inp, weight, beta = info
        w_scale = numpy_helper.to_array(self.inits[self.quantized[weight][1]])
        x_scale = numpy_helper.to_array(self.inits[self.quantized[inp][1]])
        b_scale = x_scale * w_scale * beta  # float32 * float32 (* python float keeps float32)
        b_scale = np.asarray(b_scale, dtype=np.float32)
        data = numpy_helper.to_array(self.inits[bias]).astype(np.float32)
        q = (data / b_scale).round().astype(np.int32)
        qname = bias + '_quantized'
        self.add_init(numpy_helper.from_array(q.reshape(data.shape), qname))
        self.add_init(numpy_helper.from_array(b_scale.reshape(-1), qname + '_scale'))
        if self.per_channel:
            self.add_init(numpy_helper.from_array(np.zeros(b_scale.shape, dtype=np.int32).reshape(-1), qname + '_zero_point'))
        else:
            self.add_init(helper.make_tensor(qname + '_zero_point', TensorProto.INT32, [], [0]))
        self.graph.initializer.remove(self.inits.pop(bias))
        kw = {'axis': 0, 'domain': self.qdq_domain} if b_scale.size > 1 else {'domain': self.qdq_domain}
        self.new_nodes.append(helper.make_node('DequantizeLinear', [qname, qname + '_scale', qname + '_zero_point'], [bias],
                                               bias + '_DequantizeLinear', **kw))
        self.quantized[bias] = (qname, qname + '_scale', qname + '_zero_point')

    def run(self):
        for node in list(self.graph.node):
            if node.op_type in self.op_types:
                self.quantize_node(node)
                for name in node.input:
                    self.receivers.setdefault(name, []).append(node)
        # _quantize_normal_tensors
        for name, info in list(self.to_quantize.items()):
            if info['provider'] is not None or name in self.quantized:
                continue
            if name in self.inits:
                self.add_qdq_initializer(name, info['kind'], info['axis'])
            else:
                if name not in self.qparams:
                    raise ValueError(f'no calibration range for {name}')
                scale, zp = self.activation_initializers(name)
                self.add_qdq_activation(name, scale, zp)
            del self.to_quantize[name]
        # _quantize_sharing_param_tensors
        while self.to_quantize:
            progressed = False
            for name, info in list(self.to_quantize.items()):
                src = info['provider'][0]
                if src in self.quantized:
                    del self.to_quantize[name]
                    _, scale, zp = self.quantized[src]
                    self.add_qdq_activation(name, scale, zp)
                    progressed = True
            if not progressed:
                raise ValueError(f'unresolved shared qparams: {list(self.to_quantize)}')
        for bias, info in self.biases.items():
            if bias not in self.quantized:
                self.quantize_bias(bias, info)
        for node in self.remove:
            self.graph.node.remove(node)
        self.graph.node.extend(self.new_nodes)
        if not self.add_qdq_to_weight:  # clean_initializers: drop initializers nobody reads
            used = {i for n in self.graph.node for i in n.input} | {o.name for o in self.graph.output}
            keep = [i for i in self.graph.initializer if i.name in used]
            del self.graph.initializer[:]
            self.graph.initializer.extend(keep)
        topological_sort(self.graph)
        if self.qdq_domain and not any(o.domain == self.qdq_domain for o in self.model.opset_import):
            self.model.opset_import.append(helper.make_opsetid(self.qdq_domain, 1))
        self.model.producer_name = 'onnx.quantize'
        self.model.producer_version = '0.1.0'
        return self.model


def topological_sort(graph):
    """Kahn's algorithm in node order (ONNXModel.save_model_to_file sorts the graph before saving)."""
    ready = {i.name for i in graph.input} | {i.name for i in graph.initializer} | {''}
    nodes = list(graph.node)
    out = []
    while nodes:
        for k, n in enumerate(nodes):
            if all(i in ready for i in n.input):
                out.append(n)
                ready.update(n.output)
                del nodes[k]
                break
        else:
            raise ValueError('graph has a cycle or a missing input')
    del graph.node[:]
    graph.node.extend(out)


def quantize_static(model, calibration_feeds, per_channel=False, reduce_range=False,
                    activation_type=TensorProto.UINT8, weight_type=TensorProto.INT8, op_types_to_quantize=None,
                    extra_options=None):
    model = onnx.ModelProto.FromString(model.SerializeToString())
    ranges = calibrate(model, calibration_feeds)
    q = QDQStatic(model, ranges, per_channel, reduce_range, activation_type, weight_type,
                  op_types_to_quantize or DEFAULT_OPS, extra_options or {})
    return q.run()


# ---------------------------------------------------------------------------------------------------------
# Fixtures

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
OUT = os.path.join(ROOT, 'tests', 'fixtures', 'ort_static')


def digits_float():
    m = onnx.load(os.path.join(ROOT, 'models', 'digits-float.onnx'))
    # only the logits: drop the debugging outputs and their Identity nodes
    keep = [n for n in m.graph.node if n.op_type != 'Identity']
    del m.graph.node[:]
    m.graph.node.extend(keep)
    outs = [o for o in m.graph.output if o.name == 'output']
    del m.graph.output[:]
    m.graph.output.extend(outs)
    del m.graph.value_info[:]
    return m


def digits_inputs():
    d = json.load(open(os.path.join(ROOT, 'models', 'digits.json')))
    return [np.asarray(t['image'], dtype=np.float32).reshape(1, 1, 8, 8) for t in d['test_images']]


def f32(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def synthetic_cnn():
    """Conv+Relu, depthwise Conv+Clip(0,6), MaxPool, AveragePool, Add, Sigmoid, Mul, Concat,
    GlobalAveragePool, Flatten, Gemm, Softmax."""
    rng = np.random.default_rng(7)
    inits = [
        numpy_helper.from_array(f32(rng, 8, 3, 3, 3, scale=0.3), 'w1'), numpy_helper.from_array(f32(rng, 8, scale=0.1), 'b1'),
        numpy_helper.from_array(f32(rng, 8, 1, 3, 3, scale=0.4), 'w2'), numpy_helper.from_array(f32(rng, 8, scale=0.1), 'b2'),
        numpy_helper.from_array(np.array(0, np.float32), 'clip_lo'), numpy_helper.from_array(np.array(6, np.float32), 'clip_hi'),
        numpy_helper.from_array(f32(rng, 10, 16, scale=0.3), 'fc_w'), numpy_helper.from_array(f32(rng, 10, scale=0.1), 'fc_b'),
    ]
    N = helper.make_node
    nodes = [
        N('Conv', ['x', 'w1', 'b1'], ['c1'], 'conv1', kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        N('Relu', ['c1'], ['r1'], 'relu1'),
        N('Conv', ['r1', 'w2', 'b2'], ['c2'], 'conv2', kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=8),
        N('Clip', ['c2', 'clip_lo', 'clip_hi'], ['r2'], 'clip2'),
        N('MaxPool', ['r2'], ['p'], 'pool', kernel_shape=[2, 2], strides=[2, 2]),
        N('AveragePool', ['p'], ['a'], 'avg', kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]),
        N('Add', ['p', 'a'], ['s'], 'add'),
        N('Sigmoid', ['s'], ['g'], 'sigmoid'),
        N('Mul', ['s', 'g'], ['m'], 'mul'),
        N('Concat', ['m', 'p'], ['cat'], 'concat', axis=1),
        N('GlobalAveragePool', ['cat'], ['gap'], 'gap'),
        N('Flatten', ['gap'], ['flat'], 'flatten', axis=1),
        N('Gemm', ['flat', 'fc_w', 'fc_b'], ['logits'], 'fc', transB=1),
        N('Softmax', ['logits'], ['probs'], 'softmax', axis=1),
    ]
    g = helper.make_graph(nodes, 'cnn', [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info('probs', TensorProto.FLOAT, [1, 10])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)], ir_version=7)


def synthetic_mlp():
    """Transpose, MatMul with a constant matrix, Add of a constant, Reshape, Mul by a constant, Gemm."""
    rng = np.random.default_rng(11)
    inits = [
        numpy_helper.from_array(f32(rng, 4, 6, scale=0.5), 'mm_w'), numpy_helper.from_array(f32(rng, 6, scale=0.2), 'mm_b'),
        numpy_helper.from_array(np.array([1, 30], np.int64), 'shape'),
        numpy_helper.from_array(np.array(0.75, np.float32), 'gain'),
        numpy_helper.from_array(f32(rng, 7, 30, scale=0.2), 'fc_w'), numpy_helper.from_array(f32(rng, 7, scale=0.1), 'fc_b'),
    ]
    N = helper.make_node
    nodes = [
        N('Transpose', ['x'], ['xt'], 'transpose', perm=[0, 2, 1]),
        N('MatMul', ['xt', 'mm_w'], ['mm'], 'matmul'),
        N('Add', ['mm', 'mm_b'], ['h'], 'add_bias'),
        N('Reshape', ['h', 'shape'], ['flat'], 'reshape'),
        N('Mul', ['flat', 'gain'], ['scaled'], 'gain'),
        N('Gemm', ['scaled', 'fc_w', 'fc_b'], ['y'], 'fc', transB=1),
    ]
    g = helper.make_graph(nodes, 'mlp', [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 4, 5])],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 7])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)], ir_version=7)


VARIANTS = {
    'per_tensor': dict(),
    'per_channel': dict(per_channel=True),
    'per_channel_reduce_range': dict(per_channel=True, reduce_range=True),
    'act_symmetric': dict(extra_options={'ActivationSymmetric': True}),
    'qdq_weights': dict(extra_options={'AddQDQPairToWeight': True}),
    'dedicated': dict(extra_options={'DedicatedQDQPair': True}),
    'act_int8': dict(activation_type=TensorProto.INT8),
    'uint16': dict(activation_type=TensorProto.UINT16),  # 16-bit activations: Q/DQ in com.microsoft
}

FIXTURES = [
    # (name, float model, calibration inputs, test inputs, variants)
    ('digits', digits_float, lambda: digits_inputs()[:10], lambda: digits_inputs()[10:], ['per_tensor', 'per_channel']),
    ('cnn', synthetic_cnn, lambda: [f32(np.random.default_rng(100 + i), 1, 3, 8, 8) for i in range(8)],
     lambda: [f32(np.random.default_rng(200 + i), 1, 3, 8, 8, scale=1.2) for i in range(4)],
     ['per_tensor', 'per_channel', 'per_channel_reduce_range', 'act_symmetric', 'act_int8', 'qdq_weights', 'dedicated']),
    ('mlp', synthetic_mlp, lambda: [f32(np.random.default_rng(300 + i), 1, 4, 5) for i in range(8)],
     lambda: [f32(np.random.default_rng(400 + i), 1, 4, 5, scale=1.2) for i in range(4)],
     ['per_tensor', 'per_channel', 'act_symmetric', 'act_int8', 'qdq_weights', 'uint16']),
]


PROBES = {('cnn', 'per_channel')}


REIMPL_OUT = os.path.join(ROOT, 'build', 'ort_static_reimpl')


def main():
    OUT = REIMPL_OUT
    os.makedirs(OUT, exist_ok=True)
    only = set(sys.argv[1:])
    for name, build, calib, tests, variants in FIXTURES:
        if only and name not in only:
            continue
        fm = build()
        onnx.checker.check_model(fm)
        cal = calib()
        inp = fm.graph.input[0].name
        out = fm.graph.output[0].name
        cases = tests()
        doc = {'generator': 'tools/golden/ort_quantize_static.py', 'onnx': onnx.__version__, 'model': name,
               'input': inp, 'input_dims': list(cases[0].shape), 'output': out, 'variants': {}, 'cases': []}
        for x in cases:
            y = run_float(fm, {inp: x})[out]
            doc['cases'].append({'x': [float(v) for v in x.ravel()], 'float_y': [float(v) for v in y.ravel()]})
        for v in variants:
            qm = quantize_static(fm, [{inp: c} for c in cal], **VARIANTS[v])
            onnx.checker.check_model(qm)
            path = os.path.join(OUT, f'{name}-{v}.onnx')
            onnx.save(qm, path)
            doc['variants'][v] = {'options': {k: (TensorProto.DataType.Name(val) if k.endswith('_type') else val) for k, val in VARIANTS[v].items()},
                                  'ops': ' '.join(n.op_type for n in qm.graph.node)}
            print(f'{path}: {os.path.getsize(path)} bytes, {len(qm.graph.node)} nodes')
            if (name, v) in PROBES:
                # the same file with every QuantizeLinear output also a graph output: the quantized
                # intermediates, to compare layer by layer
                for n in qm.graph.node:
                    if n.op_type == 'QuantizeLinear':
                        qm.graph.output.append(helper.make_tensor_value_info(n.output[0], TensorProto.UINT8, None))
                onnx.save(qm, os.path.join(OUT, f'{name}-{v}-probe.onnx'))
        with open(os.path.join(OUT, f'{name}.json'), 'w') as f:
            json.dump(doc, f, indent=None, separators=(',', ':'))
            f.write('\n')


if __name__ == '__main__':
    main()

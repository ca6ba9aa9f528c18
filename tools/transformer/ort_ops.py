"""Single-operator ONNX models for the float kernels a transformer needs, with inputs chosen to reach every
branch of onnxruntime's arithmetic, and onnxruntime (Python) outputs.

    build/venv/bin/python tools/transformer/ort_ops.py     # -> tests/fixtures/ort_ops/cases.json
    node tools/transformer/ort_ops_web.mjs                 # adds onnxruntime-web's outputs and writes the C fixture

Each case is one node (ONNX or com.microsoft domain) with its graph inputs (weights of the dynamic-int8 matmuls are
initializers, as in a quantized model, so onnxruntime packs them once), the model bytes, the inputs and
onnxruntime's CPU outputs; tensors are {dtype, dims, data: base64 of the little-endian bytes}. onnxruntime's
Python wheel runs MLAS's AVX2 / FMA3 kernels, onnxruntime-web its portable / wasm SIMD128 ones: the two differ in
the last bits for exp, erf, tanh, softmax and the float GEMM, which is why the reference for qwasm is
onnxruntime-web and these Python outputs are kept for comparison (tests/js/ort-ops.test.js reports both).

Inputs are deterministic (numpy default_rng with fixed seeds); rerunning rewrites the same file.
"""
import base64
import json
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(REPO, "tests", "fixtures", "ort_ops", "cases.json")

DTYPE_NAME = {np.float32: "float32", np.int64: "int64", np.int32: "int32", np.bool_: "bool", np.uint8: "uint8",
              np.int8: "int8"}
f32 = np.float32


def encode(a):
    a = np.ascontiguousarray(a)
    t = next(k for k in DTYPE_NAME if np.dtype(k) == a.dtype)
    raw = a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
    return {"dtype": DTYPE_NAME[t], "dims": list(a.shape), "data": base64.b64encode(raw).decode()}


def model_bytes(op, inputs, outputs, attrs, domain, opset, initializers):
    """inputs: [(name, array or None for an absent optional input)]; graph inputs are those not in initializers."""
    init_names = {n for n, _ in initializers}
    graph_inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape))
                    for n, a in inputs if a is not None and n not in init_names]
    graph_outputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(np.dtype(t)), None)
                     for n, t in outputs]
    node = helper.make_node(op, [n if a is not None else "" for n, a in inputs], [n for n, _ in outputs],
                            domain=domain or "", **attrs)
    graph = helper.make_graph([node], op.lower(), graph_inputs, graph_outputs,
                              [numpy_helper.from_array(a, n) for n, a in initializers])
    imports = [helper.make_opsetid("", opset if not domain else 17)]
    if domain:
        imports.append(helper.make_opsetid(domain, 1))
    model = helper.make_model(graph, opset_imports=imports, producer_name="tools/transformer/ort_ops.py")
    model.ir_version = 8
    return model.SerializeToString()


def run_ort(data, feeds):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL  # onnxruntime-web's default
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    session = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


CASES = []


def case(name, op, inputs, outputs, attrs=None, domain=None, opset=17, initializers=(), params=None):
    """outputs: [(name, numpy type)]. initializers: names among inputs that become initializers."""
    inits = [(n, a) for n, a in inputs if a is not None and n in initializers]
    data = model_bytes(op, inputs, outputs, attrs or {}, domain, opset, inits)
    feeds = {n: a for n, a in inputs if a is not None and n not in initializers}
    results = run_ort(data, feeds)
    CASES.append({
        "name": name, "op": op, "domain": domain or "", "opset": opset, "attrs": attrs or {},
        "params": params or {},
        # initializers are stored once, in the model
        "inputs": [{"name": n, "absent": True} if a is None else
                   {"name": n, "initializer": True} if n in initializers else dict(encode(a), name=n)
                   for n, a in inputs],
        "outputs": [dict(encode(r), name=n) for (n, _), r in zip(outputs, results)],
        "model": base64.b64encode(data).decode(),
    })


def specials(*values):
    return np.array(values, dtype=f32)


def main():
    rng = np.random.default_rng(20251123)
    nrm = lambda *shape, s=1.0: np.asarray(rng.standard_normal(shape) * s, dtype=f32)

    # ---- unary: every tail length, the branch boundaries, and ranges wide enough to saturate
    tiny, denorm = np.finfo(f32).tiny, f32(1e-42)
    erf_x = np.concatenate([np.linspace(-5, 5, 997, dtype=f32), nrm(200, s=1.5), specials(
        0.0, -0.0, 0.921875, np.nextafter(f32(0.921875), f32(1)), -0.921875, np.nextafter(f32(-0.921875), f32(-1)),
        3.725, 3.7250001, 3.925, 3.9250002, 4.0, 9.0, -3.8, -4.0, 30.0, -30.0, 1e-20, -1e-20, tiny, denorm,
        np.inf, -np.inf)])
    tanh_x = np.concatenate([np.linspace(-12, 12, 1001, dtype=f32), nrm(200, s=3.0), specials(
        0.0, -0.0, 9.0, -9.0, np.nextafter(f32(9), f32(10)), 8.999999, 1e-20, -1e-20, denorm, 50.0, -50.0,
        np.inf, -np.inf)])
    exp_x = np.concatenate([np.linspace(-110, 95, 1003, dtype=f32), nrm(200, s=4.0), specials(
        0.0, -0.0, 88.3762626647950, 88.7762626647950, 88.8, -88.3762626647949, -103.9720840454, -104.0, -87.0,
        -100.0, 1e-30, -1e-30, np.inf, -np.inf)])
    for op, x in (("Erf", erf_x), ("Tanh", tanh_x), ("Exp", exp_x)):
        case(f"{op.lower()}_sweep", op, [("x", x)], [("y", np.float32)], opset=13)
        for n in (1, 2, 3, 5, 6, 7):  # the scalar tails of the vector loops
            case(f"{op.lower()}_n{n}", op, [("x", x[np.linspace(300, len(x) - 30, n).astype(int)])], [("y", np.float32)],
                 opset=13)
    sqrt_x = np.concatenate([np.abs(nrm(301, s=100.0)), specials(0.0, -0.0, denorm, tiny, 1.0, 2.0, 3e38, -1.0, np.inf)])
    case("sqrt", "Sqrt", [("x", sqrt_x)], [("y", np.float32)], opset=13)

    # ---- GELU in its four onnxruntime forms (ONNX Gelu-20, com.microsoft Gelu / FastGelu / BiasGelu)
    gx = np.concatenate([np.linspace(-8, 8, 1025, dtype=f32), nrm(99, s=2.0), specials(0.0, -0.0, 1e-20, -30.0, 30.0)])
    case("gelu20_none", "Gelu", [("x", gx)], [("y", np.float32)], opset=20)
    case("gelu20_tanh", "Gelu", [("x", gx)], [("y", np.float32)], attrs={"approximate": "tanh"}, opset=20)
    case("ms_gelu", "Gelu", [("x", gx)], [("y", np.float32)], domain="com.microsoft")
    case("ms_fastgelu", "FastGelu", [("x", gx)], [("y", np.float32)], domain="com.microsoft")
    big = nrm(4100, s=3.0)  # more than one 4096-element chunk
    case("ms_fastgelu_chunks", "FastGelu", [("x", big)], [("y", np.float32)], domain="com.microsoft")
    for cols in (37, 64):
        x, b = nrm(3, 5, cols, s=2.0), nrm(cols)
        case(f"ms_fastgelu_bias_{cols}", "FastGelu", [("x", x), ("bias", b)], [("y", np.float32)], domain="com.microsoft")
        case(f"ms_biasgelu_{cols}", "BiasGelu", [("x", x), ("bias", b)], [("y", np.float32)], domain="com.microsoft")

    # ---- Softmax: last axis (MLAS), other axes (transposed in onnxruntime), opset 11 (2-D coercion)
    def logits(*shape):
        x = nrm(*shape, s=4.0)
        x.reshape(-1)[::7] = f32(-3.4028234663852886e38)  # an additive attention mask's finfo.min
        x.reshape(-1)[3::11] += f32(70.0)
        return x
    for shape, axis in (((3, 5, 37), -1), ((2, 4, 16), -1), ((1, 2, 128), -1), ((2, 7, 9), 1), ((3, 4, 6), 0),
                        ((2, 3, 5, 4), 2)):
        case(f"softmax13_{'x'.join(map(str, shape))}_axis{axis}", "Softmax", [("x", logits(*shape))],
             [("y", np.float32)], attrs={"axis": axis}, opset=13)
    for n in range(1, 21):
        case(f"softmax13_row{n}", "Softmax", [("x", logits(3, n))], [("y", np.float32)], attrs={"axis": -1}, opset=13)
    case("softmax11_2x3x5_axis1", "Softmax", [("x", logits(2, 3, 5))], [("y", np.float32)], attrs={"axis": 1}, opset=11)

    # ---- LayerNormalization (opset 17) and com.microsoft SkipLayerNormalization
    for shape, axis, eps, with_bias, offset in (((2, 5, 37), -1, 1e-12, True, 0.0), ((3, 64), -1, 1e-5, True, 0.0),
                                                 ((2, 3, 8), -2, 1e-5, True, 0.0), ((4, 33), -1, 1e-12, False, 0.0),
                                                 ((2, 48), -1, 1e-12, True, 1000.0), ((3, 1), -1, 1e-5, True, 0.0)):
        x = nrm(*shape, s=3.0) + f32(offset)
        norm_shape = shape[axis:] if axis < 0 else shape[axis:]
        inputs = [("x", x), ("scale", nrm(*norm_shape) + f32(1))] + ([("bias", nrm(*norm_shape))] if with_bias else [])
        case(f"layernorm_{'x'.join(map(str, shape))}_axis{axis}_eps{eps:g}{'' if with_bias else '_nobias'}"
             f"{'_offset' if offset else ''}", "LayerNormalization", inputs, [("y", np.float32)],
             attrs={"axis": axis, "epsilon": eps}, opset=17)
    for cols, with_beta, with_bias, skip_rows in ((37, True, True, None), (64, True, False, None), (33, False, True, None),
                                                 (32, True, True, 1)):
        x = nrm(2, 3, cols, s=2.0)
        skip = nrm(2, 3, cols) if skip_rows is None else nrm(3, cols)  # a 2-D skip repeats over the batch
        inputs = [("x", x), ("skip", skip), ("gamma", nrm(cols) + f32(1)), ("beta", nrm(cols) if with_beta else None),
                  ("bias", nrm(cols) if with_bias else None)]
        while inputs[-1][1] is None:
            inputs.pop()
        case(f"skiplayernorm_{cols}{'' if with_beta else '_nobeta'}{'' if with_bias else '_nobias'}"
             f"{'_skip2d' if skip_rows else ''}", "SkipLayerNormalization", inputs,
             [("y", np.float32)], attrs={"epsilon": 1e-12}, domain="com.microsoft")

    # ---- elementwise with numpy broadcasting
    shapes = (((2, 3, 37), (2, 3, 37)), ((2, 3, 37), (37,)), ((2, 1, 5), (3, 1)), ((4, 1), (1, 6)), ((2, 3, 5), ()),
              ((), (2, 3, 5)), ((1, 3, 1), (2, 1, 7)))
    for op in ("Add", "Sub", "Mul", "Div"):
        for sa, sb in shapes:
            a, b = nrm(*sa, s=3.0), nrm(*sb, s=3.0)
            if op == "Div":
                b.reshape(-1)[::5] = f32(0.0)
            case(f"{op.lower()}_{'x'.join(map(str, sa)) or 's'}_{'x'.join(map(str, sb)) or 's'}", op,
                 [("a", a), ("b", b)], [("y", np.float32)], opset=14)
    px = np.concatenate([nrm(97, s=3.0), specials(0.0, -0.0, 1.0, -1.0, 3e19, -3e19, 1e-30, np.inf, -np.inf)])
    for e in (2.0, 3.0, 0.5, -1.0, 1.7, 0.0, 1.0):
        case(f"pow_scalar_{e:g}", "Pow", [("x", px), ("e", np.array(e, dtype=f32))], [("y", np.float32)], opset=15)
    base = np.abs(nrm(4, 9, s=2.0))
    base[0, :3] = f32(-2.0)
    case("pow_tensor", "Pow", [("x", base), ("e", np.round(nrm(9, s=2.0) * 2) / 2)], [("y", np.float32)], opset=15)
    cond = rng.integers(0, 2, size=(2, 3, 5)).astype(np.bool_)
    case("where_float", "Where", [("c", cond), ("a", nrm(2, 3, 5)), ("b", nrm(3, 1))], [("y", np.float32)], opset=16)
    case("where_scalar", "Where", [("c", cond[:, :1, :]), ("a", np.array(-3.4028234663852886e38, dtype=f32)),
                                   ("b", nrm(2, 3, 5))], [("y", np.float32)], opset=16)
    case("where_int64", "Where", [("c", cond), ("a", rng.integers(-2**40, 2**40, size=(5,))),
                                  ("b", np.array(7, dtype=np.int64))], [("y", np.int64)], opset=16)

    # ---- Cast between float32 / int64 / int32 / bool
    cx = np.concatenate([nrm(40, s=100.0), specials(0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, 0.99999994, -0.99999994,
                                                     2147483520.0, -2147483648.0, 16777217.0, 1e10, -1e10)])
    for to, t in ((TensorProto.INT64, np.int64), (TensorProto.INT32, np.int32), (TensorProto.BOOL, np.bool_)):
        case(f"cast_float_{DTYPE_NAME[t]}", "Cast", [("x", cx)], [("y", t)], attrs={"to": to}, opset=13)
    case("cast_float_bool_special", "Cast", [("x", specials(0.0, -0.0, 1e-45, np.nan, np.inf, -np.inf))],
         [("y", np.bool_)], attrs={"to": TensorProto.BOOL}, opset=13)
    ix = np.array([0, 1, -1, 2**24 + 1, -(2**24 + 1), 2**53 + 1, -(2**62), 2**63 - 1, 2**31, -(2**31) - 1, 123456789,
                   2**31 - 1, 16777219, 3], dtype=np.int64)
    case("cast_int64_float", "Cast", [("x", ix)], [("y", np.float32)], attrs={"to": TensorProto.FLOAT}, opset=13)
    case("cast_int64_int32", "Cast", [("x", ix)], [("y", np.int32)], attrs={"to": TensorProto.INT32}, opset=13)
    case("cast_int64_bool", "Cast", [("x", ix)], [("y", np.bool_)], attrs={"to": TensorProto.BOOL}, opset=13)
    i32 = ix.astype(np.int32)
    case("cast_int32_float", "Cast", [("x", i32)], [("y", np.float32)], attrs={"to": TensorProto.FLOAT}, opset=13)
    case("cast_int32_int64", "Cast", [("x", i32)], [("y", np.int64)], attrs={"to": TensorProto.INT64}, opset=13)
    bx = np.array([True, False, True, True, False], dtype=np.bool_)
    for to, t in ((TensorProto.FLOAT, np.float32), (TensorProto.INT64, np.int64), (TensorProto.INT32, np.int32)):
        case(f"cast_bool_{DTYPE_NAME[t]}", "Cast", [("x", bx)], [("y", t)], attrs={"to": to}, opset=13)

    # ---- float MatMul: K blocking (MLAS strides), N tails, batch broadcasting, constant (packed) B
    # (tests/js/ort-ops-minilm.test.js adds the large shapes: constant B of depth 1536, N >= K > 128, ...)
    for m, k, n, const_b in ((1, 7, 5, False), (1, 20, 13, False), (3, 16, 17, False), (5, 128, 40, False),
                             (2, 129, 16, False), (4, 300, 33, False), (2, 600, 8, False), (3, 300, 20, True),
                             (2, 520, 8, True), (1, 300, 8, True), (2, 40, 130, True), (5, 1, 3, False)):
        a, b = nrm(m, k), nrm(k, n)
        case(f"matmul_{m}x{k}x{n}{'_constb' if const_b else ''}", "MatMul", [("a", a), ("b", b)], [("y", np.float32)],
             opset=13, initializers=("b",) if const_b else ())
    case("matmul_batched_2x3x4x32_32x9", "MatMul", [("a", nrm(2, 3, 4, 32)), ("b", nrm(32, 9))], [("y", np.float32)],
         opset=13)
    case("matmul_broadcast_2x1x3x20_4x20x6", "MatMul", [("a", nrm(2, 1, 3, 20)), ("b", nrm(4, 20, 6))],
         [("y", np.float32)], opset=13)
    case("matmul_vec_20_20x6", "MatMul", [("a", nrm(20)), ("b", nrm(20, 6))], [("y", np.float32)], opset=13)
    case("matmul_2x3x20_vec_20", "MatMul", [("a", nrm(2, 3, 20)), ("b", nrm(20))], [("y", np.float32)], opset=13)
    # Gemm with a bias C (MLAS accumulates onto the broadcast C), and onnxruntime's FusedGemm + Tanh (a pooler)
    case("gemm_bias_transb_constb", "Gemm", [("a", nrm(3, 300)), ("b", nrm(20, 300)), ("c", nrm(20))], [("y", np.float32)],
         attrs={"transB": 1}, opset=13, initializers=("b", "c"))
    case("gemm_alpha_beta_c4x1", "Gemm", [("a", nrm(4, 40)), ("b", nrm(40, 24)), ("c", nrm(4, 1))], [("y", np.float32)],
         attrs={"alpha": 0.5, "beta": 2.0}, opset=13)
    case("gemm_one_row_bias", "Gemm", [("a", nrm(1, 21)), ("b", nrm(21, 13)), ("c", nrm(13))], [("y", np.float32)],
         opset=13, initializers=("c",))
    case("gemm_no_bias", "Gemm", [("a", nrm(5, 130)), ("b", nrm(130, 9))], [("y", np.float32)], opset=13)
    case("fusedgemm_tanh_pooler", "FusedGemm", [("a", nrm(2, 300)), ("b", nrm(16, 300)), ("c", nrm(16))],
         [("y", np.float32)], attrs={"transB": 1, "activation": "Tanh"}, domain="com.microsoft", initializers=("b", "c"))
    # com.microsoft FusedMatMul (onnxruntime folds the attention Div into alpha and the K transpose into transB)
    case("fusedmatmul_alpha_transb", "FusedMatMul", [("a", nrm(2, 4, 6, 16)), ("b", nrm(2, 4, 6, 16))],
         [("y", np.float32)], attrs={"alpha": 0.25, "transB": 1}, domain="com.microsoft")
    case("fusedmatmul_alpha", "FusedMatMul", [("a", nrm(2, 1, 3, 130)), ("b", nrm(2, 2, 130, 7))],
         [("y", np.float32)], attrs={"alpha": 0.17677669}, domain="com.microsoft")

    # ---- dynamic int8: MatMulIntegerToFloat and DynamicQuantizeMatMul against constant weights
    for m, k, n, wtype, with_bias in ((6, 64, 48, np.int8, True), (5, 37, 20, np.int8, False), (4, 33, 17, np.uint8, True),
                                      (4, 300, 24, np.int8, True)):
        lo, hi = (-128, 128) if wtype == np.int8 else (0, 256)
        w = rng.integers(lo, hi, size=(k, n)).astype(wtype)
        wzp = np.array(0 if wtype == np.int8 else 131, dtype=wtype)
        x = nrm(2, m, k, s=2.0)
        bias = nrm(n) if with_bias else None
        tail = [("bias", bias)] if with_bias else []
        case(f"dynamicquantizematmul_{m}x{k}x{n}_{DTYPE_NAME[wtype]}{'' if with_bias else '_nobias'}",
             "DynamicQuantizeMatMul", [("a", x), ("b", w), ("b_scale", np.array(0.0123, dtype=f32)),
                                       ("b_zero_point", wzp)] + tail,
             [("y", np.float32)], domain="com.microsoft", initializers=("b", "b_scale", "b_zero_point", "bias"))
        aq = rng.integers(0, 256, size=(2, m, k)).astype(np.uint8)
        case(f"matmulintegertofloat_{m}x{k}x{n}_{DTYPE_NAME[wtype]}{'' if with_bias else '_nobias'}",
             "MatMulIntegerToFloat", [("a", aq), ("b", w), ("a_scale", np.array(0.0311, dtype=f32)),
                                      ("b_scale", np.array(0.0123, dtype=f32)),
                                      ("a_zero_point", np.array(117, dtype=np.uint8)), ("b_zero_point", wzp)] + tail,
             [("y", np.float32)], domain="com.microsoft",
             initializers=("b", "b_scale", "b_zero_point", "bias", "a_scale", "a_zero_point"))
    case("dynamicquantizematmul_zeros", "DynamicQuantizeMatMul",
         [("a", np.zeros((3, 8), f32)), ("b", rng.integers(-128, 128, size=(8, 4)).astype(np.int8)),
          ("b_scale", np.array(0.5, dtype=f32)), ("b_zero_point", np.array(0, dtype=np.int8)), ("bias", nrm(4))],
         [("y", np.float32)], domain="com.microsoft", initializers=("b", "b_scale", "b_zero_point", "bias"))
    for name, x in (("random", nrm(3, 37, s=2.0)), ("zeros", np.zeros((2, 5), f32)), ("positive", np.abs(nrm(41)))):
        case(f"dynamicquantizelinear_{name}", "DynamicQuantizeLinear", [("x", x)],
             [("y", np.uint8), ("y_scale", np.float32), ("y_zero_point", np.uint8)], opset=11)

    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as fh:
        fh.write('{"generator": "tools/transformer/ort_ops.py", "onnxruntime": "%s", "onnx": "%s", "cases": [\n'
                 % (ort.__version__, onnx.__version__))
        fh.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in CASES))
        fh.write("\n]}\n")
    print(f"{len(CASES)} cases -> {os.path.relpath(OUT, REPO)} ({os.path.getsize(OUT)} bytes)")


if __name__ == "__main__":
    main()

// QTensor's API: creation, inspection, views, copies, serialization, printing, lifetime and the
// errors for bad input. Values are checked against hand-derivable numbers (scale 0.5, integers);
// exactness against PyTorch is golden-torch.test.js's job.
import assert from 'node:assert/strict';
import { afterEach, before, describe, test } from 'node:test';
import { failOnLeaks, qwasm, using } from './helpers.js';

const { QTensor, quantizePerTensor, quantizePerChannel, fromIntRepr, fromIntReprPerChannel, empty } = qwasm;

failOnLeaks(before, afterEach);


describe('creation and inspection', () => {
  test('quantizePerTensor: ints, qparams, dequantize, metadata', () => {
    using(quantizePerTensor([-1, 0, 0.25, 1, 200], [5], 0.5, 2, 'quint8'))((t) => {
      assert.deepEqual(Array.from(t.intRepr()), [0, 2, 2, 4, 255]); // 0.25/0.5 = 0.5 -> 0 (ties to even)
      assert.ok(t.intRepr() instanceof Uint8Array);
      assert.deepEqual(Array.from(t.dequantize()), [-1, 0, 0, 1, 126.5]);
      assert.deepEqual(t.shape, [5]);
      assert.equal(t.ndim, 1);
      assert.equal(t.numel(), 5);
      assert.equal(t.dtype, 'quint8');
      assert.equal(t.qscheme, 'per_tensor_affine');
      assert.equal(t.qScale(), 0.5);
      assert.equal(t.qZeroPoint(), 2);
      assert.throws(() => t.qPerChannelScales(), /qPerChannelScales: the tensor is per_tensor_affine/);
    });
  });

  test('quantizePerChannel: one (scale, zero point) per index along the axis', () => {
    using(quantizePerChannel([1, 2, 3, 4, 5, 6], [2, 3], [0.5, 0.25, 1], [0, 1, -1], 1, 'qint8'))((t) => {
      assert.deepEqual(Array.from(t.intRepr()), [2, 9, 2, 8, 21, 5]);
      assert.ok(t.intRepr() instanceof Int8Array);
      assert.deepEqual(Array.from(t.dequantize()), [1, 2, 3, 4, 5, 6]);
      assert.equal(t.qscheme, 'per_channel_affine');
      assert.deepEqual(Array.from(t.qPerChannelScales()), [0.5, 0.25, 1]);
      assert.ok(t.qPerChannelScales() instanceof Float64Array);
      assert.deepEqual(Array.from(t.qPerChannelZeroPoints()), [0, 1, -1]);
      assert.equal(t.qPerChannelAxis(), 1);
      assert.throws(() => t.qScale(), /qScale: the tensor is per_channel_affine/);
      assert.throws(() => t.qZeroPoint(), /qZeroPoint: the tensor is per_channel_affine/);
    });
    using(quantizePerChannel([1, 2, 3, 4], [2, 2], [1, 2], [0, 0], -2, 'quint8'))((t) => {
      assert.equal(t.qPerChannelAxis(), 0, 'negative axes count from the end');
    });
  });

  test('fromIntRepr wraps your own integers (seed 000)', () => {
    using(fromIntRepr([35, -51, -64, 127], [2, 2], 0.0082, 0, 'qint8'))((t) => {
      assert.deepEqual(Array.from(t.intRepr()), [35, -51, -64, 127]);
      assert.deepEqual(Array.from(t.dequantize()), [35, -51, -64, 127].map((q) => Math.fround(Math.fround(0.0082) * q)));
    });
    using(fromIntRepr(new Int32Array([7, -7]), [2], 1e-4, 2, 'qint32'))((t) => {
      assert.ok(t.intRepr() instanceof Int32Array);
      assert.deepEqual(Array.from(t.intRepr()), [7, -7]);
    });
    using(fromIntReprPerChannel([1, 2, 3, 4], [2, 2], [0.5, 2], [1, 0], 0, 'quint8'))((t) => {
      assert.deepEqual(Array.from(t.dequantize()), [0, 0.5, 6, 8]);
    });
  });

  test('empty fills with the zero point, so it dequantizes to zeros', () => {
    using(
      empty([2, 3], { dtype: 'quint8', scale: 0.1, zeroPoint: 7 }),
      empty([2, 2], { dtype: 'qint8', scales: [1, 2], zeroPoints: [3, -4], axis: 0 }),
    )((a, b) => {
      assert.deepEqual(Array.from(a.intRepr()), [7, 7, 7, 7, 7, 7]);
      assert.deepEqual(Array.from(a.dequantize()), [0, 0, 0, 0, 0, 0]);
      assert.deepEqual(Array.from(b.intRepr()), [3, 3, -4, -4]);
      assert.deepEqual(Array.from(b.dequantize()), [0, 0, 0, 0]);
    });
  });

  test('item() of one element; 0-d tensors; empty tensors', () => {
    using(quantizePerTensor([2.5], [], 0.5, 0, 'qint8'), quantizePerTensor([], [0, 3], 1, 0, 'quint8'))((s, e) => {
      assert.equal(s.item(), 2.5);
      assert.deepEqual(s.shape, []);
      assert.equal(e.numel(), 0);
      assert.deepEqual(Array.from(e.dequantize()), []);
      assert.throws(() => e.item(), /item: the tensor has 0 elements; item\(\) needs exactly one/);
    });
  });
});

describe('views and copies', () => {
  const data = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]; // 3x4, scale 1 zp 0: ints = values

  test('transpose and permute are views; contiguous() copies when needed', () => {
    using(quantizePerTensor(data, [3, 4], 1, 0, 'qint32'))((t) => {
      using(t.transpose(0, 1))((tt) => {
        assert.deepEqual(tt.shape, [4, 3]);
        assert.equal(tt.isContiguous(), false);
        assert.deepEqual(tt.strides, [1, 4]);
        assert.deepEqual(Array.from(tt.intRepr()), [0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]);
        assert.deepEqual(Array.from(tt.dequantize()), [0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]);
        using(tt.contiguous())((c) => {
          assert.equal(c.isContiguous(), true);
          assert.deepEqual(Array.from(c.intRepr()), Array.from(tt.intRepr()));
        });
      });
      using(t.reshape([2, 2, 3]))((r) =>
        using(r.permute([2, 0, 1]))((p) => {
          assert.deepEqual(p.shape, [3, 2, 2]);
          assert.deepEqual(Array.from(p.intRepr()), [0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11]);
        }),
      );
    });
  });

  test('select, slice and at() index like t[i], t[a:b:s]; views share storage', () => {
    using(quantizePerTensor(data, [3, 4], 1, 0, 'quint8'))((t) => {
      using(t.at(1), t.at(2, 3), t.slice(1, 1, 4, 2), t.slice(0, -2), t.select(1, -1))((row, one, cols, last2, col) => {
        assert.deepEqual(Array.from(row.intRepr()), [4, 5, 6, 7]);
        assert.equal(one.item(), 11);
        assert.deepEqual(cols.shape, [3, 2]);
        assert.deepEqual(Array.from(cols.intRepr()), [1, 3, 5, 7, 9, 11]);
        assert.deepEqual(Array.from(last2.intRepr()), [4, 5, 6, 7, 8, 9, 10, 11]);
        assert.deepEqual(Array.from(col.intRepr()), [3, 7, 11]);
        // A view writes through to its base.
        using(quantizePerTensor([40, 50, 60, 70], [4], 1, 0, 'quint8'))((src) => row.copyFrom(src));
        assert.deepEqual(Array.from(t.intRepr().slice(4, 8)), [40, 50, 60, 70]);
      });
    });
  });

  test('flatten merges a range of dimensions', () => {
    using(quantizePerTensor(new Array(24).fill(1), [2, 3, 4], 1, 0, 'quint8'))((t) => {
      using(t.flatten(), t.flatten(1), t.flatten(0, 1))((a, b, c) => {
        assert.deepEqual(a.shape, [24]);
        assert.deepEqual(b.shape, [2, 12]);
        assert.deepEqual(c.shape, [6, 4]);
      });
      assert.throws(() => t.flatten(2, 1), /flatten: startDim 2 comes after endDim 1/);
    });
  });

  test('reshape: -1 inference, views of contiguous data, copies of strided data', () => {
    using(quantizePerTensor(data, [3, 4], 1, 0, 'quint8'))((t) => {
      using(t.reshape([2, -1]), t.transpose(0, 1))((a, tt) =>
        using(tt.reshape([12]))((b) => {
          assert.deepEqual(a.shape, [2, 6]);
          assert.deepEqual(Array.from(b.intRepr()), [0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]);
          assert.equal(b.isContiguous(), true);
        }),
      );
      assert.throws(() => t.reshape([5, -1]), /reshape: cannot infer -1 in \[5,-1\] for 12 elements/);
      assert.throws(() => t.reshape([5, 3]), /reshape: shape \[5,3\] has 15 elements, the tensor has 12/);
      assert.throws(() => t.reshape([-1, -1]), /only one dimension can be -1/);
    });
  });

  test('per-channel views keep the channel qparams; one channel left becomes per-tensor (as torch)', () => {
    using(quantizePerChannel([1, 2, 3, 4, 5, 6], [2, 3], [0.5, 0.25, 1], [0, 1, -1], 1, 'qint8'))((t) => {
      using(t.transpose(0, 1), t.select(1, 2), t.select(0, 1), t.slice(1, 0, 2), t.reshape([1, 2, 3, 1]))((tt, ch, row, sl, rs) => {
        assert.equal(tt.qPerChannelAxis(), 0);
        assert.deepEqual(Array.from(tt.dequantize()), [1, 4, 2, 5, 3, 6]);
        assert.equal(ch.qscheme, 'per_tensor_affine');
        assert.equal(ch.qScale(), 1);
        assert.equal(ch.qZeroPoint(), -1);
        assert.deepEqual(Array.from(ch.dequantize()), [3, 6]);
        assert.equal(row.qPerChannelAxis(), 0);
        assert.deepEqual(Array.from(row.dequantize()), [4, 5, 6]);
        assert.deepEqual(Array.from(sl.qPerChannelScales()), [0.5, 0.25]);
        assert.equal(rs.qPerChannelAxis(), 2);
      });
      assert.throws(() => t.reshape([3, 2]), /reshape: shape \[3,2\] splits or merges the channel axis 1 \(size 3\)/);
    });
  });

  test('clone() copies; copyFrom() requantizes into the destination qparams and dtype', () => {
    using(quantizePerTensor([0.5, -1, 3, 24.5], [4], 0.1, 10, 'quint8'), empty([4], { dtype: 'qint8', scale: 0.5, zeroPoint: 3 }))((src, dst) => {
      using(src.clone())((c) => {
        assert.deepEqual(Array.from(c.intRepr()), Array.from(src.intRepr()));
        assert.equal(c.qScale(), 0.1);
      });
      dst.copyFrom(src);
      assert.deepEqual(Array.from(dst.intRepr()), [4, 1, 9, 52]); // round(v / 0.5) + 3
      assert.equal(dst.qScale(), 0.5, 'the destination keeps its own qparams');
      using(src.requantize(0.25, 0, 'qint32'))((r) => {
        assert.deepEqual(Array.from(r.intRepr()), [2, -4, 12, 98]);
        assert.equal(r.dtype, 'qint32');
      });
      using(empty([3], { dtype: 'quint8', scale: 1, zeroPoint: 0 }))((small) => {
        assert.throws(() => small.copyFrom(src), /copyFrom: shape \[4\] does not match \[3\]/);
        assert.throws(() => small.copyFrom([1, 2, 3]), /copyFrom: other must be a QTensor/);
      });
    });
  });
});

describe('serialization', () => {
  test('toBytes / fromBytes round-trip exactly: per-tensor, per-channel, views, every dtype', () => {
    const cases = [
      quantizePerTensor([-1, 0, 0.5, 1, 2.5], [5], 0.5, 2, 'quint8'),
      quantizePerTensor([1e6, -3, 0.1], [3, 1], 0.1, -7, 'qint32'),
      quantizePerChannel([1, 2, 3, 4, 5, 6], [2, 3], [0.1, 1 / 3, 2], [0, 5, -128], 1, 'qint8'),
      quantizePerTensor([7], [], 1, 0, 'qint8'),
    ];
    cases.push(cases[2].transpose(0, 1));
    using(...cases)((...ts) => {
      for (const t of ts) {
        using(QTensor.fromBytes(t.toBytes()))((u) => {
          assert.deepEqual(u.shape, t.shape);
          assert.equal(u.dtype, t.dtype);
          assert.equal(u.qscheme, t.qscheme);
          assert.deepEqual(u.intRepr(), t.intRepr());
          assert.deepEqual(u.dequantize(), t.dequantize());
          if (t.qscheme === 'per_tensor_affine') assert.deepEqual([u.qScale(), u.qZeroPoint()], [t.qScale(), t.qZeroPoint()]);
          else assert.deepEqual([u.qPerChannelScales(), u.qPerChannelZeroPoints(), u.qPerChannelAxis()], [t.qPerChannelScales(), t.qPerChannelZeroPoints(), t.qPerChannelAxis()]);
          assert.deepEqual(u.toBytes(), t.toBytes());
        });
      }
    });
  });

  test('fromBytes rejects malformed input, naming the problem and the offset', () => {
    using(quantizePerTensor([1, 2, 3], [3], 0.5, 2, 'quint8'))((t) => {
      const good = t.toBytes();
      const mutate = (f) => {
        const b = good.slice();
        f(b);
        return b;
      };
      assert.throws(() => QTensor.fromBytes(good.subarray(0, 5)), /truncated header/);
      assert.throws(() => QTensor.fromBytes(mutate((b) => (b[0] = 0))), /bad magic at offset 0/);
      assert.throws(() => QTensor.fromBytes(mutate((b) => (b[4] = 9))), /unknown dtype code 9 at offset 4/);
      assert.throws(() => QTensor.fromBytes(mutate((b) => (b[5] = 4))), /unknown qscheme code 4 at offset 5/);
      assert.throws(() => QTensor.fromBytes(mutate((b) => (b[6] = 200))), /rank 200 at offset 6 exceeds 8/);
      assert.throws(() => QTensor.fromBytes(mutate((b) => (b[8] = 4))), /length 27 does not match the header, which describes 28 bytes/);
      assert.throws(() => QTensor.fromBytes(good.subarray(0, good.length - 1)), /does not match the header/);
      assert.throws(() => QTensor.fromBytes(mutate((b) => new DataView(b.buffer).setFloat64(12, -1, true))), /fromBytes: scale must be a finite number > 0/);
      assert.throws(() => QTensor.fromBytes(mutate((b) => new DataView(b.buffer).setInt32(20, 300, true))), /fromBytes: zeroPoint must be an integer in \[0, 255\] for quint8, got 300/);
      assert.throws(() => QTensor.fromBytes('QWT1'), /expected a Uint8Array or an ArrayBuffer/);
      assert.throws(() => QTensor.fromBytes(mutate((b) => new DataView(b.buffer).setUint32(8, 0xffffffff, true))), /shape \[4294967295\] has 4294967295 elements, too many/);
    });
  });
});

describe('printing', () => {
  test('toString shows values, size, dtype, scheme and qparams like torch', () => {
    using(quantizePerTensor([0.0026, 0.0059, 0.0063], [3], 1e-4, 2, 'quint8'), quantizePerChannel([1, 2, 3, 4], [2, 2], [0.5, 0.25], [0, 1], 0, 'qint8'))((t, c) => {
      assert.equal(
        String(t),
        'QTensor([0.0026, 0.0059, 0.0063], size=(3,), dtype=quint8,\n        quantization_scheme=per_tensor_affine, scale=0.0001, zero_point=2)',
      );
      assert.match(String(c), /^QTensor\(\[\[1\., 2\.\],\n\s+\[3\., 4\.\]\], size=\(2, 2\), dtype=qint8,\n\s+quantization_scheme=per_channel_affine, scale=\[0\.5, 0\.25\], zero_point=\[0, 1\], axis=0\)$/);
    });
  });
});

describe('lifetime', () => {
  test('dispose is idempotent, frees storage once the last view goes, and later use throws', () => {
    const before = qwasm.memoryStats().liveBytes;
    const t = quantizePerTensor(new Float32Array(1000), [1000], 1, 0, 'qint32');
    assert.ok(qwasm.memoryStats().liveBytes >= before + 4000);
    const v = t.slice(0, 10, 20);
    t.dispose();
    t.dispose();
    assert.equal(t.disposed, true);
    assert.ok(qwasm.memoryStats().liveBytes >= before + 4000, 'the view still holds the storage');
    assert.deepEqual(Array.from(v.intRepr()), new Array(10).fill(0));
    v[Symbol.dispose]();
    assert.equal(qwasm.memoryStats().liveBytes, before);
    assert.throws(() => t.intRepr(), /QTensor\.intRepr: this tensor was disposed/);
    assert.throws(() => t.shape, /QTensor\.shape: this tensor was disposed/);
    assert.throws(() => v.dequantize(), /QTensor\.dequantize: this tensor was disposed/);
    assert.equal(String(t), 'QTensor(<disposed>)');
  });

  test('many tensors created and disposed leave no live bytes', () => {
    for (let i = 0; i < 500; i++) {
      const t = quantizePerTensor(new Float32Array(257).fill(i), [257], 0.5, 3, 'quint8');
      const v = t.transpose(0, 0);
      const r = v.reshape([257]);
      const u = r.clone();
      assert.equal(u.dequantize()[256], Math.min(i, 126)); // 3 + 2i saturates at 255
      for (const x of [t, v, r, u]) x.dispose();
    }
  });

  test('the constructor is internal', () => {
    assert.throws(() => new QTensor(), /QTensor: use quantizePerTensor\(\)/);
  });
});

describe('bad input gives errors naming the argument and the value', () => {
  const cases = [
    [() => quantizePerTensor([1], [1], 0, 0, 'quint8'), /quantizePerTensor: scale must be a finite number > 0 .* got 0$/],
    [() => quantizePerTensor([1], [1], -0.5, 0, 'quint8'), /scale must be a finite number > 0 .* got -0.5/],
    [() => quantizePerTensor([1], [1], NaN, 0, 'quint8'), /scale must be .* got NaN/],
    [() => quantizePerTensor([1], [1], Infinity, 0, 'quint8'), /scale must be .* got Infinity/],
    [() => quantizePerTensor([1], [1], 1e300, 0, 'quint8'), /scale must be .* got 1e\+300/],
    [() => quantizePerTensor([1], [1], 1e-45, 0, 'quint8'), /scale must be .* got 1e-45/],
    [() => quantizePerTensor([1], [1], '0.1', 0, 'quint8'), /scale must be .* got "0.1"/],
    [() => quantizePerTensor([1], [1], 0.1, 256, 'quint8'), /zeroPoint must be an integer in \[0, 255\] for quint8, got 256/],
    [() => quantizePerTensor([1], [1], 0.1, -129, 'qint8'), /zeroPoint must be an integer in \[-128, 127\] for qint8, got -129/],
    [() => quantizePerTensor([1], [1], 0.1, 1.5, 'qint8'), /zeroPoint must be an integer .* got 1.5/],
    [() => quantizePerTensor([1], [1], 0.1, 0, 'int8'), /quantizePerTensor: unknown dtype "int8"; expected 'quint8', 'qint8' or 'qint32'/],
    [() => quantizePerTensor([1], [1], 0.1, 0, 'toString'), /unknown dtype "toString"/],
    [() => quantizePerTensor([1, 2], [3], 0.1, 0, 'quint8'), /quantizePerTensor: data has 2 elements but 3 are needed/],
    [() => quantizePerTensor([1, 'x'], [2], 0.1, 0, 'quint8'), /data\[1\] must be a number, got "x"/],
    [() => quantizePerTensor('abc', [3], 0.1, 0, 'quint8'), /data must be an array or a typed array/],
    [() => quantizePerTensor([1], [-1], 0.1, 0, 'quint8'), /shape\[0\] must be a non-negative integer, got -1/],
    [() => quantizePerTensor([1], [1.5], 0.1, 0, 'quint8'), /shape\[0\] must be a non-negative integer, got 1.5/],
    [() => quantizePerTensor([1], 3, 0.1, 0, 'quint8'), /shape must be an array of dimension sizes, got 3/],
    [() => quantizePerTensor([], [1, 1, 1, 1, 1, 1, 1, 1, 0], 0.1, 0, 'quint8'), /shape has 9 dimensions; at most 8/],
    [() => quantizePerTensor([], [65536, 65536], 0.1, 0, 'quint8'), /has 4294967296 elements/],
    [() => quantizePerTensor([1], [1], 0.1, 0, 'quint8', { rounding: 'floor' }), /quantizePerTensor: unknown rounding form 'floor'; expected one of 'torch', 'fbgemm', 'onnx', 'tflite'/],
    [() => quantizePerChannel([1, 2], [2], [0.1], [0], 0, 'quint8'), /quantizePerChannel: scales has 1 elements but shape\[0\] is 2/],
    [() => quantizePerChannel([1, 2], [2], [0.1, 0.1], [0], 0, 'quint8'), /zeroPoints has 1 elements but shape\[0\] is 2/],
    [() => quantizePerChannel([1, 2], [2], [0.1, -1], [0, 0], 0, 'quint8'), /scales\[1\] must be a finite number > 0 .* got -1/],
    [() => quantizePerChannel([1, 2], [2], [0.1, 1], [0, 300], 0, 'quint8'), /zeroPoints\[1\] must be an integer in \[0, 255\] for quint8, got 300/],
    [() => quantizePerChannel([1, 2], [2], [0.1, 1], [0, 0], 1, 'quint8'), /axis must be an integer in \[-1, 0\], got 1/],
    [() => quantizePerChannel([1], [], [0.1], [0], 0, 'quint8'), /axis must be an integer in none \(the tensor is 0-dimensional\), got 0/],
    [() => fromIntRepr([0, 256], [2], 0.1, 0, 'quint8'), /fromIntRepr: ints\[1\] must be an integer in \[0, 255\] for quint8, got 256/],
    [() => fromIntRepr([0.5], [1], 0.1, 0, 'qint8'), /ints\[0\] must be an integer in \[-128, 127\] for qint8, got 0.5/],
    [() => fromIntRepr(new BigInt64Array(1), [1], 0.1, 0, 'qint8'), /ints must hold numbers, not BigInts/],
    [() => empty([2], null), /empty: qparams must be \{ dtype, scale, zeroPoint \}/],
    [() => empty([2], { dtype: 'qint8', scale: 0.1, zeroPoint: 128 }), /empty: zeroPoint must be an integer in \[-128, 127\]/],
  ];
  for (const [fn, pattern] of cases) {
    test(String(pattern), () => {
      assert.throws(fn, pattern);
    });
  }

  test('view arguments', () => {
    using(quantizePerTensor([1, 2, 3, 4, 5, 6], [2, 3], 1, 0, 'quint8'))((t) => {
      assert.throws(() => t.transpose(0, 2), /transpose: dim1 must be an integer in \[-2, 1\], got 2/);
      assert.throws(() => t.permute([0]), /permute: dims must list all 2 dimensions, got \[0\]/);
      assert.throws(() => t.permute([1, 1]), /permute: dims must be a permutation of 0..1, got \[1,1\]/);
      assert.throws(() => t.select(0, 2), /select: index must be an integer in \[-2, 1\] for dim 0, got 2/);
      assert.throws(() => t.slice(1, 0, 2, 0), /slice: step must be a positive integer, got 0/);
      assert.throws(() => t.slice(1, 'a'), /slice: start must be an integer, got "a"/);
      assert.throws(() => t.at(0, 0, 0), /at: 3 indices for a 2-dimensional tensor/);
      assert.throws(() => t.requantize(0, 0), /requantize: scale must be a finite number > 0/);
      assert.throws(() => t.requantize(1, 0, 'uint8'), /requantize: unknown dtype "uint8"/);
    });
  });
});

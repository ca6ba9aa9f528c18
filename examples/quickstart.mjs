import * as qwasm from 'qwasm';

const { isa } = await qwasm.init(); // the SIMD128 build where the engine supports it
console.log('backend:', isa);

// Seed 004: symmetric int8 over [-10, 10] divides the range by 127.5, as PyTorch's observers do.
const { scale, zeroPoint } = qwasm.chooseQParams({
  min: -10, max: 10, dtype: 'qint8', qscheme: 'per_tensor_symmetric',
});
const q = qwasm.quantizePerTensor([-10, -5, 0, 5, 10], [5], scale, zeroPoint, 'qint8');
console.log('scale', scale, 'zero point', zeroPoint);
console.log('ints', Array.from(q.intRepr()));
console.log('back', Array.from(q.dequantize()));
console.log(String(q));

// Seed 003: hardtanh's bound 6.0 at input scale 0.0197434 is 303.9 steps; quint8 stops at 255.
const six = qwasm.quantizePerTensor([6.0], [1], 0.019743409007787704, 0, 'quint8');
console.log('6.0 ->', six.intRepr()[0], '->', six.item());

// PyTorch multiplies by 1/scale, ONNX divides by scale: they disagree on this tie.
const x = [0.273939937];
const torchQ = qwasm.quantizePerTensor(x, [1], 0.00214854861, 0, 'qint32');
const onnxQ = qwasm.quantizePerTensor(x, [1], 0.00214854861, 0, 'qint32', { rounding: 'onnx' });
console.log('torch', torchQ.intRepr()[0], 'onnx', onnxQ.intRepr()[0]);

for (const t of [q, six, torchQ, onnxQ]) t.dispose(); // tensors live in wasm memory
console.log('live bytes', qwasm.memoryStats().liveBytes);

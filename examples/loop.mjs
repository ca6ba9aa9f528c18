import * as qwasm from 'qwasm';

await qwasm.init();
const w = qwasm.quantizePerTensor(Float32Array.from({ length: 64 * 64 }, (_, i) => Math.sin(i) / 8), [64, 64], 1 / 1024, 0, 'qint8');
const fc = qwasm.packLinear(w, null);
w.dispose();
const batch = (step) => Float32Array.from({ length: 16 * 64 }, (_, i) => ((i * 7 + step) % 64) / 64);
const layer = (step) => {
  const x = qwasm.quantizePerTensor(batch(step), [16, 64], 1 / 64, 0, 'quint8');
  return qwasm.relu(qwasm.linear(x, fc, { scale: 1 / 32, zeroPoint: 0 })).dequantize(); // a Float32Array
};
const live = () => qwasm.memoryStats().liveBytes;
qwasm.tidy(() => layer(0)); // the packed weights make their requantization constants on first use: not counted below

// No dispose(): FinalizationRegistry callbacks run only between tasks, so nothing made in this loop is freed before it ends.
let start = live();
for (let step = 0; step < 1000; step++) layer(step);
console.log('1000 steps, no dispose:', live() - start, 'bytes still held');

// tidy(): every tensor a step makes is disposed when the step ends; what it returns (here a Float32Array) stays.
start = live();
let sum = 0;
for (let step = 0; step < 1000; step++) sum += qwasm.tidy(() => layer(step))[0];
console.log('1000 steps in tidy:   ', live() - start, 'bytes still held; first outputs summed', sum);

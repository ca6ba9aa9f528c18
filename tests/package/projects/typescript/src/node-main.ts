// Node only: the samples file read from disk through the URL qwasm/models gives, and the model found the other
// documented way, import.meta.resolve.
import { readFile } from 'node:fs/promises';
import * as qwasm from 'qwasm';
import { digits } from 'qwasm/models';
import { classify } from './digits.js';

const { test_images: images } = JSON.parse(await readFile(digits.samples, 'utf8')) as { test_images: { image: number[]; logits: number[] }[] };
const result = await classify(Float32Array.from(images[0].image));
const resolved = await qwasm.loadModel(new URL(import.meta.resolve('qwasm/models/digits.onnx')));
const same = resolved.layers.length;
resolved.dispose();
console.log(JSON.stringify({ ...result, expected: images[0].logits, layers: same, liveBytes: qwasm.memoryStats().liveBytes }));

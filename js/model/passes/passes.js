// The graph passes loadModel runs, in order, before the model is checked and planned.
import { dropIdentityCasts, foldConstants, mergeDuplicateQdq } from './cleanup.js';
import { fuseClips } from './clip.js';
import { fuseFloatConvRelu } from './float-conv-relu.js';
import { fuseQdq } from './qdq.js';
import { fuseTransformer } from './transformer.js';

/** Rewrites a decoded graph in place into what the operators run. */
export function optimize(graph) {
  foldConstants(graph);
  dropIdentityCasts(graph);
  mergeDuplicateQdq(graph);
  fuseQdq(graph); // QDQ groups into integer operators; a no-op for QOperator graphs
  fuseClips(graph); // integer Clips after conv / gemm / matmul become the layer's output range
  fuseFloatConvRelu(graph); // a float Conv applies the Relu that alone reads it, in wasm
  fuseTransformer(graph); // onnxruntime's transformer fusions (LayerNorm, Gelu, SkipLayerNorm, FusedMatMul, dynamic int8)
}

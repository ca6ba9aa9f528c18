"""onnxruntime-web's intermediate values of the encoder files, for comparing qwasm node by node.

    build/venv/bin/python tools/transformer/bert_intermediates.py [tests/fixtures/transformer/tiny-bert.json]

onnxruntime-web optimizes a graph before running it, and its fused graph is what decides the bits
(docs/transformer-ops.md). Its intermediate values cannot be read from a default session, so for each file of
the record this script saves the graph onnxruntime (Python) makes at level "extended" (the same fusions: running
that graph unoptimized in onnxruntime-web gives the default outputs byte for byte), adds every node output as a
graph output, and writes it to build/transformer-intermediates/ (with the op type producing each value).
tools/transformer/bert_intermediates_web.mjs then runs those in onnxruntime-web with optimizations disabled and
records a hash of every value and its producer's op type (the data too with --full, into build/, for debugging).
"""
import json
import os
import subprocess
import sys

import onnx
import onnxruntime as ort

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    record_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "tests/fixtures/transformer/tiny-bert.json")
    record = json.load(open(record_path))
    name = os.path.basename(record_path)[: -len(".json")]
    out = os.path.join(REPO, "build/transformer-intermediates", name)
    os.makedirs(out, exist_ok=True)
    for key, entry in record["files"].items():
        src = os.path.join(os.path.dirname(record_path), entry["file"])
        optimized = os.path.join(out, f"{key}-optimized.onnx")
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        so.optimized_model_filepath = optimized
        so.log_severity_level = 3
        ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])
        model = onnx.load(optimized)
        graph = model.graph
        present = {o.name for o in graph.output}
        producers = {o: (f"{n.domain}." if n.domain else "") + n.op_type for n in graph.node for o in n.output if o}
        with open(os.path.join(out, f"{key}-producers.json"), "w") as fh:
            json.dump(producers, fh)
        for node in graph.node:
            for value in node.output:
                if value and value not in present:
                    graph.output.append(onnx.ValueInfoProto(name=value))
                    present.add(value)
        onnx.save(model, os.path.join(out, f"{key}-all-outputs.onnx"))
        print(f"{key}: {len(graph.node)} nodes, {len(present)} values")
    subprocess.run(["node", os.path.join(REPO, "tools/transformer/bert_intermediates_web.mjs"), record_path, out]
                   + sys.argv[2:], check=True, cwd=REPO)


if __name__ == "__main__":
    main()

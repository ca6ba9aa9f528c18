"""The qwasm-export command: export a converted PyTorch quantized model to ONNX for qwasm.

A converted quantized model cannot be pickled whole, so the command imports a function that builds it:
    qwasm-export my_models.py:build -o model.onnx              # build() -> model or (model, example_input)
    qwasm-export package.module:build --shape 1,3,224,224 -o model.onnx --describe
"""
import argparse
import importlib
import importlib.util
import os
import sys

import torch

from .exporter import SUPPORTED_ENGINES, ExportError, __version__, describe, export, semantics_for


def main(argv=None):
    ap = argparse.ArgumentParser(prog="qwasm-export", description=__doc__.split("\n\n")[0])
    ap.add_argument("source", help="'file.py:function' or 'package.module:function' returning the converted "
                                   "quantized model or (model, example_input)")
    ap.add_argument("-o", "--output", required=True, help="ONNX file to write")
    ap.add_argument("--shape", help="example input shape, e.g. 1,3,224,224 (values: zeros)")
    ap.add_argument("--example", help="example input tensor saved with torch.save(tensor)")
    ap.add_argument("--engine", choices=SUPPORTED_ENGINES,
                    help="the engine the model was converted for (default: torch.backends.quantized.engine after "
                         "the build function ran)")
    ap.add_argument("--version", action="version", version="qwasm-export %s (torch %s)" % (__version__,
                                                                                          torch.__version__))
    ap.add_argument("--allow-inexact-lut", action="store_true",
                    help="write tables for ops whose PyTorch results depend on element position")
    ap.add_argument("--describe", action="store_true", help="print the exported graph")
    args = ap.parse_args(argv)
    if args.engine:
        torch.backends.quantized.engine = args.engine
    mod, _, fn = args.source.rpartition(":") if ":" in args.source else (args.source, "", "")
    if mod.endswith(".py"):
        spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(mod))[0], mod)
        module = importlib.util.module_from_spec(spec)
        sys.path.insert(0, os.path.dirname(os.path.abspath(mod)))
        spec.loader.exec_module(module)
    else:
        sys.path.insert(0, os.getcwd())
        module = importlib.import_module(mod)
    if not fn:
        ap.error("name the function: %s:function" % mod)
    r = getattr(module, fn)()
    model, example = r if isinstance(r, tuple) else (r, None)
    if args.example:
        example = torch.load(args.example)
    elif args.shape:
        example = torch.zeros([int(v) for v in args.shape.split(",")])
    if example is None:
        ap.error("give --shape or --example (or a function returning (model, example_input))")
    try:
        exp = export(model, example, args.output, engine=args.engine, allow_inexact_lut=args.allow_inexact_lut)
    except ExportError as e:
        print("qwasm-export: %s" % e, file=sys.stderr)
        return 1
    if args.describe:
        print(describe(exp.model))
    print("wrote %s (%d nodes, %d bytes, semantics %s)" % (args.output, len(exp.model.graph.node),
                                                          os.path.getsize(args.output), semantics_for(exp.engine)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

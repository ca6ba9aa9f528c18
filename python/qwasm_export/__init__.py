"""qwasm-export: PyTorch quantized models to ONNX files that qwasm runs bit-exactly (docs/exporter.md)."""
from .exporter import (SUPPORTED_ENGINES, ExportError, Exported, __version__, cpu_capability, describe, export,
                       quantize_bias, semantics_for, verify)
from .reference import run_reference

__all__ = ["export", "ExportError", "Exported", "run_reference", "verify", "quantize_bias", "semantics_for",
           "describe", "cpu_capability", "SUPPORTED_ENGINES", "__version__"]

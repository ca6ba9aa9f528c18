"""Shared helpers for the golden-data generators (JSON encoding, paths)."""
import json
import math
import os

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(REPO, "tests", "fixtures")


def f32(v):
    """The float32 value nearest to v, as an exact Python float."""
    return float(np.float32(v))


def plain(v):
    """Convert numpy scalars/arrays, tuples and non-finite floats into JSON-safe values.

    NaN and infinities become the strings "NaN", "Infinity", "-Infinity".
    Finite floats stay Python floats (json writes them with repr, which round-trips exactly,
    and keeps -0.0).
    """
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, np.ndarray):
        return [plain(x) for x in v.tolist()]
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        x = float(v)
        if math.isnan(x):
            return "NaN"
        if math.isinf(x):
            return "Infinity" if x > 0 else "-Infinity"
        return x
    return v


def dumps_line(obj):
    return json.dumps(plain(obj), separators=(", ", ": "), allow_nan=False)


def write_fixture(path, header, sections):
    """Write {header..., section: [case, ...]} with one case per line."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    out = ["{"]
    items = [(k, v, False) for k, v in header.items()] + [(k, v, True) for k, v in sections.items()]
    for i, (key, val, is_list) in enumerate(items):
        comma = "," if i + 1 < len(items) else ""
        if not is_list:
            out.append(" %s: %s%s" % (json.dumps(key), dumps_line(val), comma))
            continue
        if not val:
            out.append(" %s: []%s" % (json.dumps(key), comma))
            continue
        out.append(" %s: [" % json.dumps(key))
        for j, case in enumerate(val):
            out.append("  " + dumps_line(case) + ("," if j + 1 < len(val) else ""))
        out.append(" ]" + comma)
    out.append("}")
    text = "\n".join(out) + "\n"
    with open(path, "w") as fh:
        fh.write(text)
    json.loads(text)  # must parse back as strict JSON
    return len(text)

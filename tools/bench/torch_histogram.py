"""Times torch 1.13's HistogramObserver (observe + calculate_qparams) on float32 data from a file.

Called by tools/bench/bench.mjs with the same data qwasm observes; prints one JSON line.
Run with Debian's system python3 (/usr/bin/python3), which has python3-torch.
"""
import json
import sys
import time

import numpy as np
import torch
from torch.ao.quantization.observer import HistogramObserver


def main():
    x = torch.from_numpy(np.fromfile(sys.argv[1], dtype="<f4"))
    times = []
    for _ in range(5):
        obs = HistogramObserver()
        t0 = time.perf_counter()
        obs(x)
        scale, zero_point = obs.calculate_qparams()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(), "median_ms": times[len(times) // 2],
                      "min_ms": times[0], "scale": float(scale), "zero_point": int(zero_point)}))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The machine code V8 generated for qwasm's wasm functions, from the jitdump files it writes with --perf-prof.

Release builds of Chromium print no disassembly (--print-wasm-code gives only sizes), but with --perf-prof their V8
writes every compiled function's bytes to jit-<pid>.dump in the working directory (the Linux perf jitdump format).
Build the wasm with function names so that the records carry them (cmake -DQWASM_WASM_NAMES=ON, with
-DQWASM_WASM_OUT=DIR to keep them apart from dist/), then for example:

  node tools/bench/browser.mjs --filter "gemm 256" --runtimes qwasm --threads 1 --wasm-paths DIR --js-flags --perf-prof
  python3 tools/bench/jitdump.py                      # functions of the last optimized tier, xmm stack moves first
  python3 tools/bench/jitdump.py 4x8c2 > code.txt     # objdump's disassembly of the first function matching 4x8c2

Node writes the same files (node --perf-prof script.mjs), so one function can be compared across the two engines.
"Stack moves" counts vmov instructions between an xmm register and the frame (%rbp): spills and reloads; where they
sit inside a loop they cost a store and a load per iteration. Needs objdump (binutils).
"""
import glob
import re
import struct
import subprocess
import sys
import tempfile

JIT_CODE_LOAD = 0


def records(path):
    """(name, address, code bytes) of every code-load record of one jitdump file."""
    data = open(path, 'rb').read()
    magic, _version, header_size = struct.unpack_from('<III', data, 0)
    if magic != 0x4A695444:
        raise SystemExit(f'{path}: not a jitdump file')
    offset = header_size
    while offset + 16 <= len(data):
        kind, size, _timestamp = struct.unpack_from('<IIQ', data, offset)
        if size == 0 or offset + size > len(data):
            break  # a record the process was still writing
        if kind == JIT_CODE_LOAD:
            _pid, _tid, _vma, address, code_size, _index = struct.unpack_from('<IIQQQQ', data, offset + 16)
            name_start = offset + 56
            name_end = data.index(b'\0', name_start)
            code = data[name_end + 1:name_end + 1 + code_size]
            yield data[name_start:name_end].decode('utf8', 'replace'), address, code
        offset += size


def disassemble(address, code):
    with tempfile.NamedTemporaryFile(suffix='.bin') as f:
        f.write(code)
        f.flush()
        out = subprocess.run(['objdump', '-D', '-b', 'binary', '-mi386:x86-64', f'--adjust-vma={address}', f.name],
                             capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if '\t' in line]


STACK_MOVE = re.compile(r'\bvmov\w*\s+(-?0x[0-9a-f]+\(%rbp\),%xmm\d+|%xmm\d+,-?0x[0-9a-f]+\(%rbp\))')


def main():
    optimized = {}  # name -> (address, code): the last TurboFan / Turboshaft record of each function
    for path in sorted(glob.glob('jit-*.dump')):
        for name, address, code in records(path):
            if name.endswith('-turbofan') or name.endswith('-turboshaft'):
                optimized[name] = (address, code)
    if not optimized:
        raise SystemExit('no optimized wasm functions in ./jit-*.dump (run the engine with --perf-prof here)')
    if len(sys.argv) > 1:
        matches = [n for n in optimized if sys.argv[1] in n]
        if not matches:
            raise SystemExit(f'no function matches {sys.argv[1]!r}')
        address, code = optimized[matches[0]]
        print(f'{matches[0]}: {len(code)} bytes')
        print('\n'.join(disassemble(address, code)))
        return
    rows = []
    for name, (address, code) in optimized.items():
        lines = disassemble(address, code)
        rows.append((sum(1 for line in lines if STACK_MOVE.search(line)), len(lines), name))
    print(f'{"xmm stack moves":>16} {"instructions":>12}  function')
    for moves, count, name in sorted(rows, reverse=True):
        print(f'{moves:>16} {count:>12}  {name}')


if __name__ == '__main__':
    main()

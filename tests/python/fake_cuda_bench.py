#!/usr/bin/python3
"""A stand-in for bench_cuda_bench (bench/cuda/cuda_bench.cu) where there is
no GPU: takes the same arguments and, with --json, writes a results file
shaped as cuda_bench's write_json writes it (the same keys in the same order,
the same number formats) with made-up numbers: a few cases of every kind,
the extra cases (outside the issue's targets) included. Tiny shapes, so that
a PyTorch or CuPy that can use a GPU runs them in no time.
test_torch_cupy_bench.py runs bench/torch_cupy_bench.py on it, and checks
that its case keys are those of write_json's format string.

    fake_cuda_bench.py [--mib 256] [--iters 20] [--warmup 3] [--json FILE] [--quick] [--no-extra]
"""

import argparse
import sys

# (name, kind, dtype, shape, perm, src_shape, src_dtype, dim, num_indices,
#  index_dtype, scalar, extra); the GB/s figures are made up below.
CASES = [
    ("2-D transpose fp32", "permute", "float32", [64, 32], [1, 0], [], "", -1, 0, "", 0, False),
    ("4-D NCHW->NHWC (0,2,3,1) fp32", "permute", "float32", [2, 8, 4, 4], [0, 2, 3, 1], [], "",
     -1, 0, "", 0, False),
    ("2-D transpose fp16", "permute", "float16", [128, 32], [1, 0], [], "", -1, 0, "", 0, False),
    ("copy_into broadcast [1,C]->[R,C] fp32", "copy_broadcast", "float32", [16, 64], [], [1, 64],
     "float32", -1, 0, "", 0, False),
    ("copy_into f32->bf16", "copy_convert", "bfloat16", [16, 64], [], [16, 64], "float32",
     -1, 0, "", 0, False),
    ("in-place add on a transposed view fp32", "add_transposed", "float32", [16, 64], [], [64, 16],
     "float32", -1, 0, "", 0, False),
    ("index_select 1-D, 100000 int64 idx", "index_select", "float32", [100000], [], [1000000],
     "float32", 0, 100000, "int64", 0, False),
    ("index_select rows of 256, 10000 int64 idx", "index_select", "float32", [10000, 256], [],
     [100000, 256], "float32", 0, 10000, "int64", 0, False),
    # extra cases
    ("2-D transpose uint8", "permute", "uint8", [256, 32], [1, 0], [], "", -1, 0, "", 0, True),
    ("4-D NCHW->NHWC (0,2,3,1) bool", "permute", "bool", [8, 8, 4, 4], [0, 2, 3, 1], [], "",
     -1, 0, "", 0, True),
    ("image [8,3,H,W] NCHW->NHWC uint8", "permute", "uint8", [8, 3, 20, 20], [0, 2, 3, 1], [], "",
     -1, 0, "", 0, True),
    ("2-D transpose bf16", "permute", "bfloat16", [128, 32], [1, 0], [], "", -1, 0, "", 0, True),
    ("copy_into f32->f16", "copy_convert", "float16", [16, 64], [], [16, 64], "float32",
     -1, 0, "", 0, True),
    ("copy_into f16->f32", "copy_convert", "float32", [16, 64], [], [16, 64], "float16",
     -1, 0, "", 0, True),
    ("copy_into bf16->f32", "copy_convert", "float32", [16, 64], [], [16, 64], "bfloat16",
     -1, 0, "", 0, True),
    ("in-place add on a transposed view bf16", "add_transposed", "bfloat16", [16, 128], [],
     [128, 16], "bfloat16", -1, 0, "", 0, True),
    ("in-place scalar add t += 1.5 fp32", "scalar_add", "float32", [16, 64], [], [], "",
     -1, 0, "", 1.5, True),
    ("in-place scalar add t += 1.5 fp16", "scalar_add", "float16", [16, 128], [], [], "",
     -1, 0, "", 1.5, True),
]


def dims(v):
    return "[" + ",".join(str(x) for x in v) + "]"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=float, default=None)
    ap.add_argument("--iters", type=int, default=None)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-extra", action="store_true")
    a = ap.parse_args()
    # As bench_cuda_bench: --quick changes the defaults, explicit values win.
    a.mib = a.mib if a.mib is not None else 16 if a.quick else 256
    a.iters = a.iters if a.iters is not None else 5 if a.quick else 20
    print("device: fake (no GPU: made-up numbers), %g MiB per tensor, median of %d iterations"
          % (a.mib, a.iters))
    rows = []
    for i, (name, kind, dtype, shape, perm, src_shape, src_dtype, dim, n, idt, scalar,
            extra) in enumerate(CASES):
        if extra and a.no_extra:
            continue
        gbps, copy = 1000.0 + 10 * i, 2000.0
        ms = 0.05 + 0.01 * i if kind == "index_select" else 0.0
        rows.append(
            "    {\"name\": \"%s\", \"kind\": \"%s\", \"dtype\": \"%s\", \"shape\": %s, "
            "\"perm\": %s, \"src_shape\": %s, \"src_dtype\": \"%s\", \"gbps\": %.2f, "
            "\"copy_gbps\": %.2f, \"ratio\": %.4f, \"checked\": %s, \"dim\": %d, "
            "\"num_indices\": %d, \"index_dtype\": \"%s\", \"ms\": %.6f, "
            "\"scalar\": %g, \"extra\": %s}"
            % (name, kind, dtype, dims(shape), dims(perm), dims(src_shape), src_dtype, gbps, copy,
               gbps / copy, "true", dim, n, idt, ms, scalar, "true" if extra else "false"))
        print("%-44s %-30s %9.1f %9.1f %7.3f ok" % (name, dims(shape), gbps, copy, gbps / copy))
    if a.json:
        with open(a.json, "w") as f:
            f.write("{\n  \"device\": \"%s\", \"iters\": %d, \"mib\": %g,\n  \"cases\": [\n"
                    % ("fake device", a.iters, a.mib))
            f.write(",\n".join(rows) + "\n")
            f.write("  ],\n  \"allocator\": [\n")
            al = [(4096, 20.0, 60.0, 5000.0), (1 << 20, 20.0, 60.0, 9000.0),
                  (64 << 20, 20.0, 60.0, 90000.0)]
            f.write(",\n".join("    {\"bytes\": %d, \"cached_ns\": %.1f, \"api_ns\": %.1f, "
                               "\"cuda_ns\": %.1f}" % r for r in al) + "\n")
            f.write("  ]\n}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

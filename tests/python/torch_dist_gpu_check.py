#!/usr/bin/env python3
"""torch.distributed all_reduce of stridemem CUDA tensors in place with NCCL,
through DLPack: one process per GPU (on a one-GPU machine, a single rank: the
values are its own, and the zero-copy, in-place and refusal checks all run).
The same checks as test_torch_distributed.py (gloo on the CPU), from
_torch_dist.py, plus bfloat16.

    STRIDEMEM_LIB=build-cuda/libstridemem.so PYTHONPATH=bindings/python \\
        python3 tests/python/torch_dist_gpu_check.py [--backend nccl] [--world N]

--backend gloo --device cpu runs the CPU variant (what ctest runs as
test_torch_distributed). Exit 0 when every check passed, 1 on a failure, 77
(with the reason) when there is no usable GPU: a CUDA build of libstridemem,
torch with CUDA, and NCCL in torch.distributed are all needed.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _util import import_stridemem  # noqa: E402

sm = import_stridemem()


def why_not_cuda(backend):
    """None when this machine can run the check on CUDA, else the reason."""
    try:
        import torch
        import torch.distributed as dist
    except Exception as e:
        return "cannot import torch.distributed: %s" % e
    if sm.cuda_device_count() == 0:
        return ("libstridemem (%s) sees no CUDA device (sm_cuda_device_count() == 0): a CPU "
                "build, or no usable GPU" % sm.LIBRARY_PATH)
    if not torch.cuda.is_available():
        return "torch %s has no usable CUDA" % torch.__version__
    if backend == "nccl" and not dist.is_nccl_available():
        return "torch %s was built without NCCL" % torch.__version__
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", choices=("nccl", "gloo"), default="nccl")
    ap.add_argument("--device", choices=("cuda", "cpu"), default=None,
                    help="default: cuda for nccl, cpu for gloo")
    ap.add_argument("--world", type=int, default=None,
                    help="ranks (default: one per GPU for cuda, 4 for cpu)")
    args = ap.parse_args()
    device = args.device or ("cuda" if args.backend == "nccl" else "cpu")
    if args.backend == "nccl" and device != "cuda":
        ap.error("NCCL reduces CUDA tensors only: --device cuda")
    if device == "cuda":
        why = why_not_cuda(args.backend)
        if why:
            print("NOT RUN: torch.distributed %s on CUDA: %s" % (args.backend, why))
            return 77
        import torch
        world = args.world or torch.cuda.device_count()
        if world > min(torch.cuda.device_count(), sm.cuda_device_count()):
            ap.error("--world %d: one rank per GPU, and there are %d" % (
                world, min(torch.cuda.device_count(), sm.cuda_device_count())))
    else:
        world = args.world or 4
    import _torch_dist
    return _torch_dist.run(args.backend, device, world).finish()


if __name__ == "__main__":
    sys.exit(main())

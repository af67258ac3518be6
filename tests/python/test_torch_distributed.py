"""torch.distributed all_reduce of stridemem tensors in place, through DLPack:
four processes, gloo on the CPU (the checks are in _torch_dist.py; the GPU
session runs the same with NCCL: torch_dist_gpu_check.py)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _util import import_stridemem  # noqa: E402

import_stridemem()
try:
    import torch.distributed as dist
except Exception as e:  # CI installs python3-torch: missing torch is a failure
    print("FAIL: cannot import torch.distributed (%s); install python3-torch "
          "(scripts/setup-deps.sh does)" % e)
    print("test_torch_distributed: 0 passed, 1 failed, 0 skipped")
    sys.exit(1)

import _torch_dist  # noqa: E402

if __name__ == "__main__":
    if not dist.is_available() or not dist.is_gloo_available():
        print("FAIL: this torch has no torch.distributed with gloo")
        sys.exit(1)
    sys.exit(_torch_dist.run("gloo", "cpu", 4).finish())

#!/usr/bin/python3
"""A differential run asked for CUDA can never read as a pass without a GPU:
with STRIDEMEM_TEST_DEVICE=cuda, test_differential.py and
test_torch_differential.py must exit 77 (skipped; 1 had the CPU part failed)
where the library sees no usable GPU, and 0 where it does. Both run here with
a few chains."""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _util import Results, import_stridemem, stridemem_gpu_unusable  # noqa: E402

sm = import_stridemem()
R = Results("test_gpu_request_without_gpu")


def torch_gpu_unusable():
    try:
        import torch
    except ImportError as e:
        return "no torch: %s" % e
    return None if torch.cuda.is_available() else "torch.cuda.is_available() is False"


# What each script needs to run on the GPU: the library's device, and for the
# PyTorch differential also torch's.
mine = stridemem_gpu_unusable(sm)
needs = {"test_differential.py": mine,
         "test_torch_differential.py": mine or torch_gpu_unusable()}
env = dict(os.environ, STRIDEMEM_TEST_DEVICE="cuda", STRIDEMEM_DIFF_CHAINS="20",
           STRIDEMEM_DIFF_LARGE="1", STRIDEMEM_TORCH_CHAINS="20")
for script, why in sorted(needs.items()):
    want = 0 if why is None else 77
    p = subprocess.run([sys.executable, os.path.join(HERE, script)], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    tail = "\n".join(p.stdout.splitlines()[-6:])
    R.equal(p.returncode, want, "%s with STRIDEMEM_TEST_DEVICE=cuda (%s); its last lines:\n%s"
            % (script, "a usable GPU" if why is None else why, tail))
    if want == 77:
        R.check("no usable GPU" in p.stdout, "%s says why it skipped:\n%s" % (script, tail))
sys.exit(R.finish())

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
from _util import Results, import_stridemem  # noqa: E402

sm = import_stridemem()
R = Results("test_gpu_request_without_gpu")


def gpu_usable():
    if sm.cuda_device_count() <= 0:
        return False
    try:
        sm.zeros(1, device="cuda:0").close()
        return True
    except sm.StrideMemError:
        return False


want = 0 if gpu_usable() else 77
env = dict(os.environ, STRIDEMEM_TEST_DEVICE="cuda", STRIDEMEM_DIFF_CHAINS="20",
           STRIDEMEM_DIFF_LARGE="1", STRIDEMEM_TORCH_CHAINS="20")
for script in ("test_differential.py", "test_torch_differential.py"):
    p = subprocess.run([sys.executable, os.path.join(HERE, script)], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    tail = "\n".join(p.stdout.splitlines()[-6:])
    R.equal(p.returncode, want, "%s with STRIDEMEM_TEST_DEVICE=cuda (%s GPU); its last lines:\n%s"
            % (script, "a usable" if want == 0 else "no usable", tail))
    if want == 77:
        R.check("no usable GPU" in p.stdout, "%s says why it skipped:\n%s" % (script, tail))
sys.exit(R.finish())

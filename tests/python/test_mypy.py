#!/usr/bin/python3
"""mypy (Debian's python3-mypy) accepts the package, examples/python and a
typed snippet of what users write: t.reshape(6).numel, the (tensor, copied)
pair of return_copied=True, stride(dim) an int, size an int. The snippet's
`# type: ignore[attr-defined]` line must be needed: with warn_unused_ignores
(bindings/python/pyproject.toml) a return type that degrades to Any fails,
and one that degrades to a Union fails with union-attr. Exit 77 (skipped)
when mypy is not installed."""

import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PY = os.path.join(ROOT, "bindings", "python")

SNIPPET = '''\
from typing import Tuple

import stridemem as sm

t = sm.zeros(2, 3)
n: int = t.reshape(6).numel
r, copied = t.reshape(6, return_copied=True)
pair: Tuple[sm.Tensor, bool] = t.reshape(-1, return_copied=True)
m: int = r.numel + t.contiguous().numel + t.contiguous("channels_last").ndim
c, c_copied = t.contiguous("contiguous", True)
d: int = t.to("cpu").numel + t.to(dtype="float64").numel
e, e_copied = t.to(return_copied=True)
f, f_copied = t.to("cpu", "int32", True)
flags: bool = copied and c_copied and e_copied and f_copied
s0: int = t.stride(0)
strides: Tuple[int, ...] = t.stride()
size: int = t.size
same: bool = sm.equal(t, t.clone())
x: int = sm.full((2,), 1).numel + sm.tensor([0.5]).numel + sm.arange_n(0, 1, 3).numel
# A pair has no numel: mypy must know (error code attr-defined, not union-attr).
bad = t.reshape(6, return_copied=True).numel  # type: ignore[attr-defined]
'''


def main():
    probe = subprocess.run([sys.executable, "-c", "import mypy"], capture_output=True)
    if probe.returncode != 0:
        print("SKIP: mypy is not installed for %s (Debian: apt-get install python3-mypy; "
              "scripts/setup-deps.sh installs it)" % sys.executable)
        print("test_mypy: 0 passed, 0 failed, 1 skipped")
        return 77
    cache = os.path.join(tempfile.gettempdir(), "stridemem-mypy-cache-%d" % os.getuid())
    with tempfile.TemporaryDirectory() as tmp:
        snippet = os.path.join(tmp, "typed_use.py")
        with open(snippet, "w") as f:
            f.write(SNIPPET)
        env = dict(os.environ, MYPYPATH=PY)
        cmd = [sys.executable, "-m", "mypy", "--config-file", os.path.join(PY, "pyproject.toml"),
               "--cache-dir", cache, "--no-error-summary", "--show-error-codes",
               os.path.join(PY, "stridemem"), os.path.join(ROOT, "examples", "python"), snippet]
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    out = (r.stdout + r.stderr).strip()
    if r.returncode != 0:
        print(out)
        print("FAIL: mypy exited %d over the package, examples/python and the typed "
              "snippet (command: %s)" % (r.returncode, " ".join(cmd)))
        print("test_mypy: 0 passed, 1 failed, 0 skipped")
        return 1
    print("test_mypy: 1 passed, 0 failed, 0 skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())

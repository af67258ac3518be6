"""Runs the first ```python block of bindings/python/README.md and checks
what its comments claim, so the binding's README stays true."""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
README = os.path.join(HERE, "..", "..", "bindings", "python", "README.md")


def main():
    text = open(README, encoding="utf-8").read()
    m = re.search(r"```python\n(.*?)```", text, re.S)
    if not m:
        print("0 passed, 1 failed")
        print("no ```python block in bindings/python/README.md")
        return 1
    ns = {}
    exec(compile(m.group(1), README, "exec"), ns)
    import numpy as np
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    t, v, copied, a = ns["t"], ns["v"], ns["copied"], ns["a"]
    check(t.same_storage(v), "v is a view of t")
    check(copied is True, "reshape of the permuted, flipped view copies")
    ref_view = np.arange(24, dtype=np.float32).reshape(2, 3, 4).transpose(2, 0, 1)[::-1, :, 1:]
    ref = ref_view + 1
    check(np.array_equal(a, ref), "values after the in-place add match NumPy")
    check(tuple(v.shape) == ref.shape, "shape matches NumPy")
    check(tuple(v.strides) == tuple(s // 4 for s in ref_view.strides), "strides match NumPy")
    n_checks = 5
    print("%d passed, %d failed" % (n_checks - len(failures), len(failures)))
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

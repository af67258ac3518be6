#!/usr/bin/python3
"""CPU smoke test of bench/torch_cupy_bench.py (stridemem against PyTorch and
CuPy on a GPU) with no GPU.

1. Runs the script with --bench pointing at fake_cuda_bench.py (same
   arguments as bench_cuda_bench, writes a results file shaped as its
   write_json does, with a few cases of every kind, the extra ones included)
   and checks: exit status 0; the table lists every case, the issue's cases
   above the "extra cases" heading and the extra ones below it; PyTorch and
   CuPy are NOT RUN when this interpreter cannot use them on a GPU (here:
   Debian's CPU-only torch, no CuPy), and then the PyTorch targets say NOT
   RUN; its --json keeps our results as the benchmark wrote them. With
   --no-extra, passed on to the benchmark, no extra case and no extra line.
2. The fake's case keys are the keys of write_json's format string in
   bench/cuda/cuda_bench.cu (so the fake cannot drift from the real one).
3. torch_target_lines on made-up PyTorch figures: the targets count only the
   issue's cases; an extra case slower than PyTorch is listed on its own line
   and never fails the target; results without the "extra" field (older
   JSON) count every case.
4. The runners' dtype tables name every dtype the cases use (PyTorch's with
   the CPU torch when there is one; CuPy's with NumPy standing in for cupy:
   bfloat16 must raise NotImplementedError, which the script reports as n/a),
   and each runner's case() runs every fake case on the CPU (PyTorch's
   "cuda" tensors made on the CPU, NumPy doing CuPy's calls, one call each).
   None of this measures or checks anything on a GPU.
"""

import json
import os
import re
import stat
import subprocess
import sys
import tempfile
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _util import Results  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(REPO, "bench", "torch_cupy_bench.py")
FAKE = os.path.join(HERE, "fake_cuda_bench.py")
CUDA_BENCH = os.path.join(REPO, "bench", "cuda", "cuda_bench.cu")
R = Results("test_torch_cupy_bench")

sys.path.insert(0, os.path.join(REPO, "bench"))
sys.path.insert(0, HERE)
import torch_cupy_bench as tcb  # noqa: E402
import fake_cuda_bench as fake  # noqa: E402

KINDS = {"permute", "copy_broadcast", "copy_convert", "add_transposed", "scalar_add", "index_select"}


def gpu_usable(module):
    """Whether this interpreter can run `module` (torch, cupy) on a GPU, asked
    in a child process, as the script itself finds out."""
    probe = {"torch": "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)",
             "cupy": "import cupy; cupy.cuda.runtime.getDeviceCount()"}[module]
    return subprocess.run([sys.executable, "-c", probe], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, timeout=120).returncode == 0


def run_script(no_extra=False):
    flags = ["--quick"] + (["--no-extra"] if no_extra else [])
    what = " ".join(flags)
    with tempfile.TemporaryDirectory() as tmp:
        # A wrapper, so the fake runs under this interpreter whatever the
        # checkout did to its mode bits.
        bench = os.path.join(tmp, "bench_cuda_bench")
        with open(bench, "w") as f:
            f.write("#!/bin/sh\nexec '%s' '%s' \"$@\"\n" % (sys.executable, FAKE))
        os.chmod(bench, os.stat(bench).st_mode | stat.S_IXUSR)
        out = os.path.join(tmp, "out.json")
        p = subprocess.run([sys.executable, SCRIPT, "--bench", bench, "--json", out] + flags,
                           capture_output=True, text=True, timeout=600)
        if not R.check(p.returncode == 0, "%s: the script exited %d\nstdout:\n%s\nstderr:\n%s"
                       % (what, p.returncode, p.stdout, p.stderr)):
            return
        with open(out) as f:
            saved = json.load(f)
        fake_json = os.path.join(tmp, "fake.json")
        subprocess.run([bench, "--json", fake_json] + flags, check=True, stdout=subprocess.DEVNULL)
        with open(fake_json) as f:
            want = json.load(f)
    text = p.stdout
    cases = want["cases"]
    # --quick alone passes no sizes on: the benchmark's quick defaults apply.
    first = text.splitlines()[0] if text else ""
    R.check("--mib" not in first and "--iters" not in first,
            "%s: sizes passed on though none were asked for: %r" % (what, first))
    R.check("16 MiB per tensor, median of 5 iterations" in text,
            "%s: not the quick defaults:\n%s" % (what, text[:400]))
    R.equal(saved["ours"], want, "%s: --json: our results as the benchmark wrote them" % what)
    if no_extra:
        R.check(cases and not any(c["extra"] for c in cases), "--no-extra: extra cases in %r" % cases)
        R.check("--no-extra" in text.splitlines()[0], "--no-extra not passed on: %r" % text.splitlines()[0])
        R.check("extra cases" not in text, "--no-extra: the output mentions extra cases:\n%s" % text)
        return
    R.equal({c["kind"] for c in cases}, KINDS, "the fake covers every kind")
    R.check(any(c["extra"] for c in cases) and not all(c["extra"] for c in cases),
            "the fake has both the issue's cases and extra ones")

    # The comparison table: after its header line (the fake's own output,
    # echoed above it, names the cases too).
    lines = text.splitlines()
    head = [i for i, l in enumerate(lines) if l.startswith("case") and "ours GB/s" in l]
    if not R.check(len(head) == 1, "one comparison table header, got %d:\n%s" % (len(head), text)):
        return
    table = lines[head[0] + 1:]
    sep = [i for i, l in enumerate(table) if l.startswith("extra cases (not in the issue's targets)")]
    if not R.check(len(sep) == 1, "one extra-cases heading in the table:\n%s" % text):
        return
    for c in cases:
        part = table[sep[0] + 1:] if c["extra"] else table[:sep[0]]
        R.check(any(l.startswith(c["name"] + " ") for l in part),
                "table: %r not listed %s the extra heading:\n%s"
                % (c["name"], "below" if c["extra"] else "above", text))

    torch_gpu, cupy_gpu = gpu_usable("torch"), gpu_usable("cupy")
    for name, usable in (("torch", torch_gpu), ("cupy", cupy_gpu)):
        said = [l for l in lines if l.startswith("NOT RUN: %s:" % name)]
        if usable:
            R.check(not said and ("ours/" + name) in lines[head[0]],
                    "%s can use a GPU here: want its column, got:\n%s" % (name, text))
        else:
            R.check(len(said) == 1, "%s cannot use a GPU here: want one 'NOT RUN: %s:' line:\n%s"
                    % (name, name, text))
    if torch_gpu:
        R.check("targets against PyTorch (quick run" in text, "torch targets missing:\n%s" % text)
    else:
        R.check("targets against PyTorch: NOT RUN" in text,
                "want 'targets against PyTorch: NOT RUN':\n%s" % text)
    if not torch_gpu and not cupy_gpu:
        print("(torch and CuPy NOT RUN here, as expected without a GPU)")


def check_keys_match_write_json():
    with open(CUDA_BENCH) as f:
        src = f.read()
    body = src[src.index("void write_json("):]
    body = body[:body.index("allocator")]
    keys = re.findall(r'\\"(\w+)\\": ', body)
    case_keys = keys[keys.index("name"):]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "f.json")
        subprocess.run([sys.executable, FAKE, "--json", path], check=True, stdout=subprocess.DEVNULL)
        with open(path) as f:
            data = json.load(f)
    R.check("extra" in case_keys and "scalar" in case_keys,
            "write_json's case keys %r lack extra/scalar" % case_keys)
    for c in data["cases"]:
        R.equal(list(c), case_keys, "fake case %r: keys in write_json's order" % c["name"])
    R.equal(list(data)[:3], ["device", "iters", "mib"], "fake: top-level keys")


def check_target_lines():
    cases = [dict(zip(("name", "kind", "dtype", "shape", "perm", "src_shape", "src_dtype", "dim",
                       "num_indices", "index_dtype", "scalar", "extra"), c[:12]))
             for c in fake.CASES]
    for c in cases:
        c["gbps"] = 100.0
        c["ms"] = 0.1 if c["kind"] == "index_select" else 0.0
    orig = [c for c in cases if not c["extra"]]
    extra = [c for c in cases if c["extra"]]

    def lines_for(torch_gbps, cs=cases, quick=True):
        results = {("torch", c["name"]): torch_gbps(c) for c in cs}
        times = {("torch", c["name"]): 0.08 for c in cs if c["kind"] == "index_select"}
        return tcb.torch_target_lines(cs, results, times, quick)

    # PyTorch at half our speed everywhere: every target met.
    out = lines_for(lambda c: 50.0)
    R.check(any(l.startswith("  PASS never slower") for l in out), "all faster: %r" % out)
    R.check(any(l.startswith("  FAIL >= 3x") for l in out), "2x is not 3x: %r" % out)
    R.check(any(l.startswith("  PASS index_select of 10^6") for l in out), "index_select: %r" % out)
    R.check(out[-1] == "extra cases (not part of the issue's target) slower than PyTorch: none of %d"
            % len(extra), "extra line: %r" % out[-1])
    # An extra case slower than PyTorch: the target still passes; the extra line names it.
    slow = extra[0]["name"]
    out = lines_for(lambda c: 200.0 if c["name"] == slow else 25.0)
    R.check(any(l.startswith("  PASS never slower") for l in out), "extra slower: %r" % out)
    R.check(any(l.startswith("  PASS >= 3x") for l in out), "4x: %r" % out)
    R.check(slow in out[-1] and "0.50x" in out[-1] and "not part of the issue's target" in out[-1],
            "extra line: %r" % out[-1])
    R.check(not any(slow in l for l in out[:-1]), "%r only on the extra line: %r" % (slow, out))
    # One of the copy cases slower: FAIL naming it, and not the extras.
    bad = orig[1]["name"]
    out = lines_for(lambda c: 200.0 if c["name"] in (bad, slow) else 25.0)
    fail = [l for l in out if l.startswith("  FAIL never slower")]
    R.check(len(fail) == 1 and bad in fail[0] and slow not in fail[0], "original slower: %r" % out)
    # A case PyTorch failed on (a string) counts for nothing.
    out = lines_for(lambda c: "n/a (no bfloat16)" if c["dtype"] == "bfloat16" else 25.0)
    R.check(any(l.startswith("  PASS never slower") for l in out), "n/a cases: %r" % out)
    # Older JSON, no "extra" field: every case counts, no extra line.
    old = [{k: v for k, v in c.items() if k != "extra"} for c in cases]
    out = lines_for(lambda c: 200.0 if c["name"] == slow else 25.0, cs=old)
    R.check(any(l.startswith("  FAIL never slower") and slow in l for l in out), "old JSON: %r" % out)
    R.check(not any(l.startswith("extra cases") for l in out), "old JSON, no extra line: %r" % out)
    # Full size: the index_select target wants 10^6 indices, which these lack.
    out = lines_for(lambda c: 25.0, quick=False)
    R.check(any(l.startswith("  NOT RUN index_select") for l in out), "full size: %r" % out)


def check_dtype_tables():
    dtypes = {c[2] for c in fake.CASES} | {c[6] for c in fake.CASES if c[6]}
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        R.skip("TorchRunner.dtype", "no torch here: %s" % e)
    else:
        r = tcb.TorchRunner.__new__(tcb.TorchRunner)
        r.t = torch
        for d in sorted(dtypes):
            R.check(str(r.dtype(d)) == "torch." + d, "TorchRunner.dtype(%r) = %r" % (d, r.dtype(d)))
    import numpy as np
    r = tcb.CupyRunner.__new__(tcb.CupyRunner)
    r.cp = types.SimpleNamespace(float32=np.float32, float16=np.float16, uint8=np.uint8, bool_=np.bool_)
    for d in sorted(dtypes - {"bfloat16"}):
        R.check(np.dtype(r.dtype(d)).name == d, "CupyRunner.dtype(%r) = %r" % (d, r.dtype(d)))
    try:
        r.dtype("bfloat16")
        R.fail("CupyRunner.dtype('bfloat16') should raise NotImplementedError")
    except NotImplementedError:
        R.ok()


def fake_cases():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "f.json")
        subprocess.run([sys.executable, FAKE, "--quick", "--json", path], check=True,
                       stdout=subprocess.DEVNULL)
        with open(path) as f:
            return json.load(f)["cases"]


def check_runners_on_cpu():
    """Each runner's case() on every fake case, on the CPU: PyTorch with its
    "cuda" tensors made on the CPU, CuPy's calls done by NumPy; timing is one
    call. Catches a kind or dtype a runner cannot do (a bfloat16 case in CuPy
    must raise NotImplementedError: the script prints it as n/a)."""
    import numpy as np
    cases = fake_cases()
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        R.skip("TorchRunner.case on the CPU", "no torch here: %s" % e)
        torch = None
    if torch is not None:
        def on_cpu(f):
            def g(*a, **k):
                k["device"] = "cpu"
                return f(*a, **k)
            return g
        t = types.SimpleNamespace(**{k: getattr(torch, k) for k in dir(torch) if not k.startswith("__")})
        t.rand, t.randint, t.empty = on_cpu(torch.rand), on_cpu(torch.randint), on_cpu(torch.empty)
        r = tcb.TorchRunner.__new__(tcb.TorchRunner)
        r.t = t
        r.time_ms = lambda fn: (fn(), 1.0)[1]
        for c in cases:
            try:
                g = r.case(c)
                R.check(g > 0, "TorchRunner.case(%r) on the CPU: %r GB/s" % (c["name"], g))
            except Exception as e:  # noqa: BLE001
                R.fail("TorchRunner.case(%r) on the CPU raised %s: %s" % (c["name"], type(e).__name__, e))
    rnd = types.SimpleNamespace(
        random=lambda shape, dtype: np.random.random(shape).astype(dtype),
        randint=lambda lo, hi, size, dtype=np.int64: np.random.randint(lo, hi, size=size, dtype=dtype))
    cp = types.SimpleNamespace(float32=np.float32, float16=np.float16, uint8=np.uint8, bool_=np.bool_,
                               int64=np.int64, random=rnd, ascontiguousarray=np.ascontiguousarray,
                               copyto=np.copyto, empty=np.empty, take=np.take)
    r = tcb.CupyRunner.__new__(tcb.CupyRunner)
    r.cp = cp
    r.time_ms = lambda fn: (fn(), 1.0)[1]
    for c in cases:
        bf16 = "bfloat16" in (c["dtype"], c["src_dtype"])
        try:
            g = r.case(c)
            R.check(g > 0 and not bf16, "CupyRunner.case(%r) with NumPy: %r GB/s" % (c["name"], g))
        except NotImplementedError as e:
            R.check(bf16, "CupyRunner.case(%r): NotImplementedError %s" % (c["name"], e))
        except Exception as e:  # noqa: BLE001
            R.fail("CupyRunner.case(%r) with NumPy raised %s: %s" % (c["name"], type(e).__name__, e))


def main():
    R.run("run_script", run_script)
    R.run("run_script --no-extra", run_script, True)
    R.run("check_runners_on_cpu", check_runners_on_cpu)
    R.run("check_keys_match_write_json", check_keys_match_write_json)
    R.run("check_target_lines", check_target_lines)
    R.run("check_dtype_tables", check_dtype_tables)
    return R.finish()


if __name__ == "__main__":
    sys.exit(main())

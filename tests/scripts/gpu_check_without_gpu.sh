#!/usr/bin/env bash
# scripts/gpu-check.sh where no GPU is usable (CI): every GPU step must fail
# with "no usable GPU: <why>" in its summary, and the script must exit 1.
# On a machine with a GPU this says so and exits 77 (ctest: skipped), since
# there gpu-check.sh runs the real steps (and this test inside them).
#
# First, on any machine: the bindings step's check of the Rust CUDA tests'
# log (`gpu-check.sh rust-verdict`) passes only the summary of a run in
# which every test of bindings/rust/tests/cuda.rs ran and passed.
set -u
root="$1"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
fail=0
n="$(grep -cE '^[[:space:]]*#\[test\]' "$root/bindings/rust/tests/cuda.rs")"
[ "$n" -gt 0 ] || { echo "FAIL: no #[test] found in bindings/rust/tests/cuda.rs"; exit 1; }
# verdict WANT_RC WHAT SUMMARY_LINE
verdict() {
  mkdir -p "$out/v"
  printf 'running %s tests\n%s\n' "$n" "$3" >"$out/v/rust.log"
  "$root/scripts/gpu-check.sh" rust-verdict "$out/v/rust.log" >"$out/v/verdict" 2>&1
  local rc=$?
  [ "$rc" -eq "$1" ] || { echo "FAIL: rust-verdict on $2: exit $rc, want $1:"; cat "$out/v/verdict"; fail=1; }
}
tail_="0 measured; 0 filtered out; finished in 0.50s"
verdict 0 "every test ran and passed" "test result: ok. $n passed; 0 failed; 0 ignored; $tail_"
verdict 1 "a run without --ignored" "test result: ok. 0 passed; 0 failed; $n ignored; $tail_"
verdict 1 "a run without a GPU" "test result: FAILED. 0 passed; $n failed; 0 ignored; $tail_"
verdict 1 "a program with one test fewer" "test result: ok. $((n - 1)) passed; 0 failed; 0 ignored; $tail_"
verdict 1 "a program with one test more" "test result: ok. $((n + 1)) passed; 0 failed; 0 ignored; $tail_"
verdict 1 "a run that left a test ignored" "test result: ok. $n passed; 0 failed; 1 ignored; $tail_"
verdict 1 "a program that crashed" "thread 'main' panicked"
[ "$fail" -eq 0 ] && echo "rust-verdict: 7 made-up logs judged as they should be"

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  echo "a GPU is visible here: scripts/gpu-check.sh runs for real on this machine"
  [ "$fail" -eq 0 ] || exit 1
  exit 77
fi
steps=(tests diff sanitize dlpack bindings bench)
"$root/scripts/gpu-check.sh" "$out" "${steps[@]}" >"$out/stdout" 2>&1
rc=$?
[ "$rc" -eq 1 ] || { echo "FAIL: exit $rc, want 1"; fail=1; }
/usr/bin/env python3 - "$out/summary.json" "${steps[@]}" <<'PY' || fail=1
import json, sys
doc = json.load(open(sys.argv[1]))
bad = 0
for s in sys.argv[2:]:
    r = doc["steps"].get(s)
    if not r or r["status"] != "FAIL" or not r["detail"].startswith("no usable GPU: "):
        print("FAIL: step %s: %r" % (s, r)); bad = 1
if doc.get("ok") is not False:
    print("FAIL: summary ok = %r" % doc.get("ok")); bad = 1
print("%d steps each said 'no usable GPU'" % (len(sys.argv) - 2) if not bad else "")
sys.exit(bad)
PY
grep -q "no usable GPU" "$out/summary.txt" || { echo "FAIL: summary.txt names no reason"; fail=1; }
exit $fail

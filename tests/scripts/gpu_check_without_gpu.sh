#!/usr/bin/env bash
# scripts/gpu-check.sh where no GPU is usable (CI): every GPU step must fail
# with "no usable GPU: <why>" in its summary, and the script must exit 1.
# On a machine with a GPU this says so and exits 77 (ctest: skipped), since
# there gpu-check.sh runs the real steps (and this test inside them).
set -u
root="$1"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  echo "a GPU is visible here: scripts/gpu-check.sh runs for real on this machine"
  exit 77
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
steps=(tests diff sanitize dlpack bindings bench)
"$root/scripts/gpu-check.sh" "$out" "${steps[@]}" >"$out/stdout" 2>&1
rc=$?
fail=0
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

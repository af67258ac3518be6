#!/usr/bin/env bash
# The GPU proof in one command (issue 10): run from the repository root on a
# machine with an NVIDIA GPU.
#
#   scripts/gpu-check.sh OUTDIR [STEP...]      STEP: build tests diff sanitize
#                                               dlpack bindings bench (default: all)
#   scripts/gpu-check.sh pack                  on the development machine: fill
#                                               .gpu-deps/ (see below)
#   STRIDEMEM_CUDA_ARCHITECTURES=90-real scripts/gpu-check.sh OUTDIR ...
#                                               build for that GPU only (faster)
#   scripts/gpu-check.sh rust-verdict LOG      the bindings step's check of a log
#                                               of the Rust CUDA tests, alone
#
# Each step is timed, its log goes to OUTDIR/<step>.log, and its result is
# merged into OUTDIR/summary.json and OUTDIR/summary.txt, so a step that ran
# out of time can be re-run alone (`gpu-check.sh OUT sanitize`). Every step
# but `build` needs a usable GPU and says "no usable GPU: <why>" (exit 1)
# without one; a CUDA test that skips is a failure here, never a pass.
#
# The GPU machine has no network: what it lacks (GoogleTest's sources, the
# DLPack header, the Rust crate's CUDA test program built against this tree)
# travels in .gpu-deps/, which `pack` fills on a machine that has them.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
deps="$root/.gpu-deps"
bld="${STRIDEMEM_GPU_BUILD:-$root/build-cuda}"
all_steps=(build tests diff sanitize dlpack bindings bench)

die() { echo "gpu-check: $*" >&2; exit 2; }

# rust_cuda_verdict LOG: the test program's summary must say that every test
# of bindings/rust/tests/cuda.rs ran and passed, "ok. N passed; 0 failed;
# 0 ignored" with N its count of #[test]. An exit status of 0 alone is not
# enough: a test left out (a program packed from an older tree, a test
# without #[ignore], hence filtered out by --ignored) would not show there.
rust_cuda_verdict() {
  local want got re='^test result: ok\. ([0-9]+) passed; 0 failed; 0 ignored;'
  want="$(grep -cE '^[[:space:]]*#\[test\]' "$root/bindings/rust/tests/cuda.rs" || true)"
  got="$(grep -E '^test result: ' "$1" | tail -1 || true)"
  if [[ "$got" =~ $re ]] && [ "${BASH_REMATCH[1]}" = "$want" ] && [ "$want" -gt 0 ]; then
    echo "rust cuda tests: all $want of tests/cuda.rs ran and passed"
    return 0
  fi
  echo "FAIL: the Rust CUDA tests: want 'test result: ok. $want passed; 0 failed; 0 ignored'," \
       "got '${got:-no summary line}'"
  return 1
}

# `rust-verdict LOG` runs this check alone, without a GPU:
# tests/scripts/gpu_check_without_gpu.sh feeds it made-up logs.
if [ "${1:-}" = rust-verdict ]; then
  [ -f "${2:-}" ] || die "usage: scripts/gpu-check.sh rust-verdict LOG"
  rust_cuda_verdict "$2"
  exit
fi

# ---- pack (development machine) ------------------------------------------------
if [ "${1:-}" = pack ]; then
  rm -rf "$deps" && mkdir -p "$deps/include"
  [ -d /usr/src/googletest ] || die "pack: /usr/src/googletest missing (Debian's libgtest-dev)"
  cp -r /usr/src/googletest "$deps/googletest-src"
  [ -f /usr/include/dlpack/dlpack.h ] || die "pack: /usr/include/dlpack/dlpack.h missing (libdlpack-dev)"
  cp -r /usr/include/dlpack "$deps/include/"
  # The Rust crate's CUDA tests, built here against this tree's shared library
  # (STRIDEMEM_LINK=dylib: the crate links libstridemem.a by default, which
  # would freeze this machine's build into the test program); on the GPU
  # machine they load build-cuda's through LD_LIBRARY_PATH.
  # build/'s library is brought up to date first (configured as scripts/build.sh
  # does where build/ is new): a stale one would give the program an older
  # SONAME than build-cuda's library answers to, and it would not load there.
  export PATH="$PATH:$HOME/.cargo/bin"
  [ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
  if [ ! -f build/CMakeCache.txt ]; then
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSTRIDEMEM_CUDA="${STRIDEMEM_CUDA:-AUTO}" >/dev/null ||
      die "pack: cannot configure build/"
  fi
  cmake --build build -j"$(nproc)" --target stridemem || die "pack: cannot build build/'s library"
  exe=$(cd bindings/rust && STRIDEMEM_LINK=dylib STRIDEMEM_LIB_DIR="$root/build" cargo test --release --no-run \
        --test cuda --message-format=json 2>/dev/null |
        /usr/bin/python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "cuda":
        print(m["executable"])')
  [ -n "$exe" ] || die "pack: cargo did not build the crate's cuda test"
  # The program must need the SONAME that the library built just now has.
  soname="$(readelf -d build/libstridemem.so | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
  needed="$(readelf -d "$exe" | sed -n 's/.*(NEEDED).*\[\(libstridemem[^]]*\)\]/\1/p')"
  [ -n "$soname" ] && [ "$needed" = "$soname" ] ||
    die "pack: the Rust CUDA test program needs '${needed:-no libstridemem}' but build/libstridemem.so's" \
        "SONAME is '${soname:-none}': it would not load the library on the GPU machine ($exe)"
  echo "pack: the Rust CUDA test program needs $needed, the SONAME of the library built now"
  cp "$exe" "$deps/rust_cuda_tests"
  du -sh "$deps"
  echo "pack: done; carry .gpu-deps (it is git-ignored) with the device call"
  exit 0
fi

out="${1:-}"
[ -n "$out" ] || die "usage: scripts/gpu-check.sh OUTDIR [STEP...] | pack"
shift
mkdir -p "$out"
out="$(cd "$out" && pwd)"
steps=("$@")
((${#steps[@]})) || steps=("${all_steps[@]}")
for s in "${steps[@]}"; do
  [[ " ${all_steps[*]} " == *" $s "* ]] || die "unknown step '$s' (steps: ${all_steps[*]})"
done

[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
py="$(command -v python3)"
jobs="$(nproc)"
export PYTHONPATH="$root/bindings/python" STRIDEMEM_LIB="$bld/libstridemem.so" PYTHONUNBUFFERED=1

# Why no GPU is usable, or nothing when one is.
gpu_problem() {
  command -v nvidia-smi >/dev/null 2>&1 || { echo "nvidia-smi not found (no NVIDIA driver)"; return; }
  local l
  l="$(nvidia-smi -L 2>&1)" || { echo "nvidia-smi -L failed: ${l%%$'\n'*}"; return; }
  grep -q '^GPU ' <<<"$l" || { echo "nvidia-smi lists no GPU"; return; }
  if [ -f "$bld/libstridemem.so" ]; then
    local n
    n="$("$py" -c 'import stridemem as sm; print(sm.cuda_device_count())' 2>&1)" ||
      { echo "the CUDA build cannot be loaded: ${n##*$'\n'}"; return; }
    [ "$n" -gt 0 ] 2>/dev/null || echo "the library sees $n CUDA devices"
  fi
}

# record STEP STATUS SECONDS DETAIL: merges one row into summary.json/.txt.
record() {
  "$py" - "$out" "${all_steps[*]}" "$@" <<'EOF'
import json, os, sys, time
out, order, step, status, secs, detail = sys.argv[1:7]
path = os.path.join(out, "summary.json")
doc = json.load(open(path)) if os.path.exists(path) else {"steps": {}}
doc["steps"][step] = {"status": status, "seconds": float(secs), "detail": detail,
                      "log": step + ".log", "finished": time.strftime("%Y-%m-%d %H:%M:%S")}
doc["ok"] = all(doc["steps"][s]["status"] == "PASS" for s in doc["steps"])
json.dump(doc, open(path, "w"), indent=1)
rows = ["%-9s %-7s %8s  %s" % ("step", "result", "seconds", "detail")]
for s in order.split():
    if s in doc["steps"]:
        r = doc["steps"][s]
        rows.append("%-9s %-7s %8.1f  %s" % (s, r["status"], r["seconds"], r["detail"]))
open(os.path.join(out, "summary.txt"), "w").write("\n".join(rows) + "\n")
EOF
}

# ---- the steps ------------------------------------------------------------------------
# Each runs in a subshell whose exit status is the step's result. `set -e` does
# not apply there (a subshell in an `if` ignores it), so every step tracks its
# own status; note() leaves the one-line detail for the summary.
step_build() {
  local gt="$deps/gtest-install" extra=()
  if [ ! -f /usr/include/gtest/gtest.h ] && [ ! -d "$gt" ]; then
    [ -d "$deps/googletest-src" ] || { note "no GoogleTest: run 'scripts/gpu-check.sh pack' and carry .gpu-deps"; return 1; }
    cmake -S "$deps/googletest-src" -B "$deps/gtest-build" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_INSTALL_PREFIX="$gt" -DCMAKE_POSITION_INDEPENDENT_CODE=ON >/dev/null &&
      cmake --build "$deps/gtest-build" -j"$jobs" --target install >/dev/null || return 1
  fi
  [ -d "$gt" ] && extra+=(-DGTest_ROOT="$gt")
  # The carried <dlpack/dlpack.h>, named for the header.dlpack_official_* tests too.
  [ -d "$deps/include" ] && extra+=(-DCMAKE_CXX_FLAGS="-isystem $deps/include" -DCMAKE_C_FLAGS="-isystem $deps/include" -DSM_DLPACK_INCLUDE_DIR="$deps/include")
  # STRIDEMEM_CUDA_ARCHITECTURES=90-real builds for the lent GPU alone: the
  # default list (five targets) costs minutes of device time in nvcc.
  [ -n "${STRIDEMEM_CUDA_ARCHITECTURES:-}" ] && extra+=(-DCMAKE_CUDA_ARCHITECTURES="$STRIDEMEM_CUDA_ARCHITECTURES")
  cmake -S . -B "$bld" -DCMAKE_BUILD_TYPE=Release -DSTRIDEMEM_CUDA=ON \
    -DSM_PYTHON="$py" "${extra[@]}" || return 1
  cmake --build "$bld" -j"$jobs" || return 1
  note "$(nvcc --version | tail -1)"
}

# Tests that cannot run on a one-GPU machine with a GPU visible, each run
# another way below or named with the reason in the summary.
#   api.Devices.CudaCallsWithoutGpuReturnDevice  runs again with CUDA_VISIBLE_DEVICES=""
#   api.CudaDevice.SeveralGpus                   needs two GPUs (reported, not passed)
#   reliability.faults_new                       skips itself where the toolchain links
#                                                the C++ runtime statically (the CUDA
#                                                image's GCC does): it runs in CI
#   scripts.gpu_check_without_gpu                this script's own no-GPU answers: CI only
#   abi.compatible_with_release,                 need libabigail (abidw, abidiff), which a
#   abi.check_catches_breaks                     bare GPU machine lacks: CI (setup-deps.sh)
#   api.MemoryDeathTest.AddressSanitizer...      runs in an ASan build only (CI's reliability
#                                                suite builds one); this build is Release
#   api.Memory.ValgrindSeesCpuTensorBounds       needs valgrind: CI (setup-deps.sh)
#   python.test_julia_syntax                     needs tree-sitter-julia from npm: CI
#   python.test_mypy                             needs Debian's mypy: CI
no_gpu_tests='CudaCallsWithoutGpuReturnDevice'
multi_gpu_tests='SeveralGpus'
ci_only_tests='reliability.faults_new|scripts.gpu_check_without_gpu|abi.compatible_with_release|abi.check_catches_breaks'
ci_only_tests+='|api.MemoryDeathTest.AddressSanitizerCatchesWritesPastACpuTensor|api.Memory.ValgrindSeesCpuTensorBounds'
ci_only_tests+='|python.test_julia_syntax|python.test_mypy'

step_tests() {
  # Every ctest test; a skip fails the step unless it is one of those listed above.
  # The Python MPI tests need mpi4py (Debian's python3-mpi4py, in CI); a GPU
  # machine without it leaves them to CI and says so (the C MPI tests are
  # left out at configure time where MPI is missing).
  local log="$out/tests.ctest.log" rc=0 exclude="" notes=""
  if ! "$py" -c "from mpi4py import MPI" >/dev/null 2>&1; then
    exclude='python\.test_mpi_datatypes|python\.mpi_ranks_np4'
    notes="; no mpi4py here: the Python MPI tests run in CI only"
    echo "no mpi4py for $py: python.test_mpi_datatypes and python.mpi_ranks_np4 are left to CI"
  fi
  # test_memviz's browser checks need chromium (CI installs it); a machine
  # without one declares it, and those checks print NOT RUN, never a pass.
  if ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/bin/chromium ]; then
    export STRIDEMEM_NO_BROWSER=1
    notes="$notes; no chromium here: test_memviz's browser checks NOT RUN (CI runs them)"
    echo "no chromium: python.test_memviz's browser checks are NOT RUN here (STRIDEMEM_NO_BROWSER=1)"
  fi
  ctest --test-dir "$bld" -j"$jobs" --timeout 600 --output-on-failure ${exclude:+-E "$exclude"} \
    >"$log" 2>&1 || rc=1
  grep -E '\*\*\*(Failed|Skipped|Timeout|Exception)|tests passed|tests failed' "$log"
  local skipped bad_skips
  skipped="$(grep -E '\*\*\*Skipped' "$log" | sed -E 's/.*Test +#[0-9]+: ([^ ]+) .*/\1/' || true)"
  bad_skips="$(grep -Ev "$no_gpu_tests|$multi_gpu_tests|$ci_only_tests" <<<"$skipped" | grep . || true)"
  [ -z "$bad_skips" ] || { echo "skipped on a GPU machine (a failure here):"; echo "$bad_skips"; rc=1; }
  echo "== the no-GPU tests, with no GPU visible"
  CUDA_VISIBLE_DEVICES="" ctest --test-dir "$bld" -R "$no_gpu_tests|demo.small_cuda|python.test_binding" \
    --output-on-failure >"$out/tests.nogpu.log" 2>&1 || rc=1
  grep -E 'Test +#|tests passed' "$out/tests.nogpu.log"
  if grep '\*\*\*Skipped' "$out/tests.nogpu.log" | grep -v demo.small_cuda; then rc=1; fi
  note "$(grep -E 'tests passed|tests failed' "$log" | tail -1); skipped: $(grep -c . <<<"$skipped")" \
       "(allowed: $no_gpu_tests re-run without a GPU, $multi_gpu_tests needs 2 GPUs," \
       "faults_new where libstdc++ is static, this script's no-GPU test, the ABI checks" \
       "without libabigail)$notes"
  return $rc
}

step_diff() {
  local rc=0
  echo "== NumPy differential on CUDA tensors"
  STRIDEMEM_TEST_DEVICE=cuda "$py" tests/python/test_differential.py || rc=1
  echo "== PyTorch differential on CUDA tensors"
  STRIDEMEM_TEST_DEVICE=cuda "$py" tests/python/test_torch_differential.py || rc=1
  note "numpy + torch chains on cuda:0"
  return $rc
}

# compute-sanitizer over the CUDA API tests and the benchmark's kernels
# (transpose, convert, broadcast, in-place) at a small size. API errors are
# reported (every CUDA call's status is checked by the library, so none is
# expected) except in the out-of-memory tests, which fail cudaMalloc on
# purpose: those run in a separate memcheck pass without API-error reports.
# The leak check needs the caches emptied at exit: the API tests' global
# tear-down and the benchmark do that, so a leak is a real one.
step_sanitize() {
  local rc=0 tool summary="" api="$bld/tests/stridemem_api_tests"
  local filter='*Cuda*:*CUDA*:*cuda*:*Gather*' oom='*OutOfMemory*:*out_of_memory*'
  run_san() {  # run_san LOG ARGS... : appends, and fails on a non-zero ERROR SUMMARY
    local log="$1"; shift
    compute-sanitizer --error-exitcode 9 "$@" >>"$log" 2>&1 || rc=1
  }
  # STRIDEMEM_SANITIZE_TOOLS="racecheck" runs a subset: four instances, one
  # tool each and each with its own OUTDIR, can share the GPU in parallel.
  # initcheck cannot see what another process wrote: the CUDA IPC test's
  # child reads memory its parent filled, which initcheck reports as
  # uninitialised (11250 reports on the H200; the 100 it printed were all
  # share_child's sm_copy_to_host). That test runs under initcheck with the parent alone
  # (--target-processes application-only); memcheck and the others follow
  # the child as well.
  local ipc='SharingCuda.TwoProcessesOneGpuThroughCudaIpc'
  for tool in ${STRIDEMEM_SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}; do
    local log="$out/sanitize.$tool.log" args=(--tool "$tool")
    : >"$log"
    [ "$tool" = memcheck ] && args+=(--leak-check full)
    echo "== compute-sanitizer $tool: API tests"
    if [ "$tool" = initcheck ]; then
      run_san "$log" "${args[@]}" "$api" --gtest_filter="$filter:-$oom:$ipc"
      echo "== compute-sanitizer initcheck: $ipc, parent process only"
      run_san "$log" "${args[@]}" --target-processes application-only "$api" --gtest_filter="$ipc"
    else
      run_san "$log" "${args[@]}" "$api" --gtest_filter="$filter:-$oom"
    fi
    if [ "$tool" = memcheck ]; then
      echo "== compute-sanitizer memcheck: out-of-memory tests (API errors expected)"
      run_san "$log" "${args[@]}" --report-api-errors no "$api" --gtest_filter="$oom"
    fi
    echo "== compute-sanitizer $tool: benchmark kernels (--quick, 4 MiB)"
    run_san "$log" "${args[@]}" "$bld/bench/bench_cuda_bench" --quick --iters 1 --warmup 0 --mib 4
    # Each sanitized process ends with one summary line: "ERROR SUMMARY: N
    # errors" (racecheck: "RACECHECK SUMMARY: N hazards displayed (E errors,
    # W warnings)"), and memcheck's leak check adds "LEAK SUMMARY: B bytes
    # leaked in A allocations". Any count but 0 fails, and so does a pass that
    # printed no summary at all (a sanitizer that did not run).
    local errs sums
    sums="$(grep -hE '(ERROR|RACECHECK) SUMMARY' "$log" || true)"
    errs="$(sed -E 's/=* *(ERROR|RACECHECK) SUMMARY: //' <<<"$sums" | tr '\n' ' ')"
    [ -n "$sums" ] || { echo "FAIL: $tool printed no summary"; rc=1; }
    grep -vqE 'ERROR SUMMARY: 0 errors$|RACECHECK SUMMARY: 0 hazards displayed \(0 errors, 0 warnings\)' <<<"$sums" && rc=1
    grep -hE 'LEAK SUMMARY' "$log" | grep -vq 'LEAK SUMMARY: 0 bytes leaked in 0 allocations' &&
      { grep -h 'LEAK SUMMARY' "$log"; rc=1; }
    grep -E '^\[  (PASSED|FAILED)|tests? ran' "$log" | sort | uniq -c
    echo "$tool: $errs"
    summary+="$tool: $errs; "
  done
  note "$summary"
  return $rc
}

step_dlpack() {
  local rc=0
  "$py" tests/python/dlpack_gpu_check.py --json "$out/dlpack.json" || rc=1
  note "$(cut -c1-7 "$out/dlpack.log" | grep -E '^(PASS|FAIL|NOT RUN) *$' | sort | uniq -c | tr -s ' \n' ' ')"
  return $rc
}

step_bindings() {
  local rc=0
  echo "== Rust crate: CUDA tests"
  if [ -x "$deps/rust_cuda_tests" ]; then
    # Every test there is #[ignore]d (it needs a GPU): --ignored runs them.
    LD_LIBRARY_PATH="$bld" "$deps/rust_cuda_tests" --ignored --test-threads 1 >"$out/rust.log" 2>&1 || rc=1
    cat "$out/rust.log"
    rust_cuda_verdict "$out/rust.log" || rc=1
  else
    echo "FAIL: no Rust test program: run 'scripts/gpu-check.sh pack' on the development machine"; rc=1
  fi
  echo "== Python binding on CUDA"
  "$py" tests/python/python_cuda_check.py --device cuda:0 --json "$out/python_cuda.json" || rc=1
  echo "== demo on CUDA (large)"
  "$bld/stridemem-demo" --device cuda --size large --out "$out/demo-report" || rc=1
  note "rust cuda tests, python_cuda_check, demo --device cuda --size large"
  return $rc
}

# The benchmark against PyTorch and CuPy, its converting permutations
# (f32->f16, f32->bf16, f16->f32 tiles) into convert.log, host <-> device
# copies against cudaMemcpyAsync (bench/cuda/transfer_bench.cu) into
# transfer.log, then the transpose
# lab (standalone tile variants beside the library's own kernel, one factor
# changed at a time: bench/cuda/transpose_variants.cu) into lab.log.
step_bench() {
  local rc=0
  "$py" bench/torch_cupy_bench.py --bench "$bld/bench/bench_cuda_bench" --json "$out/bench.json" || rc=1
  echo "== converting permutations"
  "$bld/bench/bench_cuda_bench" --conversion-tiles >"$out/convert.log" 2>&1 || rc=1
  cat "$out/convert.log"
  echo "== host <-> device transfers"
  "$bld/bench/bench_transfer_bench" >"$out/transfer.log" 2>&1 || rc=1
  cat "$out/transfer.log"
  echo "== transpose lab"
  "$bld/bench/bench_transpose_variants" >"$out/lab.log" 2>&1 || rc=1
  cat "$out/lab.log"
  grep -q WRONG "$out/lab.log" && { echo "FAIL: a lab variant gave wrong results"; rc=1; }
  note "targets: $(cat "$out/bench.log" "$out/transfer.log" | grep -cE '^  PASS') PASS, $(cat "$out/bench.log" "$out/transfer.log" | grep -cE '^  FAIL') FAIL; convert.log, transfer.log, lab.log"
  return $rc
}

# note TEXT: a step's one-line result for the summary (steps run in subshells).
note() { printf '%s' "$*" >"$out/.detail"; }

fail=0
for s in "${steps[@]}"; do
  detail=""
  rm -f "$out/.detail"
  start=$(date +%s.%N)
  echo "=== gpu-check: $s"
  why=""
  [ "$s" != build ] && why="$(gpu_problem)"
  if [ -n "$why" ]; then
    st=FAIL; detail="no usable GPU: $why"
    echo "$detail" | tee "$out/$s.log"
  elif ( "step_$s" ) > >(tee "$out/$s.log") 2>&1; then
    st=PASS
  else
    st=FAIL
  fi
  [ -z "$detail" ] && [ -f "$out/.detail" ] && detail="$(cat "$out/.detail")"
  end=$(date +%s.%N)
  secs=$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.1f", b-a}')
  [ -z "$detail" ] && detail="$(tail -1 "$out/$s.log" | cut -c1-200)"
  record "$s" "$st" "$secs" "$detail"
  [ "$st" = PASS ] || fail=1
  echo "=== gpu-check: $s $st in ${secs}s"
done
cat "$out/summary.txt"
exit $fail

#!/usr/bin/env bash
# Reliability checks (tests/RELIABILITY.md): sanitizers, fuzzing, fault
# injection, valgrind, and compute-sanitizer where a GPU is usable.
#
#   scripts/reliability.sh all            every check below, in this order
#   scripts/reliability.sh asan           ASan+UBSan build: the whole ctest suite
#   scripts/reliability.sh tsan           TSan build: the 8-thread stress test
#   scripts/reliability.sh fuzz           libFuzzer (clang), FUZZ_SECONDS (60) from the corpus
#   scripts/reliability.sh faults         fault-injection walk (ASan build) + STRIDEMEM_FAIL_ALLOC
#   scripts/reliability.sh valgrind       memcheck over the C programs, API tests, reliability programs
#   scripts/reliability.sh cuda           compute-sanitizer memcheck + racecheck (needs a GPU)
#   scripts/reliability.sh fuzz-merge     (maintenance) merge new coverage into the corpus
#
# Each check builds in its own directory (build-asan, build-tsan, build-fuzz,
# build-valgrind, build-cuda-san), CPU-only except cuda. Deterministic seeds;
# bounded time. Exits non-zero if any check fails; the last line is
# "N passed, M failed". A check that cannot run (cuda without a GPU) is
# reported as NOT RUN and counts as neither.
#
# Knobs (environment): JOBS (nproc), FUZZ_SECONDS (60), FUZZ_SEED (1),
# TSAN_OPS (ops per thread, 3000), TSAN_THREADS (8), VALGRIND_BUILD (a build
# directory to reuse for valgrind, e.g. build: any non-sanitized build; default
# build-valgrind), FUZZ_EXTRA_CXXFLAGS (extra flags for the clang fuzz build).
set -uo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
JOBS="${JOBS:-$(nproc)}"
FUZZ_SECONDS="${FUZZ_SECONDS:-60}"
FUZZ_SEED="${FUZZ_SEED:-1}"
TSAN_OPS="${TSAN_OPS:-3000}"
TSAN_THREADS="${TSAN_THREADS:-8}"
VALGRIND_BUILD="${VALGRIND_BUILD:-build-valgrind}"
FUZZ_EXTRA_CXXFLAGS="${FUZZ_EXTRA_CXXFLAGS:-}"
CORPUS="$root/tests/reliability/corpus"

passed=0
failed=0
not_run=()
failed_names=()

log() { printf '\n== %s\n' "$*"; }

# check NAME COMMAND...: runs a check, records the result.
check() {
  local name="$1"
  shift
  local t0=$SECONDS
  log "$name"
  if "$@"; then
    passed=$((passed + 1))
    printf -- '-- %s: PASSED (%ds)\n' "$name" $((SECONDS - t0))
  else
    failed=$((failed + 1))
    failed_names+=("$name")
    printf -- '-- %s: FAILED (%ds)\n' "$name" $((SECONDS - t0))
  fi
}

# configure DIR [cmake args...]: a CPU-only build without benchmarks.
configure() {
  local dir="$1"
  shift
  mkdir -p "$root/$dir"
  cmake -S "$root" -B "$root/$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTRIDEMEM_CUDA=OFF \
    -DSTRIDEMEM_BUILD_BENCH=OFF "$@" >"$root/$dir/configure.log" 2>&1 ||
    { cat "$root/$dir/configure.log"; return 1; }
}

build() {  # build DIR [targets...]
  local dir="$1"
  shift
  local args=()
  for t in "$@"; do args+=(--target "$t"); done
  cmake --build "$root/$dir" -j"$JOBS" "${args[@]}" >"$root/$dir/build.log" 2>&1 ||
    { tail -50 "$root/$dir/build.log"; return 1; }
}

# ctest_quiet DIR LOG [ctest args...]: the summary, the skips (ctest's "100%
# tests passed" counts them as passes: scripts/skip_report.py lists them and
# the checks that tests skipped in part), and the output of failures.
ctest_quiet() {
  local dir="$1" log="$2"
  shift 2
  local junit="${log%.log}.junit.xml"
  if ctest --test-dir "$dir" -j"$JOBS" --timeout 900 --output-on-failure --output-junit "$junit" \
    "$@" >"$log" 2>&1; then
    grep -E 'tests passed|Total Test time' "$log"
    python3 "$root/scripts/skip_report.py" "$junit" --label "$(basename "$dir")"
    return 0
  fi
  python3 "$root/scripts/skip_report.py" "$junit" --label "$(basename "$dir")"
  # The output of each failed test (ctest prints it after the test's result line).
  awk '/\*\*\*(Failed|Exception|Timeout|Not Run)/ {show = 1; n = 0}
       /^ +Start +[0-9]+:|^ *[0-9]+\/[0-9]+ Test +#/ {if (!/\*\*\*/) show = 0}
       show && n++ < 80' "$log"
  grep -E 'tests passed|Total Test time|^\s+[0-9]+ - ' "$log" | grep -v '(Skipped)'
  echo "(full log: $log)"
  return 1
}

# Sanitizer flags go through CMAKE_*_FLAGS so that every target (tests,
# GoogleTest programs, C programs) is instrumented, not only the library.
ASAN_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
TSAN_FLAGS="-fsanitize=thread -fno-omit-frame-pointer"
san_args() {  # one cmake argument per line (callers split on newlines)
  printf '%s\n' "-DCMAKE_C_FLAGS=$1" "-DCMAKE_CXX_FLAGS=$1" "-DCMAKE_EXE_LINKER_FLAGS=$1" \
    "-DCMAKE_SHARED_LINKER_FLAGS=$1"
}

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:allocator_may_return_null=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="report_objects=0"

# ---- ASan + UBSan: the whole ctest suite -------------------------------------
run_asan() {
  local IFS=$'\n'
  # shellcheck disable=SC2046
  configure build-asan $(san_args "$ASAN_FLAGS") || return 1
  build build-asan || return 1
  # install.*, cmake.*: build separate, uninstrumented projects against the
  # (instrumented) library or the source tree: packaging, not memory; the main
  # suite runs them.
  local rc=0
  ctest_quiet build-asan "$root/build-asan/ctest.log" -E '^(python|api_table|install|cmake)\.' || rc=1
  # Python loads the library with ctypes: the ASan runtime (and libstdc++, for
  # its __cxa_throw interceptor) must be loaded first, and the interpreter's
  # own allocations are not ours to leak-check (detect_leaks=0 here only).
  # The API table imports the Python binding too.
  LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libstdc++.so)" \
    ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" \
    ctest_quiet build-asan "$root/build-asan/ctest-python.log" -R '^(python|api_table)\.' || rc=1
  return "$rc"
}

# ---- TSan: the stress test, every header function from several threads -------
# TSAN_ROUNDS (default 5): rounds of reliability_concurrency's phases.
run_tsan() {
  local IFS=$'\n'
  # shellcheck disable=SC2046
  configure build-tsan $(san_args "$TSAN_FLAGS") || return 1
  build build-tsan stridemem reliability_stress reliability_concurrency || return 1
  local opts="halt_on_error=1:second_deadlock_stack=1:history_size=4" rc=0
  TSAN_OPTIONS="$opts" \
    "$root/build-tsan/tests/reliability/reliability_stress" --threads "$TSAN_THREADS" --ops "$TSAN_OPS" --seed 1 ||
    rc=1
  # Fails naming any function of stridemem.h that no two threads called at once.
  TSAN_OPTIONS="$opts" \
    "$root/build-tsan/tests/reliability/reliability_concurrency" --threads "$TSAN_THREADS" \
    --rounds "${TSAN_ROUNDS:-5}" --seed 1 || rc=1
  return "$rc"
}

# ---- libFuzzer ------------------------------------------------------------------
fuzz_build() {
  local IFS=$'\n'
  local flags="-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
  # shellcheck disable=SC2046
  configure build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DSTRIDEMEM_FUZZ=ON \
    $(san_args "$flags") "-DCMAKE_CXX_FLAGS=$flags $FUZZ_EXTRA_CXXFLAGS" || return 1
  build build-fuzz reliability_fuzz
}
run_fuzz() {
  fuzz_build || return 1
  local work="$root/build-fuzz/fuzz-work"
  rm -rf "$work" && mkdir -p "$work/new" "$work/crashes"
  # New inputs go to a scratch corpus; the repository's corpus is read only.
  local rc=0
  (cd "$work" && exec "$root/build-fuzz/tests/reliability/reliability_fuzz" \
    -seed="$FUZZ_SEED" -max_total_time="$FUZZ_SECONDS" -max_len=4096 -timeout=20 \
    -rss_limit_mb=4096 -malloc_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work/crashes/" "$work/new" "$CORPUS") >"$work/fuzz.log" 2>&1 || rc=$?
  grep -E '^(#[0-9]+[[:space:]]+(INITED|DONE)|stat::|SUMMARY|fuzz: |FAIL|INFO: (Seed|seed))' "$work/fuzz.log"
  if [ "$rc" -ne 0 ]; then
    echo "fuzz: libFuzzer exited with $rc; the end of its log:"
    tail -60 "$work/fuzz.log"
  fi
  if ls "$work/crashes/"* >/dev/null 2>&1; then
    echo "fuzz: crash inputs kept in $work/crashes:"
    ls -l "$work/crashes"
    # A CI log is all that survives a clean clone: each input (<= 4 KiB) in
    # base64, to replay with `base64 -d > f && reliability_fuzz f`.
    local f
    for f in "$work/crashes/"*; do
      echo "fuzz: $(basename "$f") as base64:"
      base64 -w 0 "$f" && echo
    done
    rc=1
  fi
  return "$rc"
}
# Maintenance: fuzz longer and merge inputs that add coverage into the corpus.
run_fuzz_merge() {
  fuzz_build || return 1
  local work="$root/build-fuzz/fuzz-merge"
  rm -rf "$work" && mkdir -p "$work/new"
  "$root/build-fuzz/tests/reliability/reliability_fuzz" -seed="$FUZZ_SEED" \
    -max_total_time="${FUZZ_SECONDS}" -max_len=4096 -timeout=20 -rss_limit_mb=4096 \
    "$work/new" "$CORPUS" >"$work/fuzz.log" 2>&1 || { tail -40 "$work/fuzz.log"; return 1; }
  "$root/build-fuzz/tests/reliability/reliability_fuzz" -merge=1 -max_len=4096 \
    "$CORPUS" "$work/new" >"$work/merge.log" 2>&1 || { tail -40 "$work/merge.log"; return 1; }
  # Name merged files cov-<sha1> (libFuzzer names them by their sha1 already).
  (cd "$CORPUS" && for f in *; do
     case "$f" in seed-* | cov-*) ;; *) mv "$f" "cov-$f" ;; esac
   done)
  echo "corpus: $(ls "$CORPUS" | wc -l) files, $(du -sh "$CORPUS" | cut -f1)"
}

# ---- fault injection (ASan build: failure paths checked for leaks too) -------
run_faults() {
  local IFS=$'\n'
  # shellcheck disable=SC2046
  configure build-asan $(san_args "$ASAN_FLAGS") || return 1
  build build-asan reliability_faults || return 1
  local f="$root/build-asan/tests/reliability/reliability_faults" rc=0
  echo "faults: data allocations (sm_debug_fail_alloc)"
  "$f" || rc=1
  echo "faults: C++ operator new inside the library's calls"
  "$f" --new || rc=1
  echo "faults: STRIDEMEM_FAIL_ALLOC=1 from the environment"
  STRIDEMEM_FAIL_ALLOC=1 "$f" --env-check || rc=1
  return "$rc"
}

# ---- valgrind memcheck ------------------------------------------------------------
run_valgrind() {
  if [ "$VALGRIND_BUILD" = build-valgrind ]; then
    configure build-valgrind || return 1
  fi
  build "$VALGRIND_BUILD" || return 1
  local vg=(valgrind --quiet --error-exitcode=99 --leak-check=full
            --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect
            --num-callers=30)
  local b="$root/$VALGRIND_BUILD" rc=0 p
  for p in "$b"/tests/c_*; do
    [ -x "$p" ] || continue
    echo "valgrind: $(basename "$p")"
    "${vg[@]}" "$p" >"$p.valgrind.log" 2>&1 || { rc=1; tail -60 "$p.valgrind.log"; }
  done
  echo "valgrind: stridemem_api_tests"
  "${vg[@]}" "$b/tests/stridemem_api_tests" --gtest_brief=1 >"$b/api.valgrind.log" 2>&1 ||
    { rc=1; tail -80 "$b/api.valgrind.log"; }
  grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$b/api.valgrind.log" | head -5
  echo "valgrind: reliability_faults"
  "${vg[@]}" "$b/tests/reliability/reliability_faults" >"$b/faults.valgrind.log" 2>&1 ||
    { rc=1; tail -60 "$b/faults.valgrind.log"; }
  tail -1 "$b/faults.valgrind.log"
  echo "valgrind: reliability_fuzz_replay (corpus)"
  "${vg[@]}" "$b/tests/reliability/reliability_fuzz_replay" "$CORPUS" >"$b/fuzz.valgrind.log" 2>&1 ||
    { rc=1; tail -60 "$b/fuzz.valgrind.log"; }
  tail -1 "$b/fuzz.valgrind.log"
  echo "valgrind: reliability_stress (8 threads)"
  "${vg[@]}" "$b/tests/reliability/reliability_stress" --threads 8 --ops 1000 >"$b/stress.valgrind.log" 2>&1 ||
    { rc=1; tail -60 "$b/stress.valgrind.log"; }
  tail -1 "$b/stress.valgrind.log"
  echo "valgrind: stridemem-demo --size small --device cpu"
  "${vg[@]}" "$b/stridemem-demo" --size small --device cpu --out "$b/demo-report.valgrind" \
    >"$b/demo.valgrind.log" 2>&1 ||
    { rc=1; tail -60 "$b/demo.valgrind.log"; }
  return "$rc"
}

# ---- compute-sanitizer (GPU machines only) ---------------------------------------
cuda_usable() {
  command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 || return 1
  [ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
  command -v compute-sanitizer >/dev/null 2>&1 && command -v nvcc >/dev/null 2>&1
}
run_cuda() {
  mkdir -p "$root/build-cuda-san"
  cmake -S "$root" -B "$root/build-cuda-san" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTRIDEMEM_CUDA=ON \
    -DSTRIDEMEM_BUILD_BENCH=OFF >"$root/build-cuda-san/configure.log" 2>&1 ||
    { cat "$root/build-cuda-san/configure.log"; return 1; }
  build build-cuda-san || return 1
  local b="$root/build-cuda-san" rc=0 tool
  for tool in memcheck racecheck; do
    local cs=(compute-sanitizer --tool "$tool" --error-exitcode 1)
    [ "$tool" = memcheck ] && cs+=(--leak-check full)
    echo "compute-sanitizer --tool $tool: stridemem_api_tests"
    "${cs[@]}" "$b/tests/stridemem_api_tests" --gtest_brief=1 >"$b/api.$tool.log" 2>&1 ||
      { rc=1; tail -60 "$b/api.$tool.log"; }
    tail -3 "$b/api.$tool.log"
    echo "compute-sanitizer --tool $tool: stridemem-demo --size small --device cuda"
    "${cs[@]}" "$b/stridemem-demo" --size small --device cuda --out "$b/demo-report.$tool" \
      >"$b/demo.$tool.log" 2>&1 ||
      { rc=1; tail -60 "$b/demo.$tool.log"; }
    tail -3 "$b/demo.$tool.log"
  done
  return "$rc"
}

# ---- main ---------------------------------------------------------------------------
[ $# -eq 0 ] && set -- all
t_start=$SECONDS
for what in "$@"; do
  case "$what" in
    all)
      check asan run_asan
      check tsan run_tsan
      check fuzz run_fuzz
      check faults run_faults
      check valgrind run_valgrind
      if cuda_usable; then check cuda run_cuda; else not_run+=("cuda (no usable GPU)"); fi
      ;;
    asan) check asan run_asan ;;
    tsan) check tsan run_tsan ;;
    fuzz) check fuzz run_fuzz ;;
    faults) check faults run_faults ;;
    valgrind) check valgrind run_valgrind ;;
    cuda) if cuda_usable; then check cuda run_cuda; else not_run+=("cuda (no usable GPU)"); fi ;;
    fuzz-merge) check fuzz-merge run_fuzz_merge ;;
    *) echo "unknown check: $what (all|asan|tsan|fuzz|faults|valgrind|cuda|fuzz-merge)"; exit 2 ;;
  esac
done

echo
echo "== reliability summary ($((SECONDS - t_start)) s)"
((${#failed_names[@]})) && echo "failed: ${failed_names[*]}"
((${#not_run[@]})) && echo "NOT RUN: ${not_run[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

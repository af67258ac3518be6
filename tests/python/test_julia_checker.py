#!/usr/bin/env python3
"""Tests tools/check_julia_ccalls.py, the mechanical check of the Julia
package's @ccalls (no Julia runtime is available, so this is what stands
between a wrong Julia signature and a crash).

The real package must pass against the real library (STRIDEMEM_LIB); copies
of it with one planted mismatch each must fail, naming the problem. Run as a
script: exit 0 when every case passes; prints `N passed, M failed`.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _util import Cases, expect  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
CHECKER = os.path.join(REPO, "tools", "check_julia_ccalls.py")
PACKAGE = os.path.join(REPO, "bindings", "julia", "StrideMem")
HEADER = os.path.join(REPO, "include", "stridemem.h")
LIB = os.environ.get("STRIDEMEM_LIB", "")

cases = Cases()
case = cases.case


def need_lib():
    expect(bool(LIB), "STRIDEMEM_LIB is not set: the checker's nm part needs the built library")
    expect(os.path.isfile(LIB), "STRIDEMEM_LIB=%s does not exist" % LIB)


def run_checker(package=PACKAGE, header=HEADER, lib=None, use_env=False):
    cmd = [sys.executable, CHECKER, "--package", package, "--header", header]
    env = dict(os.environ)
    env.pop("STRIDEMEM_LIB", None)
    if use_env:
        env["STRIDEMEM_LIB"] = lib or ""
    elif lib is not None:
        cmd += ["--lib", lib]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    return r.returncode, r.stdout + r.stderr


def copy_package(tmp):
    dst = os.path.join(tmp, "StrideMem")
    shutil.copytree(PACKAGE, dst)
    return dst


def plant(old, new, path="src/lib.jl", count=1):
    """A copy of the package with `old` replaced by `new` (which must occur
    exactly `count` times, so a stale test fails loudly instead of checking
    nothing); returns the checker's (status, output) on it."""
    with tempfile.TemporaryDirectory() as tmp:
        pkg = copy_package(tmp)
        f = os.path.join(pkg, path)
        text = open(f, encoding="utf-8").read()
        n = text.count(old)
        expect(n == count, "planting: %r occurs %d times in %s, expected %d" % (old, n, path, count))
        open(f, "w", encoding="utf-8").write(text.replace(old, new))
        return run_checker(package=pkg, lib=LIB)


def expect_planted_failure(old, new, *needles, path="src/lib.jl"):
    need_lib()
    rc, out = plant(old, new, path)
    expect(rc == 1, "checker exit status %d, expected 1 (planted %r -> %r)" % (rc, old, new), out)
    for needle in needles:
        expect(re.search(needle, out) is not None,
               "checker output lacks %r (planted %r -> %r)" % (needle, old, new), out)


# ---------------------------------------------------------------------------
# The real package
# ---------------------------------------------------------------------------

@case
def real_package_passes_against_the_built_library():
    need_lib()
    rc, out = run_checker(lib=LIB)
    expect(rc == 0, "the real package fails the checker (exit %d)" % rc, out)
    m = re.search(r"checked (\d+) @ccall sites in (\d+) files: (\d+) distinct symbols of (\d+) "
                  r"header functions \((\d+) sm_ symbols exported", out)
    expect(m is not None, "no summary line", out)
    sites, files, symbols, declared, exported = map(int, m.groups())
    expect(sites > 0 and symbols > 0, "no @ccall was checked", out)
    expect(declared > 0 and exported > 0, "header or library looked empty", out)
    expect("0 problem(s)" in out, "summary does not report 0 problems", out)


@case
def real_package_passes_with_library_from_the_environment():
    need_lib()
    rc, out = run_checker(lib=LIB, use_env=True)
    expect(rc == 0, "STRIDEMEM_LIB from the environment is not used (exit %d)" % rc, out)


@case
def every_header_function_is_wrapped():
    # Informational in the checker; the package aims to wrap the whole API.
    need_lib()
    rc, out = run_checker(lib=LIB)
    expect("wraps every function of the header" in out,
           "some header functions have no @ccall in the package", out)


# ---------------------------------------------------------------------------
# Planted mismatches: each must make the checker fail and say why
# ---------------------------------------------------------------------------

@case
def wrong_argument_count():
    expect_planted_failure("out::Ptr{Int64}, capacity::Int32)::sm_status\nsm_strides",
                           "out::Ptr{Int64})::sm_status\nsm_strides",
                           r"sm_shape: 2 arguments, the C prototype has 3")


@case
def wrong_integer_size():
    # int64_t start passed as Int32
    expect_planted_failure("sm_slice(t::sm_tensor, dim::Int32, start::Int64,",
                           "sm_slice(t::sm_tensor, dim::Int32, start::Int32,",
                           r"sm_slice: argument 3 \(start\): Julia Int32 .* does not match C int64_t")


@case
def wrong_signedness():
    # int32_t ndim passed as UInt32
    expect_planted_failure("sm_view(t::sm_tensor, shape::Ptr{Int64}, ndim::Int32,",
                           "sm_view(t::sm_tensor, shape::Ptr{Int64}, ndim::UInt32,",
                           r"sm_view: argument 3 \(ndim\): Julia UInt32 \(4-byte unsigned integer\) "
                           r"does not match C int32_t \(4-byte signed integer\)")


@case
def misspelled_symbol():
    expect_planted_failure("libstridemem().sm_empty(shape", "libstridemem().sm_emtpy(shape",
                           r"sm_emtpy: not exported by", r"sm_emtpy: not declared in")


@case
def wrong_return_type():
    # size_t sm_dtype_size(...) read as Cint
    expect_planted_failure("sm_dtype_size(dtype::sm_dtype)::Csize_t",
                           "sm_dtype_size(dtype::sm_dtype)::Cint",
                           r"sm_dtype_size: return type: Julia Cint .* does not match C size_t")


@case
def wrong_pointee_type():
    # int64_t* out written as Ref{Int32}: the library would write 8 bytes into 4
    expect_planted_failure("sm_numel(t::sm_tensor, out::Ref{Int64})",
                           "sm_numel(t::sm_tensor, out::Ref{Int32})",
                           r"sm_numel: argument 2 \(out\) \(pointee\): Julia Int32")


@case
def untyped_pointer_for_typed_c_pointer():
    expect_planted_failure("sm_numel(t::sm_tensor, out::Ref{Int64})",
                           "sm_numel(t::sm_tensor, out::Ptr{Cvoid})",
                           r"sm_numel: argument 2 \(out\): Julia Ptr\{Cvoid\} loses the pointee")


@case
def handle_of_the_wrong_kind():
    expect_planted_failure("sm_storage_retain(s::sm_storage)", "sm_storage_retain(s::sm_tensor)",
                           r"sm_storage_retain: argument 1 \(s\) \(pointee\): Julia sm_tensor_")


@case
def struct_by_value_for_struct_pointer():
    # const sm_device* device (sm_to_dlpack_ex) passed as the struct itself
    expect_planted_failure("flags::UInt32, device::Ptr{sm_device},",
                           "flags::UInt32, device::sm_device,",
                           r"sm_to_dlpack_ex: argument 3 \(device\): Julia sm_device .* does not "
                           r"match C const sm_device\* \(pointer to sm_device\)")


@case
def wrong_struct_pointee():
    # const sm_device* read as a pointer to an Int64
    expect_planted_failure("flags::UInt32, device::Ptr{sm_device},",
                           "flags::UInt32, device::Ptr{Int64},",
                           r"sm_to_dlpack_ex: argument 3 \(device\) \(pointee\): Julia Int64 .* does "
                           r"not match C sm_device")


@case
def missing_copied_out_parameter():
    # the 0.1 prototype of sm_contiguous (no int* copied)
    expect_planted_failure("out::Ref{sm_tensor}, copied::Ref{Cint})::sm_status\nsm_clone",
                           "out::Ref{sm_tensor})::sm_status\nsm_clone",
                           r"sm_contiguous: 3 arguments, the C prototype has 4")


@case
def by_value_struct_layout():
    # sm_device {int32_t type; int32_t index;} with a 64-bit index
    expect_planted_failure("    type::Int32\n    index::Int32\n", "    type::Int32\n    index::Int64\n",
                           r"layout of Julia sm_device \(= SMDevice\) .* differs from C sm_device")


@case
def by_value_struct_must_be_immutable():
    expect_planted_failure("struct SMDevice\n", "mutable struct SMDevice\n",
                           r"\(= SMDevice\) is a mutable struct")


@case
def integer_for_by_value_struct():
    expect_planted_failure("sm_synchronize(device::sm_device)", "sm_synchronize(device::Int64)",
                           r"sm_synchronize: argument 1 \(device\): Julia Int64 .* does not match C sm_device")


@case
def cstring_for_non_char_pointer():
    expect_planted_failure("sm_shape(t::sm_tensor, out::Ptr{Int64}", "sm_shape(t::sm_tensor, out::Cstring",
                           r"sm_shape: argument 2 \(out\)")


@case
def ref_is_not_a_return_type():
    expect_planted_failure("sm_last_error()::Cstring", "sm_last_error()::Ref{UInt8}",
                           r"sm_last_error: return type: Ref\{\.\.\.\} is not a valid")


@case
def varargs_call():
    expect_planted_failure("sm_ndim(t::sm_tensor, out::Ref{Int32})",
                           "sm_ndim(t::sm_tensor; out::Ref{Int32})",
                           r"sm_ndim: varargs")


@case
def missing_type_annotation():
    expect_planted_failure("sm_tensor_retain(t::sm_tensor)", "sm_tensor_retain(t)",
                           r"argument 't' has no type annotation")


@case
def unknown_julia_type():
    expect_planted_failure("sm_get_num_threads(out::Ref{Int32})",
                           "sm_get_num_threads(out::Ref{NoSuchType})",
                           r"unknown Julia type 'NoSuchType'")


@case
def wrong_constant_value():
    expect_planted_failure("const SM_ERR_SHAPE = sm_status(4)", "const SM_ERR_SHAPE = sm_status(5)",
                           r"const SM_ERR_SHAPE = 5, the header says 4")


@case
def plain_ccall_is_refused():
    expect_planted_failure("end # module LibStrideMem",
                           "bad() = ccall((:sm_ndim, libstridemem()), Int32, ())\nend # module LibStrideMem",
                           r"plain ccall\(\.\.\.\) cannot be checked")


@case
def qualified_plain_ccall_is_refused():
    expect_planted_failure("end # module LibStrideMem",
                           "bad() = Base.ccall((:sm_ndim, libstridemem()), Int32, ())\n"
                           "end # module LibStrideMem",
                           r"plain ccall\(\.\.\.\) cannot be checked")


@case
def callback_with_wrong_arity():
    # the sm_deleter given to sm_from_blob is void (*)(void* data, void* ctx)
    expect_planted_failure("@cfunction(_blob_deleter, Cvoid, (Ptr{Cvoid}, Ptr{Cvoid}))",
                           "@cfunction(_blob_deleter, Cvoid, (Ptr{Cvoid},))",
                           r"@cfunction\(_, Cvoid, \(Ptr\{Cvoid\}\)\) matches no function-pointer type",
                           path="src/StrideMem.jl")


@case
def callback_with_wrong_types():
    expect_planted_failure("@cfunction(_blob_deleter, Cvoid, (Ptr{Cvoid}, Ptr{Cvoid}))",
                           "@cfunction(_blob_deleter, Cint, (Ptr{Cvoid}, Int32))",
                           r"matches no function-pointer type of the header \(sm_deleter: void",
                           path="src/StrideMem.jl")


@case
def callback_with_typed_pointer_for_void():
    # a typed pointer where C passes void*: no longer an sm_deleter
    expect_planted_failure("@cfunction(_blob_deleter, Cvoid, (Ptr{Cvoid}, Ptr{Cvoid}))",
                           "@cfunction(_blob_deleter, Cvoid, (Ptr{Int64}, Ptr{Cvoid}))",
                           r"matches no function-pointer type",
                           path="src/StrideMem.jl")


@case
def oom_callback_with_the_wrong_struct():
    # the sm_oom_observer is void (*)(const sm_oom_info* info, void* user_data)
    expect_planted_failure("(Ptr{sm_oom_info}, Ptr{Cvoid}))",
                           "(Ptr{MemoryStats}, Ptr{Cvoid}))",
                           r"@cfunction\(_, Cvoid, \(Ptr\{MemoryStats\}, Ptr\{Cvoid\}\)\) matches no "
                           r"function-pointer type",
                           path="src/StrideMem.jl")


@case
def oom_info_layout_differs():
    # a field dropped from the Julia mirror of sm_oom_info
    expect_planted_failure("    reserved0::UInt32\n    requested_bytes::Int64\n",
                           "    requested_bytes::Int64\n",
                           r"matches no function-pointer type")


@case
def interpolated_function_pointer_is_refused():
    expect_planted_failure("@ccall libstridemem().sm_tensor_retain(t::sm_tensor)",
                           "@ccall $(fp)(t::sm_tensor)",
                           r"calls an interpolated function pointer")


@case
def declared_but_not_exported():
    # A prototype the header declares but the library does not export: only
    # the nm part can see it.
    need_lib()
    with tempfile.TemporaryDirectory() as tmp:
        header = os.path.join(tmp, "stridemem.h")
        text = open(HEADER, encoding="utf-8").read()
        anchor = "SM_API sm_status sm_debug_fail_alloc("
        expect(text.count(anchor) == 1, "header anchor for planting not found")
        text = text.replace(anchor, "SM_API sm_status sm_not_in_library(int32_t x);\n" + anchor)
        open(header, "w", encoding="utf-8").write(text)
        pkg = copy_package(tmp)
        lib_jl = os.path.join(pkg, "src", "lib.jl")
        with open(lib_jl, "a", encoding="utf-8") as f:
            f.write("\nnot_in_library(x) = @ccall libstridemem().sm_not_in_library(x::Int32)::Int32\n")
        rc, out = run_checker(package=pkg, header=header, lib=LIB)
        expect(rc == 1, "exit %d, expected 1" % rc, out)
        expect("sm_not_in_library: not exported by" in out, "missing 'not exported' problem", out)
        expect("sm_not_in_library: not declared" not in out, "it is declared in this header", out)


@case
def source_file_never_included():
    expect_planted_failure('include("interop.jl")\n', "", r"interop\.jl: included 0 times",
                           path="src/StrideMem.jl")


@case
def test_file_included_twice():
    expect_planted_failure('include("stack.jl")\n', 'include("stack.jl")\n        include("stack.jl")\n',
                           r"stack\.jl: included 2 times", path="test/runtests.jl")


@case
def include_of_a_missing_file():
    expect_planted_failure('include("memory.jl")\n', 'include("memory.jl")\ninclude("nowhere.jl")\n',
                           r'include\("nowhere\.jl"\): no such file', path="src/StrideMem.jl")


@case
def binding_version_differs_from_repository():
    need_lib()
    with open(os.path.join(REPO, "VERSION")) as f:
        major, minor = f.read().strip().split(".")[:2]
    expect_planted_failure('const BINDING_VERSION = v"', 'const BINDING_VERSION = v"%d.%d.0" # v"'
                           % (int(major), int(minor) + 1), r"BINDING_VERSION .* does not match",
                           path="src/StrideMem.jl")


@case
def dependency_without_compat():
    expect_planted_failure('Libdl = "1"\n', "", r"Project\.toml: no \[compat\] entry for Libdl",
                           path="Project.toml")


@case
def test_extra_without_compat():
    expect_planted_failure('Test = "1"\n', "", r"Project\.toml: no \[compat\] entry for Test",
                           path="Project.toml")


def fake_repository(tmp, license_text):
    """A repository root next to a copy of the package: the real header and
    VERSION, and a LICENSE with license_text (None: no LICENSE). Returns the
    header's path (the checker finds the root from it) and the package's."""
    root = os.path.join(tmp, "repo")
    os.makedirs(os.path.join(root, "include"))
    shutil.copy(HEADER, os.path.join(root, "include", "stridemem.h"))
    shutil.copy(os.path.join(REPO, "VERSION"), os.path.join(root, "VERSION"))
    if license_text is not None:
        open(os.path.join(root, "LICENSE"), "w", encoding="utf-8").write(license_text)
    return os.path.join(root, "include", "stridemem.h"), copy_package(tmp)


@case
def package_license_must_match_the_repository():
    need_lib()
    ours = open(os.path.join(PACKAGE, "LICENSE"), encoding="utf-8").read()
    with tempfile.TemporaryDirectory() as tmp:
        header, pkg = fake_repository(tmp, ours)
        rc, out = run_checker(package=pkg, header=header, lib=LIB)
        expect(rc == 0, "the same LICENSE in the package and the repository was refused", out)
    with tempfile.TemporaryDirectory() as tmp:
        header, pkg = fake_repository(tmp, ours.replace("2026", "1999"))
        rc, out = run_checker(package=pkg, header=header, lib=LIB)
        expect(rc == 1, "a package LICENSE that differs from the repository's passed", out)
        expect(re.search(r"LICENSE differs from .*LICENSE", out) is not None,
               "the differing LICENSE is not named", out)


@case
def package_license_missing_or_a_symlink():
    need_lib()
    with tempfile.TemporaryDirectory() as tmp:
        header, pkg = fake_repository(tmp, None)
        os.remove(os.path.join(pkg, "LICENSE"))
        rc, out = run_checker(package=pkg, header=header, lib=LIB)
        expect(rc == 1 and re.search(r"LICENSE: missing or a symlink", out) is not None,
               "a package without LICENSE passed", out)
        # A symlink to the repository's would dangle once Pkg installs the folder alone.
        open(os.path.join(tmp, "repo", "LICENSE"), "w").write("text\n")
        os.symlink(os.path.join("..", "repo", "LICENSE"), os.path.join(pkg, "LICENSE"))
        rc, out = run_checker(package=pkg, header=header, lib=LIB)
        expect(rc == 1 and re.search(r"LICENSE: missing or a symlink", out) is not None,
               "a LICENSE symlink passed", out)


# ---------------------------------------------------------------------------
# The library is never optional
# ---------------------------------------------------------------------------

@case
def missing_library_fails():
    rc, out = run_checker(lib="/nonexistent/libstridemem.so")
    expect(rc != 0, "a missing library did not fail the check", out)
    expect("does not exist" in out, "no explanation for the missing library", out)


@case
def no_library_given_fails():
    rc, out = run_checker(lib=None)
    expect(rc != 0, "no --lib and no STRIDEMEM_LIB did not fail the check", out)
    expect("no library" in out, "no explanation for the absent library", out)


@case
def not_a_shared_library_fails():
    with tempfile.NamedTemporaryFile("w", suffix=".so", delete=False) as f:
        f.write("not an ELF file\n")
        path = f.name
    try:
        rc, out = run_checker(lib=path)
        expect(rc != 0, "a non-library file passed the nm check", out)
    finally:
        os.unlink(path)


# ---------------------------------------------------------------------------
# The parser: the @ccall forms, comments, strings and docstrings
# ---------------------------------------------------------------------------

SYNTHETIC = r'''
module Synthetic
const sm_status = Int32
mutable struct sm_tensor_ end
const sm_tensor = Ptr{sm_tensor_}
struct Dev
    type::Int32   # DLPack device type
    index::Int32
end
const lib = "libstridemem"
libfn() = lib

"""
A docstring mentioning `@ccall lib.sm_nothing(x::Int8)::Int8`, which is not code.
"""
f1(t, out) = @ccall lib.sm_ndim(t::sm_tensor, out::Ref{Int32})::sm_status
# @ccall lib.sm_commented_out(x::Int8)::Int8
f2(t, out, cap) = @ccall libfn().sm_shape(
    t::sm_tensor,          # the tensor
    out::Ptr{Int64},       # capacity elements
    cap::Int32,
)::sm_status
f3(d) = @ccall gc_safe=true lib.sm_synchronize(d::Dev)::sm_status
f4(d, b, n, m) = @ccall $(lib).sm_memory_summary(d::Dev, b::Cstring, n::Csize_t, m::Ref{Csize_t})::sm_status
f5() = @ccall "libstridemem".sm_last_error()::Ptr{UInt8}
f6(s) = @ccall lib.sm_status_string(s::Cint)::Cstring
g(x) = x' * 2   # an adjoint, not a character literal
h = 'a'
end
'''


@case
def parser_accepts_every_form():
    need_lib()
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "Synthetic", "src"))
        open(os.path.join(tmp, "Synthetic", "src", "Synthetic.jl"), "w").write(SYNTHETIC)
        rc, out = run_checker(package=os.path.join(tmp, "Synthetic"), lib=LIB)
        expect(rc == 0, "valid @ccall forms were refused (exit %d)" % rc, out)
        expect("checked 6 @ccall sites in 1 files: 6 distinct symbols" in out,
               "expected exactly the 6 real @ccalls (docstring and comment ignored)", out)
        expect("does not wrap" in out, "unwrapped functions are not reported", out)


@case
def parser_reports_problems_in_multiline_calls():
    need_lib()
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "Synthetic", "src"))
        bad = SYNTHETIC.replace("    cap::Int32,\n", "    cap::Int64,\n")
        open(os.path.join(tmp, "Synthetic", "src", "Synthetic.jl"), "w").write(bad)
        rc, out = run_checker(package=os.path.join(tmp, "Synthetic"), lib=LIB)
        expect(rc == 1, "a wrong type in a multi-line call passed", out)
        expect(re.search(r"Synthetic\.jl:\d+: sm_shape: argument 3 \(capacity\)", out) is not None,
               "the problem is not located", out)


if __name__ == "__main__":
    sys.exit(cases.run())

#!/usr/bin/env python3
"""Tests tools/api_table.py, the one table of the C API that every binding is
checked against (no Julia runtime and no Rust build are needed for it, so it
is what stands between a wrong foreign signature and a crash).

  api_table_check.py bindings   the real Julia, Rust and Python bindings pass
                                against the real library (STRIDEMEM_LIB), and
                                the tool refuses a missing library
  api_table_check.py mutations  copies of each binding with one declaration
                                changed by hand must fail, naming it

Exit 0 when every case passes; prints `N passed, M failed`.
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
TOOL = os.path.join(REPO, "tools", "api_table.py")
JULIA = os.path.join(REPO, "bindings", "julia", "StrideMem")
SYS_RS = os.path.join(REPO, "bindings", "rust", "src", "sys.rs")
PYTHON = os.path.join(REPO, "bindings", "python")
HEADERS = [os.path.join(REPO, "include", h)
           for h in ("stridemem_version.h", "stridemem.h", "stridemem_dlpack.h")]
LIB = os.environ.get("STRIDEMEM_LIB", "")

bindings_cases = Cases()
mutation_cases = Cases()


def need_lib():
    expect(bool(LIB), "STRIDEMEM_LIB is not set: the tool's nm part needs the built library")
    expect(os.path.isfile(LIB), "STRIDEMEM_LIB=%s does not exist" % LIB)


def run_tool(*args, lib=None, use_env=False):
    cmd = [sys.executable, TOOL] + list(args)
    env = dict(os.environ)
    env.pop("STRIDEMEM_LIB", None)
    env.pop("PYTHONPATH", None)  # the tool must find the Python package it is given
    if use_env:
        env["STRIDEMEM_LIB"] = lib or ""
    elif lib is not None:
        cmd += ["--lib", lib]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    return r.returncode, r.stdout + r.stderr


def replace_once(path, old, new, count=1):
    """`old` replaced by `new` in path; old must occur exactly `count` times, so
    that a stale test fails loudly instead of checking nothing."""
    text = open(path, encoding="utf-8").read()
    n = text.count(old)
    expect(n == count, "planting: %r occurs %d times in %s, expected %d" % (old, n, path, count))
    open(path, "w", encoding="utf-8").write(text.replace(old, new))


def expect_fails(rc, out, needles, what):
    expect(rc == 1, "tool exit status %d, expected 1 (%s)" % (rc, what), out)
    for needle in needles:
        expect(re.search(needle, out) is not None, "tool output lacks %r (%s)" % (needle, what), out)


# ---------------------------------------------------------------------------
# One mutation per binding: copy, change one declaration, run the tool on it
# ---------------------------------------------------------------------------

def julia_mutant(old, new, *needles, path="src/lib.jl", extra=()):
    need_lib()
    with tempfile.TemporaryDirectory() as tmp:
        pkg = os.path.join(tmp, "StrideMem")
        shutil.copytree(JULIA, pkg)
        replace_once(os.path.join(pkg, path), old, new)
        rc, out = run_tool("--only", "julia", "--julia", pkg, *extra, lib=LIB)
    expect_fails(rc, out, needles, "julia: %r -> %r" % (old, new))


def rust_mutant(old, new, *needles):
    need_lib()
    with tempfile.TemporaryDirectory() as tmp:
        rs = os.path.join(tmp, "sys.rs")
        shutil.copy(SYS_RS, rs)
        replace_once(rs, old, new)
        rc, out = run_tool("--only", "rust", "--rust", rs, lib=LIB)
    expect_fails(rc, out, needles, "rust: %r -> %r" % (old, new))


def python_mutant(old, new, *needles):
    """The package is copied whole and `old` is looked for in every module, so
    the case holds whichever file of the package declares it."""
    need_lib()
    with tempfile.TemporaryDirectory() as tmp:
        dst = os.path.join(tmp, "python")
        shutil.copytree(PYTHON, dst, ignore=shutil.ignore_patterns("__pycache__"))
        hits = []
        for d, _, names in os.walk(os.path.join(dst, "stridemem")):
            for n in names:
                if n.endswith(".py"):
                    f = os.path.join(d, n)
                    c = open(f, encoding="utf-8").read().count(old)
                    hits += [f] * c
        expect(len(hits) == 1, "planting: %r occurs %d times in the Python package, expected 1"
               % (old, len(hits)))
        replace_once(hits[0], old, new)
        rc, out = run_tool("--only", "python", "--python", dst, lib=LIB)
    expect_fails(rc, out, needles, "python: %r -> %r" % (old, new))


case = mutation_cases.case

# --- Julia -----------------------------------------------------------------


@case
def julia_argument_dropped():
    julia_mutant("out::Ptr{Int64}, capacity::Int32)::sm_status\nsm_strides",
                 "out::Ptr{Int64})::sm_status\nsm_strides",
                 r"julia .*lib\.jl:\d+: sm_shape: 2 arguments, the C prototype has 3")


@case
def julia_copied_out_parameter_dropped():
    julia_mutant("out::Ref{sm_tensor}, copied::Ref{Cint})::sm_status\nsm_clone",
                 "out::Ref{sm_tensor})::sm_status\nsm_clone",
                 r"sm_contiguous: 3 arguments, the C prototype has 4")


@case
def julia_integer_size():
    julia_mutant("sm_slice(t::sm_tensor, dim::Int32, start::Int64,",
                 "sm_slice(t::sm_tensor, dim::Int32, start::Int32,",
                 r"julia .*lib\.jl:\d+: sm_slice: argument 3 \(start\): Julia Int32 .* does not match "
                 r"C int64_t")


@case
def julia_signedness():
    julia_mutant("sm_view(t::sm_tensor, shape::Ptr{Int64}, ndim::Int32,",
                 "sm_view(t::sm_tensor, shape::Ptr{Int64}, ndim::UInt32,",
                 r"sm_view: argument 3 \(ndim\): Julia UInt32 \(4-byte unsigned integer\) "
                 r"does not match C int32_t \(4-byte signed integer\)")


@case
def julia_misspelled_symbol():
    julia_mutant("libstridemem().sm_empty(shape", "libstridemem().sm_emtpy(shape",
                 r"sm_emtpy: not exported by", r"sm_emtpy: not declared in",
                 r"sm_empty: declared in include/stridemem\.h:\d+ but no @ccall calls it")


@case
def julia_missing_function():
    julia_mutant("sm_pop_tag() =\n    @ccall libstridemem().sm_pop_tag()::sm_status\n",
                 "sm_pop_tag() = SM_OK\n",
                 r"sm_pop_tag: declared in include/stridemem\.h:\d+ but no @ccall calls it")


@case
def julia_return_type():
    julia_mutant("sm_dtype_size(dtype::sm_dtype)::Csize_t", "sm_dtype_size(dtype::sm_dtype)::Cint",
                 r"sm_dtype_size: return type: Julia Cint .* does not match C size_t")


@case
def julia_pointee_type():
    julia_mutant("sm_numel(t::sm_tensor, out::Ref{Int64})", "sm_numel(t::sm_tensor, out::Ref{Int32})",
                 r"sm_numel: argument 2 \(out\) \(pointee\): Julia Int32")


@case
def julia_untyped_pointer_for_typed_c_pointer():
    julia_mutant("sm_numel(t::sm_tensor, out::Ref{Int64})", "sm_numel(t::sm_tensor, out::Ptr{Cvoid})",
                 r"sm_numel: argument 2 \(out\): Julia Ptr\{Cvoid\} loses the pointee")


@case
def julia_handle_of_the_wrong_kind():
    julia_mutant("sm_storage_retain(s::sm_storage)", "sm_storage_retain(s::sm_tensor)",
                 r"sm_storage_retain: argument 1 \(s\) \(pointee\): Julia sm_tensor_")


@case
def julia_struct_by_value_for_struct_pointer():
    julia_mutant("flags::UInt32, device::Ptr{sm_device},", "flags::UInt32, device::sm_device,",
                 r"sm_to_dlpack_ex: argument 3 \(device\): Julia sm_device .* does not "
                 r"match C const sm_device\* \(pointer to sm_device\)")


@case
def julia_wrong_struct_pointee():
    julia_mutant("flags::UInt32, device::Ptr{sm_device},", "flags::UInt32, device::Ptr{Int64},",
                 r"sm_to_dlpack_ex: argument 3 \(device\) \(pointee\): Julia Int64 .* does "
                 r"not match C sm_device")


@case
def julia_struct_field_type():
    julia_mutant("    type::Int32\n    index::Int32\n", "    type::Int32\n    index::Int64\n",
                 r"layout of Julia sm_device \(= SMDevice\) .* differs from C sm_device",
                 r"julia .*lib\.jl:\d+: struct sm_device: field index: Julia Int64 .* does not match "
                 r"C int32_t")


@case
def julia_struct_field_order():
    julia_mutant("    nbytes::Int64             # the storage's size\n"
                 "    offset::Int64             # where it starts in the shared object, in bytes\n",
                 "    offset::Int64\n    nbytes::Int64\n",
                 r"struct sm_share_desc: fields are \(magic, format, struct_size, kind, library_version, "
                 r"device, offset, nbytes, .*the header has \(.*device, nbytes, offset,")


@case
def julia_by_value_struct_must_be_immutable():
    julia_mutant("struct SMDevice\n", "mutable struct SMDevice\n", r"\(= SMDevice\) is a mutable struct")


@case
def julia_integer_for_by_value_struct():
    julia_mutant("sm_synchronize(device::sm_device)", "sm_synchronize(device::Int64)",
                 r"sm_synchronize: argument 1 \(device\): Julia Int64 .* does not match C sm_device")


@case
def julia_cstring_for_non_char_pointer():
    julia_mutant("sm_shape(t::sm_tensor, out::Ptr{Int64}", "sm_shape(t::sm_tensor, out::Cstring",
                 r"sm_shape: argument 2 \(out\)")


@case
def julia_ref_is_not_a_return_type():
    julia_mutant("sm_last_error()::Cstring", "sm_last_error()::Ref{UInt8}",
                 r"sm_last_error: return type: Ref\{\.\.\.\} is not a valid")


@case
def julia_varargs_call():
    julia_mutant("sm_ndim(t::sm_tensor, out::Ref{Int32})", "sm_ndim(t::sm_tensor; out::Ref{Int32})",
                 r"sm_ndim: varargs")


@case
def julia_missing_type_annotation():
    julia_mutant("sm_tensor_retain(t::sm_tensor)", "sm_tensor_retain(t)",
                 r"argument 't' has no type annotation")


@case
def julia_unknown_type():
    julia_mutant("sm_get_num_threads(out::Ref{Int32})", "sm_get_num_threads(out::Ref{NoSuchType})",
                 r"unknown Julia type 'NoSuchType'")


@case
def julia_constant_value():
    julia_mutant("const SM_ERR_SHAPE = sm_status(4)", "const SM_ERR_SHAPE = sm_status(5)",
                 r"julia .*lib\.jl:\d+: const SM_ERR_SHAPE = 5, the header \(include/stridemem\.h:\d+\) says 4")


@case
def julia_plain_ccall_is_refused():
    julia_mutant("end # module LibStrideMem",
                 "bad() = ccall((:sm_ndim, libstridemem()), Int32, ())\nend # module LibStrideMem",
                 r"plain ccall\(\.\.\.\) cannot be checked")


@case
def julia_qualified_plain_ccall_is_refused():
    julia_mutant("end # module LibStrideMem",
                 "bad() = Base.ccall((:sm_ndim, libstridemem()), Int32, ())\nend # module LibStrideMem",
                 r"plain ccall\(\.\.\.\) cannot be checked")


@case
def julia_interpolated_function_pointer_is_refused():
    julia_mutant("@ccall libstridemem().sm_tensor_retain(t::sm_tensor)", "@ccall $(fp)(t::sm_tensor)",
                 r"calls an interpolated function pointer")


@case
def julia_callback_with_wrong_arity():
    # the sm_deleter given to sm_from_blob is void (*)(void* data, void* ctx)
    julia_mutant("@cfunction(_blob_deleter, Cvoid, (Ptr{Cvoid}, Ptr{Cvoid}))",
                 "@cfunction(_blob_deleter, Cvoid, (Ptr{Cvoid},))",
                 r"@cfunction\(_, Cvoid, \(Ptr\{Cvoid\}\)\) matches no function-pointer type",
                 path="src/StrideMem.jl")


@case
def julia_callback_with_wrong_types():
    julia_mutant("@cfunction(_blob_deleter, Cvoid, (Ptr{Cvoid}, Ptr{Cvoid}))",
                 "@cfunction(_blob_deleter, Cint, (Ptr{Cvoid}, Int32))",
                 r"matches no function-pointer type of the header \(sm_deleter: void",
                 path="src/StrideMem.jl")


@case
def julia_callback_with_typed_pointer_for_void():
    julia_mutant("@cfunction(_blob_deleter, Cvoid, (Ptr{Cvoid}, Ptr{Cvoid}))",
                 "@cfunction(_blob_deleter, Cvoid, (Ptr{Int64}, Ptr{Cvoid}))",
                 r"matches no function-pointer type", path="src/StrideMem.jl")


@case
def julia_oom_callback_with_the_wrong_struct():
    julia_mutant("(Ptr{sm_oom_info}, Ptr{Cvoid}))", "(Ptr{MemoryStats}, Ptr{Cvoid}))",
                 r"@cfunction\(_, Cvoid, \(Ptr\{MemoryStats\}, Ptr\{Cvoid\}\)\) matches no "
                 r"function-pointer type", path="src/StrideMem.jl")


@case
def julia_oom_info_field_dropped():
    julia_mutant("    reserved0::UInt32\n    requested_bytes::Int64\n", "    requested_bytes::Int64\n",
                 r"matches no function-pointer type",
                 r"struct sm_oom_info: fields are \(struct_size, device, requested_bytes")


@case
def julia_source_file_never_included():
    julia_mutant('include("interop.jl")\n', "", r"interop\.jl: included 0 times", path="src/StrideMem.jl")


@case
def julia_test_file_included_twice():
    julia_mutant('include("stack.jl")\n', 'include("stack.jl")\n        include("stack.jl")\n',
                 r"stack\.jl: included 2 times", path="test/runtests.jl")


@case
def julia_include_of_a_missing_file():
    julia_mutant('include("memory.jl")\n', 'include("memory.jl")\ninclude("nowhere.jl")\n',
                 r'include\("nowhere\.jl"\): no such file', path="src/StrideMem.jl")


@case
def julia_binding_version_differs_from_repository():
    with open(os.path.join(REPO, "VERSION")) as f:
        major, minor = f.read().strip().split(".")[:2]
    julia_mutant('const BINDING_VERSION = v"', 'const BINDING_VERSION = v"%d.%d.0" # v"'
                 % (int(major), int(minor) + 1), r"BINDING_VERSION .* does not match",
                 path="src/StrideMem.jl")


@case
def julia_dependency_without_compat():
    julia_mutant('Libdl = "1"\n', "", r"Project\.toml: no \[compat\] entry for Libdl", path="Project.toml")


@case
def julia_test_extra_without_compat():
    julia_mutant('Test = "1"\n', "", r"Project\.toml: no \[compat\] entry for Test", path="Project.toml")


def fake_repository(tmp, license_text):
    """A repository root with the real headers and VERSION and a LICENSE with
    license_text (None: no LICENSE), next to a copy of the Julia package.
    Returns the --header arguments (the tool finds the root from them) and the
    package's folder."""
    root = os.path.join(tmp, "repo")
    os.makedirs(os.path.join(root, "include"))
    args = []
    for h in HEADERS:
        shutil.copy(h, os.path.join(root, "include"))
        args += ["--header", os.path.join(root, "include", os.path.basename(h))]
    shutil.copy(os.path.join(REPO, "VERSION"), os.path.join(root, "VERSION"))
    if license_text is not None:
        open(os.path.join(root, "LICENSE"), "w", encoding="utf-8").write(license_text)
    pkg = os.path.join(tmp, "StrideMem")
    shutil.copytree(JULIA, pkg)
    return args, pkg


@case
def julia_package_license_must_match_the_repository():
    need_lib()
    ours = open(os.path.join(JULIA, "LICENSE"), encoding="utf-8").read()
    with tempfile.TemporaryDirectory() as tmp:
        hargs, pkg = fake_repository(tmp, ours)
        rc, out = run_tool("--only", "julia", "--julia", pkg, *hargs, lib=LIB)
        expect(rc == 0, "the same LICENSE in the package and the repository was refused", out)
    with tempfile.TemporaryDirectory() as tmp:
        hargs, pkg = fake_repository(tmp, ours.replace("2026", "1999"))
        rc, out = run_tool("--only", "julia", "--julia", pkg, *hargs, lib=LIB)
        expect_fails(rc, out, [r"LICENSE differs from .*LICENSE"], "a package LICENSE that differs")


@case
def julia_package_license_missing_or_a_symlink():
    need_lib()
    with tempfile.TemporaryDirectory() as tmp:
        hargs, pkg = fake_repository(tmp, None)
        os.remove(os.path.join(pkg, "LICENSE"))
        rc, out = run_tool("--only", "julia", "--julia", pkg, *hargs, lib=LIB)
        expect_fails(rc, out, [r"LICENSE: missing or a symlink"], "a package without LICENSE")
        # A symlink to the repository's would dangle once Pkg installs the folder alone.
        open(os.path.join(tmp, "repo", "LICENSE"), "w").write("text\n")
        os.symlink(os.path.join("..", "repo", "LICENSE"), os.path.join(pkg, "LICENSE"))
        rc, out = run_tool("--only", "julia", "--julia", pkg, *hargs, lib=LIB)
        expect_fails(rc, out, [r"LICENSE: missing or a symlink"], "a LICENSE symlink")


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


def synthetic(tmp, text):
    os.makedirs(os.path.join(tmp, "Synthetic", "src"))
    open(os.path.join(tmp, "Synthetic", "src", "Synthetic.jl"), "w").write(text)
    return os.path.join(tmp, "Synthetic")


@case
def julia_parser_accepts_every_form():
    need_lib()
    with tempfile.TemporaryDirectory() as tmp:
        rc, out = run_tool("--only", "julia", "--partial", "--julia", synthetic(tmp, SYNTHETIC), lib=LIB)
    expect(rc == 0, "valid @ccall forms were refused (exit %d)" % rc, out)
    expect("julia: 6 @ccall sites in 1 files, 6 distinct symbols" in out,
           "expected exactly the 6 real @ccalls (docstring and comment ignored)", out)
    expect("but no @ccall calls it" in out, "unwrapped functions are not noted", out)


@case
def julia_parser_reports_problems_in_multiline_calls():
    need_lib()
    with tempfile.TemporaryDirectory() as tmp:
        pkg = synthetic(tmp, SYNTHETIC.replace("    cap::Int32,\n", "    cap::Int64,\n"))
        rc, out = run_tool("--only", "julia", "--partial", "--julia", pkg, lib=LIB)
    expect_fails(rc, out, [r"Synthetic\.jl:\d+: sm_shape: argument 3 \(capacity\)"],
                 "a wrong type in a multi-line call")


# --- Rust ------------------------------------------------------------------

@case
def rust_argument_type():
    rust_mutant("        dim: i32,\n        start: i64,\n        stop: i64,",
                "        dim: i32,\n        start: i32,\n        stop: i64,",
                r"rust .*sys\.rs:\d+: sm_slice: argument 3 \(start\): Rust i32 \(4-byte signed integer\) "
                r"does not match C int64_t")


@case
def rust_argument_dropped():
    rust_mutant("pub fn sm_shape(t: sm_tensor, out: *mut i64, capacity: i32)",
                "pub fn sm_shape(t: sm_tensor, out: *mut i64)",
                r"rust .*sys\.rs:\d+: sm_shape: 2 arguments, the header \(include/stridemem\.h:\d+\) "
                r"has 3 \(sm_tensor t, int64_t\* out, int32_t capacity\)")


@case
def rust_return_type():
    rust_mutant("pub fn sm_dtype_size(dtype: sm_dtype) -> usize;",
                "pub fn sm_dtype_size(dtype: sm_dtype) -> u32;",
                r"sm_dtype_size: return type: Rust u32 .* does not match C size_t")


@case
def rust_return_type_dropped():
    rust_mutant("pub fn sm_pop_tag() -> sm_status;", "pub fn sm_pop_tag();",
                r"sm_pop_tag: return type: Rust \(\) \(void\) does not match C sm_status")


@case
def rust_pointee_type():
    rust_mutant("pub fn sm_numel(t: sm_tensor, out: *mut i64)", "pub fn sm_numel(t: sm_tensor, out: *mut i32)",
                r"sm_numel: argument 2 \(out\) \(pointee\): Rust i32")


@case
def rust_const_pointer_the_library_writes_through():
    rust_mutant("pub fn sm_numel(t: sm_tensor, out: *mut i64)", "pub fn sm_numel(t: sm_tensor, out: *const i64)",
                r"sm_numel: argument 2 \(out\): Rust \*const i64 but C int64_t\* is not const")


@case
def rust_handle_of_the_wrong_kind():
    rust_mutant("pub fn sm_storage_retain(s: sm_storage)", "pub fn sm_storage_retain(s: sm_tensor)",
                r"sm_storage_retain: argument 1 \(s\) \(pointee\): Rust sm_tensor_")


@case
def rust_missing_function():
    rust_mutant("    pub fn sm_pop_tag() -> sm_status;\n", "",
                r"sm_pop_tag: declared in include/stridemem\.h:\d+ but not in sys\.rs")


@case
def rust_function_the_header_lacks():
    rust_mutant("    pub fn sm_pop_tag() -> sm_status;\n",
                "    pub fn sm_pop_tag() -> sm_status;\n    pub fn sm_not_in_header(x: i32) -> sm_status;\n",
                r"sm_not_in_header: not declared in the header", r"sm_not_in_header: not exported")


@case
def rust_struct_field_type():
    rust_mutant("    pub type_: i32,\n    pub index: i32,\n", "    pub type_: i32,\n    pub index: i64,\n",
                r"rust .*sys\.rs:\d+: struct sm_device: field index: Rust i64 .* does not match C int32_t",
                r"sm_synchronize: argument 1 \(device\): layout of Rust sm_device")


@case
def rust_struct_field_order():
    rust_mutant("    pub nbytes: i64,\n    /// Where it starts in the shared object, in bytes.\n    pub offset: i64,\n",
                "    pub offset: i64,\n    pub nbytes: i64,\n",
                r"struct sm_share_desc: fields are \(.*device, offset, nbytes,.*\), the header has "
                r"\(.*device, nbytes, offset,")


@case
def rust_struct_padding_moves_offsets():
    # same fields, same scalar sequence, but a 4-byte field where C has 8:
    # every later offset moves
    rust_mutant("    pub version: sm_DLPackVersion,\n    pub manager_ctx: *mut c_void,",
                "    pub version: sm_DLPackVersion,\n    pub manager_ctx: u32,",
                r"struct sm_DLManagedTensorVersioned: field manager_ctx: Rust u32")


@case
def rust_struct_not_repr_c():
    rust_mutant("#[repr(C)]\n#[derive(Clone, Copy, Debug, PartialEq, Eq)]\npub struct sm_DLPackVersion",
                "#[derive(Clone, Copy, Debug, PartialEq, Eq)]\npub struct sm_DLPackVersion",
                r"struct sm_DLPackVersion is not #\[repr\(C\)\]")


@case
def rust_struct_missing():
    rust_mutant("pub struct sm_DLPackVersion {", "pub struct DLPackVersionRenamed {",
                r"struct sm_DLPackVersion \(include/stridemem_dlpack\.h:\d+\) has no #\[repr\(C\)\] mirror")


@case
def rust_callback_signature():
    rust_mutant("pub type sm_deleter = Option<unsafe extern \"C\" fn(data: *mut c_void, ctx: *mut c_void)>;",
                "pub type sm_deleter = Option<unsafe extern \"C\" fn(data: *mut c_void)>;",
                r"sm_from_blob: argument 7 \(deleter\): Rust function pointer takes 1 arguments, C "
                r"sm_deleter takes 2")


@case
def rust_callback_must_be_nullable():
    rust_mutant("pub type sm_deleter = Option<unsafe extern \"C\" fn(data: *mut c_void, ctx: *mut c_void)>;",
                "pub type sm_deleter = unsafe extern \"C\" fn(data: *mut c_void, ctx: *mut c_void);",
                r"sm_from_blob: argument 7 \(deleter\): Rust sm_deleter cannot be NULL")


@case
def rust_struct_callback_field():
    rust_mutant("pub deleter: Option<unsafe extern \"C\" fn(self_: *mut sm_DLManagedTensor)>,",
                "pub deleter: Option<unsafe extern \"C\" fn(self_: *mut sm_DLManagedTensorVersioned)>,",
                r"struct sm_DLManagedTensor: field deleter \(callback argument 1\)")


@case
def rust_constant_value():
    rust_mutant("pub const SM_ERR_SHAPE: sm_status = 4;", "pub const SM_ERR_SHAPE: sm_status = 5;",
                r"rust .*sys\.rs:\d+: const SM_ERR_SHAPE = 5, the header \(include/stridemem\.h:\d+\) says 4")


@case
def rust_constant_expression():
    rust_mutant("pub const SM_SLICE_NONE: i64 = i64::MIN;", "pub const SM_SLICE_NONE: i64 = i64::MAX;",
                r"const SM_SLICE_NONE = 9223372036854775807, the header .* says -9223372036854775808")


@case
def rust_constant_the_header_lacks():
    rust_mutant("pub const SM_ERR_READ_ONLY: sm_status = 13;",
                "pub const SM_ERR_READ_ONLY: sm_status = 13;\npub const SM_ERR_NOT_IN_HEADER: sm_status = 14;",
                r"const SM_ERR_NOT_IN_HEADER is not a constant of the header")


# --- Python ----------------------------------------------------------------

@case
def python_argument_type():
    python_mutant('"sm_slice": (c_int32, [_T, c_int32, c_int64,', '"sm_slice": (c_int32, [_T, c_int32, c_int32,',
                  r"python .*\.py:\d+: sm_slice: argtypes\[2\] \(start\): Python c_int .* does not match "
                  r"C int64_t")


@case
def python_argument_dropped():
    python_mutant('"sm_shape": (c_int32, [_T, _P64, c_int32]),', '"sm_shape": (c_int32, [_T, _P64]),',
                  r"python .*\.py:\d+: sm_shape: argtypes has 2 entries, the header "
                  r"\(include/stridemem\.h:\d+\) has 3 arguments")


@case
def python_return_type():
    python_mutant('"sm_dtype_size": (c_size_t,', '"sm_dtype_size": (c_int32,',
                  r"sm_dtype_size: restype: Python c_int .* does not match C size_t")


@case
def python_pointee_type():
    python_mutant('"sm_numel": (c_int32, [_T, _P64]),', '"sm_numel": (c_int32, [_T, _P32]),',
                  r"sm_numel: argtypes\[1\] \(out\) \(pointee\): Python c_int")


@case
def python_missing_function():
    python_mutant('    "sm_pop_tag": (c_int32, []),\n', "",
                  r"sm_pop_tag: declared in include/stridemem\.h:\d+ but stridemem\.lib\.sm_pop_tag has no "
                  r"argtypes")


@case
def python_struct_field_type():
    python_mutant('("type", c_int32), ("index", c_int32)]', '("type", c_int32), ("index", c_int64)]',
                  r"python .*\.py:\d+: struct sm_device \(SmDevice\): field index: Python c_long .* "
                  r"does not match C int32_t",
                  r"sm_empty: argtypes\[3\] \(device\): layout of Python SmDevice")


@case
def python_struct_field_order():
    python_mutant('[("code", c_uint8), ("bits", c_uint8),', '[("bits", c_uint8), ("code", c_uint8),',
                  r"struct sm_DLDataType \(DLDataType\): fields are \(bits, code, lanes\), the header has "
                  r"\(code, bits, lanes\)")


@case
def python_constant_value():
    python_mutant("\nERR_SHAPE = 4\n", "\nERR_SHAPE = 5\n",
                  r"python .*\.py:\d+: ERR_SHAPE = 5, the header \(include/stridemem\.h:\d+\) says "
                  r"SM_ERR_SHAPE = 4")


@case
def python_constant_table_value():
    python_mutant('"int16": (3, "int16")', '"int16": (4, "int16")',
                  r"DTYPES\['int16'\] = 4, the header .* says SM_INT16 = 3")


@case
def python_function_the_header_lacks():
    python_mutant('    "sm_pop_tag": (c_int32, []),\n',
                  '    "sm_pop_tag": (c_int32, []),\n    "sm_not_in_header": (c_int32, []),\n',
                  r"importing stridemem failed: .*sm_not_in_header")


@case
def python_message_name_missing():
    python_mutant('"sm_flip": "flip()"', '"sm_flip_renamed": "flip()"',
                  r"_PY_NAMES has no entry for sm_flip \(include/stridemem\.h:\d+\)",
                  r"_PY_NAMES names sm_flip_renamed, which the header does not declare")


# --- the header side -------------------------------------------------------

@case
def declared_but_not_exported():
    # A prototype the header declares but the library does not export: only
    # the nm part can see it.
    need_lib()
    with tempfile.TemporaryDirectory() as tmp:
        hargs = []
        for h in HEADERS:
            dst = os.path.join(tmp, os.path.basename(h))
            shutil.copy(h, dst)
            hargs += ["--header", dst]
        anchor = "SM_API sm_status sm_debug_fail_alloc("
        replace_once(os.path.join(tmp, "stridemem.h"), anchor,
                     "SM_API sm_status sm_not_in_library(int32_t x);\n" + anchor)
        rc, out = run_tool("--only", "rust", *hargs, lib=LIB)
    expect_fails(rc, out, [r"header .*stridemem\.h:\d+: sm_not_in_library is not exported by",
                           r"sm_not_in_library: declared in .*stridemem\.h:\d+ but not in sys\.rs"],
                 "a header function the library lacks")


# ---------------------------------------------------------------------------
# The real bindings, and the library that is never optional
# ---------------------------------------------------------------------------

case = bindings_cases.case


@case
def real_bindings_pass_against_the_built_library():
    need_lib()
    rc, out = run_tool(lib=LIB)
    expect(rc == 0, "the real bindings fail the API table (exit %d)" % rc, out)
    m = re.search(r"table: (\d+) functions, (\d+) structs, (\d+) constants", out)
    expect(m is not None and int(m.group(1)) > 80 and int(m.group(2)) >= 10 and int(m.group(3)) > 50,
           "the table read from the headers looks too small", out)
    nfun = int(m.group(1))
    for binding, pattern in (("julia", r"checked julia: (\d+) @ccall sites in \d+ files, (\d+) distinct"),
                             ("rust", r"checked rust: (\d+) functions, (\d+) structs"),
                             ("python", r"checked python: (\d+) functions, (\d+) structs")):
        b = re.search(pattern, out)
        expect(b is not None, "no summary for %s" % binding, out)
        expect(int(b.group(1)) >= nfun and int(b.group(2)) > 0, "%s: nothing was checked" % binding, out)
    expect(re.search(r"^0 problem\(s\)$", out, re.M) is not None, "no '0 problem(s)' summary", out)


@case
def real_bindings_pass_with_library_from_the_environment():
    need_lib()
    rc, out = run_tool(lib=LIB, use_env=True)
    expect(rc == 0, "STRIDEMEM_LIB from the environment is not used (exit %d)" % rc, out)


@case
def the_julia_package_checks_run_alone():
    r = subprocess.run([sys.executable, os.path.join(REPO, "tools", "check_julia_package.py")],
                       capture_output=True, text=True, timeout=120)
    expect(r.returncode == 0 and "0 problem(s)" in r.stdout, "check_julia_package.py fails",
           r.stdout + r.stderr)


@case
def the_table_dump_has_offsets():
    rc, out = run_tool("--dump")
    expect(rc == 0, "--dump failed", out)
    expect(re.search(r"^struct sm_share_desc size 144 align 8", out, re.M) is not None,
           "sm_share_desc is not 144 bytes in the table", out)
    expect(re.search(r"^struct sm_DLManagedTensorVersioned size 80 align 8", out, re.M) is not None,
           "sm_DLManagedTensorVersioned is not 80 bytes in the table", out)
    expect(re.search(r"^  \+32  sm_DLTensor dl_tensor", out, re.M) is not None,
           "dl_tensor of the versioned managed tensor is not at offset 32", out)
    expect(re.search(r"^constant SM_SLICE_NONE = -9223372036854775808", out, re.M) is not None,
           "SM_SLICE_NONE is not INT64_MIN", out)
    expect(re.search(r"^function sm_status sm_shape\(sm_tensor t, int64_t\* out, int32_t capacity\)",
                     out, re.M) is not None, "sm_shape is not in the table", out)


@case
def missing_library_fails():
    rc, out = run_tool(lib="/nonexistent/libstridemem.so")
    expect(rc == 2 and "does not exist" in out, "a missing library did not fail the check", out)


@case
def no_library_given_fails():
    rc, out = run_tool(lib=None)
    expect(rc == 2 and "no library" in out, "no --lib and no STRIDEMEM_LIB did not fail the check", out)


@case
def not_a_shared_library_fails():
    with tempfile.NamedTemporaryFile("w", suffix=".so", delete=False) as f:
        f.write("not an ELF file\n")
        path = f.name
    try:
        rc, out = run_tool("--only", "rust", lib=path)
        expect(rc != 0, "a non-library file passed the nm check", out)
    finally:
        os.unlink(path)


@case
def unknown_binding_is_refused():
    rc, out = run_tool("--only", "go", lib=LIB or "/nonexistent")
    expect(rc == 2 and "the bindings are julia, rust, python" in out, "--only go was accepted", out)


if __name__ == "__main__":
    which = sys.argv[1:] or ["bindings", "mutations"]
    status = 0
    for w in which:
        if w not in ("bindings", "mutations"):
            print("usage: api_table_check.py [bindings] [mutations]")
            sys.exit(2)
        status |= (bindings_cases if w == "bindings" else mutation_cases).run()
    sys.exit(status)

#!/usr/bin/python3
"""Python traps that used to answer silently and wrongly, each pinned down:
``t.size`` is NumPy's element count (not the shape); ``==``, ``!=`` and the
orderings raise TypeError instead of comparing identities (hashing stays by
identity: sets, dicts, ``t in [t]``), and ``sm.equal`` compares values; one
default-dtype rule, PyTorch's, for every creation function (checked against
torch when it is installed); error messages in the binding's words (Python
names, closed objects, exact integers, "an int32"); a popped stack tensor's
repr; integers printed as integers."""

import math
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _util import Results, import_stridemem  # noqa: E402

sm = import_stridemem()
R = Results("test_python_traps")

try:
    import torch
except Exception:  # torch is optional: the expected table below stands alone
    torch = None


def raises(exc, fn, what, mentions=(), absent=()):
    """fn() raises exc with a message mentioning every `mentions` and none of
    `absent`; returns the exception."""
    return R.raises_exc(exc, fn, what, mentions, absent)


# -- size ---------------------------------------------------------------------

def size_is_the_element_count():
    for shape in [(), (5,), (2, 3, 4), (3, 0), (1, 1, 7)]:
        t = sm.zeros(shape)
        want = np.zeros(shape).size
        R.check(type(t.size) is int, "size of %s is an int, got %r" % (shape, t.size))
        R.equal(t.size, want, "size of %s (NumPy's ndarray.size)" % (shape,))
        R.equal(t.size, t.numel, "size == numel for %s" % (shape,))
        R.equal(t.shape, shape, "shape of %s stays the tuple" % (shape,))
    v = sm.arange(24).view(2, 3, 4).permute(2, 0, 1)[1:, ::2]
    R.equal(v.size, np.arange(24).reshape(2, 3, 4).transpose(2, 0, 1)[1:, ::2].size,
            "size of a strided view")


# -- comparisons ---------------------------------------------------------------

def comparisons_refuse():
    a = sm.arange(6).view(2, 3)
    x = sm.tensor([1])
    cases = [("a == a[:]", lambda: a == a[:], "=="), ("a != a[:]", lambda: a != a[:], "!="),
             ("x == 1", lambda: x == 1, "=="), ("1 == x", lambda: 1 == x, "=="),
             ("x != 1", lambda: x != 1, "!="), ("a == a", lambda: a == a, "=="),
             ("x == None", lambda: x == None, "=="),  # noqa: E711
             ("x < 1", lambda: x < 1, "<"), ("x <= x", lambda: x <= x, "<="),
             ("x > 0", lambda: x > 0, ">"), ("x >= 0", lambda: x >= 0, ">="),
             ("0 < x", lambda: 0 < x, ">")]
    for what, fn, op in cases:
        raises(TypeError, fn, what, ["sm.equal(a, b)", op, "numpy.asarray(a)", "tolist()"])
    with a.storage() as s1, a.storage() as s2:
        raises(TypeError, lambda: s1 == s2, "Storage == Storage", ["a.id == b.id"])
        raises(TypeError, lambda: s1 != s2, "Storage != Storage", ["a.id == b.id"])
        R.check(s1.id == s2.id, "two owners of one storage: same id")
        R.check(len({s1, s2}) == 2 and s1 in [s1], "storages hash by identity")


def tensors_stay_hashable():
    a = sm.zeros(3)
    b = a[:]
    R.check(a in [a], "a in [a] (containment checks identity first)")
    R.check(a in (a,) and b in [b], "b in [b]")
    R.check(len({a, b, a}) == 2, "a set holds a and its view apart")
    d = {a: "a", b: "b"}
    R.check(d[a] == "a" and d[b] == "b", "tensors are dict keys")
    R.check(hash(a) == hash(a), "hash is stable")
    a.close()
    R.check(a in {a} and hash(a) == hash(a), "a closed tensor still hashes")
    with sm.Stack(1024) as s:
        R.check(s == s and not (s == sm.Stack(64)), "a Stack is one stack: == is identity")


def equal_compares_values():
    a = sm.arange(6).view(2, 3)
    R.check(sm.equal(a, a[:]), "equal(a, a[:])")
    R.check(sm.equal(a, a.clone()), "equal(a, a.clone())")
    R.check(not sm.equal(a, a.T), "a (2, 3) and a.T (3, 2): different shapes")
    R.check(not sm.equal(a, a.flip(0)), "different values")
    R.check(sm.equal(sm.tensor([2, 3]), sm.tensor([2.0, 3.0])), "int64 2 equals float32 2.0")
    R.check(not sm.equal(sm.tensor([float("nan")]), sm.tensor([float("nan")])),
            "NaN equals nothing (torch.equal)")
    R.check(sm.equal(sm.tensor([1.5, -2.0], dtype="bfloat16"), [1.5, -2.0]),
            "bfloat16 compares by value")
    R.check(sm.equal(a, np.arange(6).reshape(2, 3)) and sm.equal(a, [[0, 1, 2], [3, 4, 5]]),
            "a NumPy array or a list as the other side")
    R.check(not sm.equal(sm.zeros(2, 3), sm.zeros(3, 2)), "shapes differ")
    R.check(type(sm.equal(a, a)) is bool, "equal returns a bool")
    if torch is not None:
        for x, y in [([1, 2], [1, 2]), ([1, 2], [2, 1]), ([[1.5]], [[1.5]]), ([1.0], [1.0, 1.0]),
                     ([float("nan")], [float("nan")])]:
            R.equal(sm.equal(sm.tensor(x), sm.tensor(y)),
                    torch.equal(torch.tensor(x), torch.tensor(y)), "equal(%r, %r) vs torch" % (x, y))


# -- default dtypes: PyTorch's rule ------------------------------------------------

# (values, the dtype torch.tensor(values) gives in PyTorch 1.13)
TENSOR_CASES = [
    (0.5, "float32"), (1, "int64"), (True, "bool"), (1j, "complex64"),
    ([0.5], "float32"), ([1, 2], "int64"), ([True, False], "bool"), ([1j], "complex64"),
    ([1, 2.5], "float32"), ([True, 2], "int64"), ([1, 1j], "complex64"), ([], "float32"),
    ([[]], "float32"), ([[1, 2], [3, 4.5]], "float32"), ((1.5, 2), "float32"),
    (np.float64(0.5), "float64"), (np.float16(1), "float16"), (np.int32(3), "int32"),
    (np.uint8(3), "uint8"), ([np.float64(0.5)], "float64"), ([np.int32(1)], "int32"),
    ([np.float16(1), 2.0], "float32"), ([np.int32(1), 2], "int64"), ([np.int16(1), 2.5], "float32"),
    ([np.float64(1), 1j], "complex128"), ([np.bool_(True)], "bool"),
    (np.array([1, 2], dtype=np.int16), "int16"), (np.array(0.5), "float64"),
    (np.array([1.5], dtype=np.float32), "float32"),
]

# (fill value, the dtype torch.full((2,), value) gives) for Python scalars
FULL_CASES = [(1, "int64"), (0.5, "float32"), (True, "bool"), (1j, "complex64"), (-3, "int64")]


def default_dtypes_follow_pytorch():
    for values, want in TENSOR_CASES:
        if torch is not None:  # the table is PyTorch's
            with warnings.catch_warnings():  # torch 1.13 on np.bool_: a DeprecationWarning
                warnings.simplefilter("ignore", DeprecationWarning)
                got = str(torch.tensor(values).dtype).replace("torch.", "")
            R.equal(got, want, "torch.tensor(%r) (the table)" % (values,))
        t = sm.tensor(values)
        R.equal(t.dtype.name, want, "sm.tensor(%r).dtype" % (values,))
        R.check(np.array_equal(t.numpy(), np.asarray(values, dtype=want)),
                "sm.tensor(%r) values" % (values,))
    for value, want in FULL_CASES:
        if torch is not None:
            R.equal(str(torch.full((2,), value).dtype).replace("torch.", ""), want,
                    "torch.full((2,), %r) (the table)" % (value,))
        R.equal(sm.full((2,), value).dtype.name, want, "sm.full((2,), %r).dtype" % (value,))
        R.equal(sm.full((2,), value).tolist(), [value, value], "sm.full((2,), %r) values" % (value,))
    # NumPy scalars keep their dtype (as in sm.tensor), where torch.full would drop it.
    for value in (np.float64(0.5), np.int16(3), np.bool_(True), np.float16(2)):
        R.equal(sm.full((2,), value).dtype.name, np.asarray(value).dtype.name,
                "sm.full((2,), %r) keeps the NumPy dtype" % (value,))
    R.equal(sm.full((2,), 7, dtype="int8").dtype.name, "int8", "full with dtype= keeps it")
    R.equal(sm.tensor([0.5], dtype="float64").dtype.name, "float64", "tensor with dtype=")
    R.equal(sm.tensor([0.1]).tolist(), [float(np.float32(0.1))], "0.1 rounded once to float32")
    # The float default everywhere is float32, ints int64 (torch's defaults).
    t32 = sm.zeros(2, dtype="int32")
    with sm.Stack(4096) as st:
        creations = {
            "empty": sm.empty(2), "zeros": sm.zeros(2), "ones": sm.ones(2),
            "empty_strided": sm.empty_strided((2,), (1,)), "empty_shared": sm.empty_shared(2),
            "Stack.push": st.push((2,)), "full(0.5)": sm.full(2, 0.5),
            "arange(0.5)": sm.arange(0.5), "arange(0, 1, 0.25)": sm.arange(0, 1, 0.25),
            "arange_n(0.0, 0.5, 3)": sm.arange_n(0.0, 0.5, 3),
        }
        for what, t in creations.items():
            R.equal(t.dtype.name, "float32", "%s default dtype" % what)
        for what, t in {"arange(5)": sm.arange(5), "arange(1, 5, 2)": sm.arange(1, 5, 2),
                        "arange_n(0, 1, 3)": sm.arange_n(0, 1, 3), "full(2, 1)": sm.full(2, 1),
                        "tensor([1])": sm.tensor([1])}.items():
            R.equal(t.dtype.name, "int64", "%s default dtype" % what)
        R.equal(sm.arange_n(2, 3, 4).tolist(), [2, 5, 8, 11], "arange_n ints: int64 values")
        for what, t in {"empty_like": sm.empty_like(t32), "zeros_like": sm.zeros_like(t32),
                        "ones_like": sm.ones_like(t32), "full_like": sm.full_like(t32, 0.5),
                        "tensor(int32 tensor)": sm.tensor(t32)}.items():
            R.equal(t.dtype.name, "int32", "%s keeps the tensor's dtype" % what)
        if torch is not None:
            tt = torch.zeros(2, dtype=torch.int32)
            R.equal(str(torch.full_like(tt, 0.5).dtype), "torch.int32", "torch.full_like too")
            for args in [(5,), (0.5,), (1, 5, 2), (0, 1, 0.25)]:
                R.equal(sm.arange(*args).dtype.name,
                        str(torch.arange(*args).dtype).replace("torch.", ""), "arange%r vs torch" % (args,))
        arr = np.arange(4, dtype=np.uint16)
        for what, t in {"from_numpy": sm.from_numpy(arr), "as_tensor": sm.as_tensor(arr),
                        "tensor(ndarray)": sm.tensor(arr)}.items():
            R.equal(t.dtype.name, "uint16", "%s keeps the array's dtype" % what)
    raises(OverflowError, lambda: sm.tensor([2 ** 63]), "an int beyond int64 without dtype")
    R.equal(sm.tensor([2 ** 63], dtype="uint64").tolist(), [2 ** 63], "... and with dtype=uint64")


# -- messages in the binding's words ------------------------------------------------

def errors_name_python_calls():
    t = sm.zeros(2, 3)
    cases = [
        ("reshape(7)", lambda: t.reshape(7), sm.ShapeError, "reshape()"),
        ("T.view(6)", lambda: t.T.view(6), sm.ShapeError, "view()"),
        ("select(0, 5)", lambda: t.select(0, 5), sm.OutOfBoundsError, "select()"),
        ("expand(4, 4)", lambda: t.expand(4, 4), sm.ShapeError, "expand()"),
        ("permute(0, 0)", lambda: t.permute(0, 0), sm.StrideMemError, "permute()"),
        ("as_strided out of the storage", lambda: t.as_strided((10,), (1,)), sm.StrideMemError,
         "as_strided()"),
        ("int32 sqrt_", lambda: sm.zeros(2, dtype="int32").sqrt_(), sm.DTypeError, "sqrt_()"),
        ("int64 add_(0.5)", lambda: sm.zeros(2, dtype="int64").add_(0.5), sm.DTypeError, "add_()"),
        ("full overflow", lambda: sm.full(2, 300, dtype="uint8"), sm.DTypeError, "full()"),
        ("empty(-1)", lambda: sm.empty(-1), sm.StrideMemError, "empty()"),
        ("Stack.push too big", lambda: sm.Stack(64).push((1000,)), sm.StrideMemError, "Stack.push()"),
        ("Storage.tensor out of range",
         lambda: t.storage().tensor((100,), (1,), 0, "float32"), sm.StrideMemError, "Storage.tensor()"),
        ("copy_ of another shape", lambda: t.copy_(sm.zeros(4)), sm.ShapeError, "copy_()"),
        ("from_blob of NULL", lambda: sm.from_blob(0, (3,), "float32"), sm.StrideMemError,
         "from_blob()"),
    ]
    for what, fn, exc, name in cases:
        e = raises(exc, fn, what, [name], absent=["sm_"])
        if e is not None:
            R.equal(e.function, name, "%s: .function is the Python call" % what)
            R.check(e.c_function.startswith("sm_"), "%s: .c_function %r is the C call" % (what, e.c_function))
            R.check(e.c_message == sm.last_error(), "%s: .c_message is sm_last_error()" % what)
            R.check("sm_" not in e.message, "%s: .message %r names no C function" % (what, e.message))


def closed_objects_say_closed():
    t = sm.zeros(3)
    t.close()
    for what, fn in [("numel", lambda: t.numel), ("shape", lambda: t.shape),
                     ("reshape", lambda: t.reshape(3)), ("add_", lambda: t.add_(1))]:
        raises(sm.InvalidHandleError, fn, "closed tensor: " + what, ["tensor is closed"],
               absent=["NULL", "sm_"])
    raises(sm.InvalidHandleError, lambda: sm.zeros(3).copy_(t), "a closed source",
           ["tensor passed as src is closed"], absent=["NULL"])
    R.equal(repr(t), "<stridemem.Tensor (closed)>", "repr of a closed tensor")
    s = sm.Stack(1024)
    s.close()
    raises(sm.InvalidHandleError, lambda: s.push((2,)), "closed stack", ["stack is closed"],
           absent=["NULL"])


def popped_stack_tensor_repr():
    with sm.Stack(1 << 12) as s:
        m = s.mark()
        p = s.push((2, 2))
        s.pop_to(m)
        try:
            text = repr(p)
            R.check("popped" in text and "invalid" in text, "repr of a popped tensor: %r" % text)
            R.equal(str(p), text, "str of a popped tensor")
        except Exception as e:
            R.fail("repr of a popped stack tensor raised %s: %s" % (type(e).__name__, e))
        raises(sm.InvalidHandleError, lambda: p.numel, "a popped tensor's numel",
               ["Stack.pop_to()", "close()"], absent=["sm_"])
        p.close()


def articles():
    e = raises(sm.DTypeError, lambda: sm.zeros(2, dtype="int32").sqrt_(), "int32 sqrt_",
               ["an int32 tensor"], absent=["a int32"])
    R.check(e is None or "a int32" in e.c_message, "the C text says 'a int32' (translated)")
    raises(sm.DTypeError, lambda: sm.zeros(2, dtype="uint8").sqrt_(), "uint8 sqrt_",
           ["a uint8 tensor"], absent=["an uint8"])
    raises(sm.DTypeError, lambda: sm.zeros(2, dtype="int8").exp_(), "int8 exp_", ["an int8"])


def integers_print_as_integers():
    cases = [("int64", [2 ** 40]), ("int64", [2 ** 53 + 1, 2 ** 62, -2 ** 63, 2 ** 63 - 1]),
             ("uint64", [2 ** 64 - 1, 2 ** 53 + 1]), ("int32", [-2 ** 31, 7]),
             ("bool", [True, False])]
    for dt, vals in cases:
        t = sm.tensor(vals, dtype=dt)
        for text in (repr(t), str(t)):
            want = np.array2string(np.array(vals, dtype=dt), separator=", ", prefix="tensor(")
            R.check(text.startswith("tensor(" + want), "%s %r prints as %r, NumPy: %r" % (dt, vals, text, want))
            R.check("e+" not in text, "%s %r prints no exponent: %r" % (dt, vals, text))
        R.equal(t.tolist(), vals, "%s %r tolist" % (dt, vals))
    R.check("1099511627776" in repr(sm.tensor(2 ** 40)), "0-d 2**40")
    R.check("1099511627776" in repr(sm.full((2,), 2 ** 40)), "full((2,), 2**40): int64")
    # Scalars in error messages: the number passed, not the C library's %g.
    for dt, value, want in [("int32", 2 ** 40, "1099511627776"), ("uint8", -1, "value = -1"),
                            ("int16", 1e10, "10000000000"), ("int32", 2.5e9, "2500000000")]:
        raises(sm.DTypeError, lambda: sm.full(2, value, dtype=dt), "full(%r) into %s" % (value, dt),
               [want], absent=["e+"])
    raises(sm.DTypeError, lambda: sm.full(2, 2.0 ** 64, dtype="int64"), "2**64 into int64",
           ["18446744073709551616", "[-9223372036854775808, 9223372036854775807]"], absent=["e+"])
    raises(sm.DTypeError, lambda: sm.full(2, -5, dtype="uint64"), "-5 into uint64",
           ["[0, 18446744073709551615]"], absent=["e+"])
    raises(sm.DTypeError, lambda: sm.zeros(2, dtype="int64").add_(0.5), "add_(0.5) on int64",
           ["0.5"])
    raises(sm.DTypeError, lambda: sm.zeros(2, dtype="int64").add_(math.pi), "add_(pi) on int64",
           [repr(math.pi)])


for name, fn in list(globals().items()):
    if callable(fn) and getattr(fn, "__module__", None) == "__main__" and name not in (
            "raises", "Results", "import_stridemem") and fn.__class__.__name__ == "function":
        R.run(name, fn)
sys.exit(R.finish())

# In-place ops: the library writes through the view, on any device, bumps the
# storage's version counter, and refuses destinations whose elements overlap
# (an expanded view) with SM_ERR_OVERLAP. Dtype rules are PyTorch's: the
# result must be representable in the tensor's element type (on complex
# tensors clamp!, relu! and abs! are refused with SM_ERR_DTYPE).
#
# The C API's scalars are doubles. A complex scalar given to a complex tensor
# travels as a 0-d tensor of the tensor's element type through the tensor
# form of the op; to any other tensor it must be real (imaginary part 0), or
# the call throws before anything is written.

function _scalar_op!(A::StridedTensor, op::Int32, a = 0.0, b = 0.0)
    check(sm_inplace_scalar(A, op, _scalar(a), _scalar(b)))
    return A
end

function _tensor_op!(A::StridedTensor, op::Int32, B::StridedTensor, alpha)
    check(sm_inplace_tensor(A, op, B, _scalar(alpha)))
    return A
end

_scalar_op!(A::StridedTensor{<:Complex}, op::Int32, x::Complex) =
    _tensor_op!(A, op, StridedTensor(Base.fill(convert(eltype(A), x)); device = A.device), 1.0)
_scalar_op!(A::StridedTensor, op::Int32, x::Complex) = _scalar_op!(A, op, _scalar(x))

"""
    fill!(A::StridedTensor, x) -> A

Every element of `A` set to `x` by the library (`SM_OP_FILL`); works on any
device and bumps the version counter. `fill!(A, B::StridedTensor)` copies
`B` broadcast to `A`'s size.
"""
Base.fill!(A::StridedTensor, x::Number) = _scalar_op!(A, SM_OP_FILL, x)
Base.fill!(A::StridedTensor, B::StridedTensor) = _tensor_op!(A, SM_OP_FILL, B, 1.0)

"""
    zero!(A) -> A

Sets every element to zero (`SM_OP_ZERO`).
"""
zero!(A::StridedTensor) = _scalar_op!(A, SM_OP_ZERO)

"""
    add!(A, x::Number) -> A
    add!(A, B::StridedTensor; alpha = 1) -> A

`A .+= x`, or `A .+= alpha .* B` with `B` broadcast to `A`'s size. `x` may be
complex for a complex `A`; `alpha` is real.
"""
add!(A::StridedTensor, x::Number) = _scalar_op!(A, SM_OP_ADD, x)
add!(A::StridedTensor, B::StridedTensor; alpha::Real = 1) = _tensor_op!(A, SM_OP_ADD, B, alpha)

"""
    sub!(A, x::Number) -> A
    sub!(A, B::StridedTensor; alpha = 1) -> A

`A .-= x`, or `A .-= alpha .* B`.
"""
sub!(A::StridedTensor, x::Number) = _scalar_op!(A, SM_OP_SUB, x)
sub!(A::StridedTensor, B::StridedTensor; alpha::Real = 1) = _tensor_op!(A, SM_OP_SUB, B, alpha)

"""
    mult!(A, x::Number) -> A
    mult!(A, B::StridedTensor) -> A

`A .*= x` or `A .*= B` (elementwise).
"""
mult!(A::StridedTensor, x::Number) = _scalar_op!(A, SM_OP_MUL, x)
mult!(A::StridedTensor, B::StridedTensor) = _tensor_op!(A, SM_OP_MUL, B, 1.0)

"""
    div!(A, x::Number) -> A
    div!(A, B::StridedTensor) -> A

`A ./= x` or `A ./= B` (floating-point and complex element types only).
"""
div!(A::StridedTensor, x::Number) = _scalar_op!(A, SM_OP_DIV, x)
div!(A::StridedTensor, B::StridedTensor) = _tensor_op!(A, SM_OP_DIV, B, 1.0)

"""
    clamp!(A::StridedTensor, lo, hi) -> A

`A .= min.(max.(A, lo), hi)`; `nothing` (or NaN) for a bound means none.
"""
Base.clamp!(A::StridedTensor, lo::Union{Real,Nothing}, hi::Union{Real,Nothing}) =
    _scalar_op!(A, SM_OP_CLAMP, lo, hi)

"""
    relu!(A) -> A

`A .= max.(A, 0)`.
"""
relu!(A::StridedTensor) = _scalar_op!(A, SM_OP_RELU)

"""
    neg!(A) -> A

`A .= -A`.
"""
neg!(A::StridedTensor) = _scalar_op!(A, SM_OP_NEG)

"""
    abs!(A) -> A

`A .= abs.(A)`.
"""
abs!(A::StridedTensor) = _scalar_op!(A, SM_OP_ABS)

"""
    sqrt!(A) -> A

`A .= sqrt.(A)` (floating-point element types only).
"""
sqrt!(A::StridedTensor) = _scalar_op!(A, SM_OP_SQRT)

"""
    exp!(A) -> A

`A .= exp.(A)` (floating-point element types only).
"""
exp!(A::StridedTensor) = _scalar_op!(A, SM_OP_EXP)

"""
    sign!(A) -> A

`A .= sign.(A)`: -1, 0 or +1 in A's element type; NaN stays NaN. Unlike
Julia's `sign`, `-0.0` becomes `+0.0` (as PyTorch's `sign_` and NumPy's
`sign`). `Bool` elements are left as they are; complex element types throw
(the complex sign `x/|x|` is not provided).
"""
sign!(A::StridedTensor) = _scalar_op!(A, SM_OP_SIGN)

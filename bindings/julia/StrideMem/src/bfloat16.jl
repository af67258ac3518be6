# bfloat16: the upper 16 bits of an IEEE binary32. Enough arithmetic to use it
# as an element type (conversions round to nearest even, as the C library's);
# arithmetic is done in Float32 and rounded back.

"""
    StrideMem.BFloat16

A 16-bit brain floating point number (1 sign, 8 exponent, 7 fraction bits),
the element type of `SM_BFLOAT16` tensors. Public, not exported (BFloat16s.jl
exports a `BFloat16` of its own): write `StrideMem.BFloat16` or
`using StrideMem: BFloat16`. Converts to and from the other
real types with round-to-nearest-even; arithmetic goes through `Float32`.
"""
primitive type BFloat16 <: AbstractFloat 16 end

const _BF16_NAN = 0x7fc0

function BFloat16(x::Float32)
    bits = reinterpret(UInt32, x)
    if isnan(x)
        # keep the sign and the top payload bits, force a quiet NaN
        return reinterpret(BFloat16, (bits >> 16) % UInt16 | UInt16(0x0040))
    end
    # round to nearest, ties to even, on the 16 bits that are dropped
    bits += 0x00007fff + ((bits >> 16) & 0x00000001)
    return reinterpret(BFloat16, (bits >> 16) % UInt16)
end

function BFloat16(x::Float64)
    isnan(x) && return BFloat16(Float32(x))
    # Float64 -> Float32 rounded to odd, then -> BFloat16 rounded to nearest
    # even: the same as rounding Float64 -> BFloat16 directly (no double rounding).
    f = Float32(x)
    if Float64(f) != x && iseven(reinterpret(UInt32, f))
        f = Float64(f) < x ? nextfloat(f) : prevfloat(f)
    end
    return BFloat16(f)
end

BFloat16(x::BFloat16) = x
BFloat16(x::Float16) = BFloat16(Float32(x))  # exact
BFloat16(x::Integer) = BFloat16(Float64(x))
BFloat16(x::Real) = BFloat16(Float64(x))

Base.Float32(x::BFloat16) = reinterpret(Float32, UInt32(reinterpret(UInt16, x)) << 16)
Base.Float64(x::BFloat16) = Float64(Float32(x))
Base.Float16(x::BFloat16) = Float16(Float32(x))
for T in (:Int8, :Int16, :Int32, :Int64, :Int128, :UInt8, :UInt16, :UInt32, :UInt64, :UInt128)
    @eval Base.$T(x::BFloat16) = $T(Float32(x))
end

Base.promote_rule(::Type{BFloat16}, ::Type{Float16}) = Float32
Base.promote_rule(::Type{BFloat16}, ::Type{Float32}) = Float32
Base.promote_rule(::Type{BFloat16}, ::Type{Float64}) = Float64
Base.promote_rule(::Type{BFloat16}, ::Type{<:Integer}) = BFloat16

for op in (:+, :-, :*, :/, :^)
    @eval Base.$op(a::BFloat16, b::BFloat16) = BFloat16($op(Float32(a), Float32(b)))
end
Base.:-(x::BFloat16) = reinterpret(BFloat16, reinterpret(UInt16, x) ⊻ 0x8000)
Base.abs(x::BFloat16) = reinterpret(BFloat16, reinterpret(UInt16, x) & 0x7fff)
Base.sqrt(x::BFloat16) = BFloat16(sqrt(Float32(x)))
Base.exp(x::BFloat16) = BFloat16(exp(Float32(x)))

Base.:(==)(a::BFloat16, b::BFloat16) = Float32(a) == Float32(b)
Base.:<(a::BFloat16, b::BFloat16) = Float32(a) < Float32(b)
Base.:<=(a::BFloat16, b::BFloat16) = Float32(a) <= Float32(b)
Base.isless(a::BFloat16, b::BFloat16) = isless(Float32(a), Float32(b))
Base.isnan(x::BFloat16) = reinterpret(UInt16, x) & 0x7fff > 0x7f80
Base.isinf(x::BFloat16) = reinterpret(UInt16, x) & 0x7fff == 0x7f80
Base.isfinite(x::BFloat16) = reinterpret(UInt16, x) & 0x7f80 != 0x7f80
Base.signbit(x::BFloat16) = reinterpret(UInt16, x) & 0x8000 != 0
Base.iszero(x::BFloat16) = reinterpret(UInt16, x) & 0x7fff == 0
Base.hash(x::BFloat16, h::UInt) = hash(Float32(x), h)

Base.zero(::Type{BFloat16}) = reinterpret(BFloat16, 0x0000)
Base.one(::Type{BFloat16}) = reinterpret(BFloat16, 0x3f80)
Base.floatmax(::Type{BFloat16}) = reinterpret(BFloat16, 0x7f7f)
Base.floatmin(::Type{BFloat16}) = reinterpret(BFloat16, 0x0080)
Base.eps(::Type{BFloat16}) = reinterpret(BFloat16, 0x3c00)  # 2^-7
Base.typemax(::Type{BFloat16}) = reinterpret(BFloat16, 0x7f80)  # Inf
Base.typemin(::Type{BFloat16}) = reinterpret(BFloat16, 0xff80)  # -Inf

# Qualified: the name is not exported, and BFloat16s.jl has a BFloat16 too.
Base.show(io::IO, x::BFloat16) = print(io, "StrideMem.BFloat16(", Float32(x), ")")

# The package's own 16-bit bfloat16.

@test sizeof(BFloat16) == 2
@test reinterpret(UInt16, BFloat16(1.0f0)) == 0x3f80
@test Float32(BFloat16(3.140625f0)) == 3.140625f0          # exactly representable
@test Float32(BFloat16(1.0f0 + 2.0f0^-8)) == 1.0f0          # tie: to even (down)
@test Float32(BFloat16(1.0f0 + 3 * 2.0f0^-8)) == 1.0f0 + 2.0f0^-6  # tie: to even (up)
# Float64 input is rounded once: just above the tie goes up
@test Float32(BFloat16(1.0 + 2.0^-8 + 2.0^-30)) == 1.0f0 + 2.0f0^-7
@test isnan(BFloat16(NaN32))
@test isinf(BFloat16(Inf32)) && isinf(BFloat16(-Inf))
@test BFloat16(2) == BFloat16(2.0)
@test -BFloat16(1.5) == BFloat16(-1.5)
@test abs(BFloat16(-2.5)) == BFloat16(2.5)
@test BFloat16(1.5) + BFloat16(2.25) == BFloat16(3.75)
@test BFloat16(3) * BFloat16(0.5) == BFloat16(1.5)
@test Float64(BFloat16(0.25)) == 0.25
@test Int(BFloat16(7)) == 7
@test zero(BFloat16) == BFloat16(0) && one(BFloat16) == BFloat16(1)
@test BFloat16(1) < BFloat16(2)
@test sprint(show, BFloat16(1)) == "StrideMem.BFloat16(1.0)"  # not exported: qualified

# The loaded library, versions, dtypes and the C structs' sizes.

@testset "version" begin
    v = library_version()
    @test v isa VersionNumber
    @test v.major == StrideMem.BINDING_VERSION.major
    @test isfile(LibStrideMem.libstridemem())
end

@testset "finding the library" begin
    # The SONAME looked for is the ABI's (CMakeLists.txt's SOVERSION).
    @test StrideMem._soname(v"0.4.0") == "libstridemem.so.0.4"
    @test StrideMem._soname(v"0.4.7") == "libstridemem.so.0.4"
    @test StrideMem._soname(v"1.2.3") == "libstridemem.so.1"
    @test StrideMem._soname(StrideMem.BINDING_VERSION) in StrideMem._LIBRARY_NAMES
    lib = LibStrideMem.libstridemem()
    find(env; pkgconfig = "", system = "", repository = "/nonexistent/build/libstridemem.so") =
        StrideMem._find_library(env = env, pkg_config_library = () -> pkgconfig,
                                system_library = () -> system,
                                repository_library = repository)
    no_env = Dict{String,String}()
    # 1. STRIDEMEM_LIB wins over everything...
    @test find(Dict("STRIDEMEM_LIB" => lib); pkgconfig = "/pc/lib/libstridemem.so",
               system = "/sys/libstridemem.so.0.4", repository = lib) == abspath(lib)
    # ...and, set to something that is not a file, is an error with no fallback.
    bad = "/no/such/dir/libstridemem.so"
    err = try
        find(Dict("STRIDEMEM_LIB" => bad); system = lib, repository = lib)
        nothing
    catch e
        e
    end
    @test err isa ErrorException
    @test occursin(bad, err.msg) && occursin("STRIDEMEM_LIB", err.msg)
    # 2. then pkg-config's prefix, 3. then what the system's dynamic loader
    # finds, 4. then the repository's build.
    @test find(no_env; pkgconfig = "/pc/lib/libstridemem.so", system = "/sys/libstridemem.so.0.4",
               repository = lib) == "/pc/lib/libstridemem.so"
    @test find(no_env; system = "/sys/libstridemem.so.0.4", repository = lib) ==
          "/sys/libstridemem.so.0.4"
    @test find(no_env; repository = lib) == lib
    # Nowhere: one error that names every place tried and what to do.
    err = try
        find(no_env)
        nothing
    catch e
        e
    end
    @test err isa ErrorException
    for needle in ("STRIDEMEM_LIB", "pkg-config --variable=libdir stridemem", "PKG_CONFIG_PATH",
                   StrideMem._soname(StrideMem.BINDING_VERSION), "/nonexistent/build/libstridemem.so",
                   "cmake --build build", "cmake --install build", "LD_LIBRARY_PATH")
        @test occursin(needle, err.msg)
    end
    # The real look-ups: a full path to a file, or "".
    sys = StrideMem._system_library()
    @test sys == "" || isfile(sys)
    pc = StrideMem._pkg_config_library()
    @test pc == "" || isfile(pc)
    @test StrideMem._pkg_config_library(pkg_config = nothing) == ""
    @test StrideMem._pkg_config_library(pkg_config = "/nonexistent/pkg-config") == ""
    # A private prefix, as `cmake --install build --prefix <prefix>` makes it
    # (the .pc finds its prefix from where it lies), through PKG_CONFIG_PATH.
    if Sys.which("pkg-config") !== nothing
        mktempdir() do prefix
            mkpath(joinpath(prefix, "lib", "pkgconfig"))
            so = joinpath(prefix, "lib", "libstridemem." * StrideMem.Libdl.dlext)
            write(so, "")
            write(joinpath(prefix, "lib", "pkgconfig", "stridemem.pc"),
                  "prefix=\${pcfiledir}/../..\nlibdir=\${prefix}/lib\nName: stridemem\n" *
                  "Description: test\nVersion: 0.0.0\nLibs: -L\${libdir} -lstridemem\n")
            withenv("PKG_CONFIG_PATH" => joinpath(prefix, "lib", "pkgconfig")) do
                @test realpath(StrideMem._pkg_config_library()) == realpath(so)
            end
        end
    end
    @test endswith(StrideMem._repository_library(),
                   joinpath("build", "libstridemem." * StrideMem.Libdl.dlext))
end

@testset "exported names" begin
    exported = names(StrideMem)
    for name in StrideMem.UNEXPORTED_PUBLIC
        @test !(name in exported)           # no clash with BFloat16s, CUDA, Flux, MLUtils, Base
        @test isdefined(StrideMem, name)    # ...but there, qualified
    end
    @test StrideMem.BFloat16 === BFloat16 && StrideMem.to === to
    @test !(:stack in names(StrideMem; all = true))  # Base.stack stays the only `stack`
    for name in exported
        @test isdefined(StrideMem, name)
    end
    if VERSION >= v"1.11"
        @test all(n -> Base.ispublic(StrideMem, n), StrideMem.UNEXPORTED_PUBLIC)
    end
end

@testset "dtypes" begin
    all_types = (Bool, UInt8, Int8, Int16, Int32, Int64, Float16, BFloat16, Float32, Float64,
                 UInt16, UInt32, UInt64, ComplexF32, ComplexF64)
    @test length(all_types) == LibStrideMem.SM_NUM_DTYPES
    for (i, T) in enumerate(all_types)
        code = StrideMem.dtype_code(T)
        @test code == i - 1                     # the C enum's order
        @test T <: StrideMem.SMElType
        @test LibStrideMem.sm_dtype_size(code) == sizeof(T)
        @test StrideMem.julia_type(code) === T
    end
    @test StrideMem.dtype_name(Float32) == "float32"
    @test StrideMem.dtype_name(BFloat16) == "bfloat16"
    for (T, name) in ((UInt16, "uint16"), (UInt32, "uint32"), (UInt64, "uint64"),
                      (ComplexF32, "complex64"), (ComplexF64, "complex128"))
        @test StrideMem.dtype_name(T) == name
    end
    @test LibStrideMem.SM_COMPLEX64 == 13 && LibStrideMem.SM_COMPLEX128 == 14
    # Julia's complex numbers are the C layout: re then im, a component's alignment.
    @test fieldoffset(ComplexF64, 2) == 8 && Base.datatype_alignment(ComplexF64) == 8
    @test fieldoffset(ComplexF32, 2) == 4 && Base.datatype_alignment(ComplexF32) == 4
    @test LibStrideMem.sm_dtype_size(LibStrideMem.SM_NUM_DTYPES) == 0
    @test_throws StrideMemError StrideMem.julia_type(LibStrideMem.SM_NUM_DTYPES)
    @test_throws StrideMemError StrideMem.dtype_code(ComplexF16)
    @test_throws StrideMemError StrideMem.dtype_code(Int128)
end

@testset "C struct layouts" begin
    @test sizeof(SMDevice) == 8
    @test isbitstype(SMDevice)
    @test sizeof(MemoryStats) == 168
    @test fieldoffset(MemoryStats, 3) == 8  # allocated_bytes after two uint32
end

@testset "status strings" begin
    @test !isempty(StrideMem.status_name(LibStrideMem.SM_OK))
    @test StrideMem.status_name(LibStrideMem.SM_ERR_SHAPE) !=
          StrideMem.status_name(LibStrideMem.SM_ERR_DTYPE)
    @test StrideMem.status_name(9999) isa String  # codes added later still print
end

@testset "threads and devices" begin
    old = num_threads()
    set_num_threads!(2)
    @test num_threads() == 2
    set_num_threads!(old)
    @test synchronize(cpu()) === nothing
    @test is_host(cpu()) && is_host(cuda_host()) && !is_host(cuda(0))
    @test sprint(show, cuda(1)) == "cuda(1)"
    @test sprint(show, cpu()) == "StrideMem.cpu()"  # not exported: shown qualified
    @test cuda_device_count() >= 0
end

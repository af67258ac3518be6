//! The library as a whole: version, dtypes and devices as the library sees
//! them, CUDA behaviour without a GPU, threads setting.

use stridemem::{DType, Device, Status, Tensor, sys};

#[test]
fn header_constants_match_the_repository_version() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../VERSION")).unwrap();
    let version = text.trim();
    assert_eq!(version, sys::SM_VERSION_STRING, "update sys::SM_VERSION_* to the VERSION file");
    let parts: Vec<i32> = version.split('.').map(|p| p.parse().unwrap()).collect();
    assert_eq!(parts, vec![sys::SM_VERSION_MAJOR, sys::SM_VERSION_MINOR, sys::SM_VERSION_PATCH]);
    assert_eq!(stridemem::header_version(), (parts[0], parts[1], parts[2]));
}

#[test]
fn the_loaded_library_is_the_expected_version() {
    assert_eq!(stridemem::version(), stridemem::header_version());
    stridemem::ensure_compatible().unwrap();
    // sys: NULL out-pointers are refused, not written.
    // SAFETY: the library checks its pointers.
    let code = unsafe { sys::sm_version(std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut()) };
    assert_eq!(code, sys::SM_ERR_INVALID_ARGUMENT);
}

#[test]
fn compatibility_rule() {
    use stridemem::is_compatible;
    assert!(is_compatible((1, 2, 0), (1, 2, 5)));
    assert!(is_compatible((1, 2, 3), (1, 4, 0)));
    assert!(!is_compatible((1, 2, 0), (1, 1, 9)));
    assert!(!is_compatible((1, 2, 0), (2, 2, 0)));
    assert!(is_compatible((0, 1, 0), (0, 1, 7)));
    assert!(!is_compatible((0, 1, 0), (0, 2, 0)), "0.x minors break");
}

#[test]
fn dtype_sizes_and_names_match_the_library() {
    for dtype in DType::ALL {
        // SAFETY: plain value calls returning static data.
        let (size, name) = unsafe {
            (sys::sm_dtype_size(dtype.code()), std::ffi::CStr::from_ptr(sys::sm_dtype_name(dtype.code())))
        };
        assert_eq!(size, dtype.size(), "{dtype:?}");
        assert_eq!(name.to_str().unwrap(), dtype.name(), "{dtype:?}");
        assert_eq!(dtype.to_string(), dtype.name());
    }
    // SAFETY: as above.
    unsafe {
        assert_eq!(sys::sm_dtype_size(sys::SM_NUM_DTYPES), 0);
        assert_eq!(std::ffi::CStr::from_ptr(sys::sm_dtype_name(-1)).to_str().unwrap(), "unknown");
    }
    assert!(DType::F16.is_floating_point() && DType::BF16.is_floating_point());
    assert!(!DType::I64.is_floating_point() && !DType::Bool.is_floating_point());
}

#[test]
fn status_strings_come_from_the_library() {
    for code in 0..=13 {
        // SAFETY: any code is accepted; the result is static and never NULL.
        let p = unsafe { sys::sm_status_string(code) };
        assert!(!p.is_null());
        if code > 0 {
            // SAFETY: as above.
            let s = unsafe { std::ffi::CStr::from_ptr(p) }.to_str().unwrap();
            assert_eq!(Status::from_code(code).description(), s);
        }
    }
}

#[test]
fn devices_map_to_the_c_struct() {
    for d in [Device::Cpu, Device::Cuda(0), Device::Cuda(3), Device::CudaHost] {
        assert_eq!(Device::from_raw(d.to_raw()), Some(d));
    }
    assert_eq!(Device::Cpu.to_raw(), sys::sm_device { type_: 1, index: 0 });
    assert_eq!(Device::Cuda(2).to_raw(), sys::sm_device { type_: 2, index: 2 });
    assert_eq!(Device::CudaHost.to_raw(), sys::sm_device { type_: 3, index: 0 });
    assert_eq!(Device::from_raw(sys::sm_device { type_: 9, index: 0 }), None);
    assert_eq!(Device::Cuda(1).to_string(), "cuda:1");
    assert_eq!(Device::Cpu.to_string(), "cpu");
}

#[test]
fn cpu_device_calls() {
    Device::Cpu.synchronize().unwrap();
    let n = stridemem::cuda_device_count().unwrap();
    assert!(n >= 0);
}

#[test]
fn cuda_without_a_gpu_is_a_clear_device_error() {
    // The first index past the last GPU: cuda:0 on a machine without one, so
    // the test runs (and can fail) on every machine, GPU or not.
    let absent = Device::Cuda(stridemem::cuda_device_count().unwrap());
    let err = Tensor::zeros(&[4], DType::F32, absent).unwrap_err();
    assert_eq!(err.status(), Status::Device);
    assert!(!err.message().is_empty());
    assert_eq!(absent.synchronize().unwrap_err().status(), Status::Device);
    assert_eq!(stridemem::memory_stats(absent).unwrap_err().status(), Status::Device);
    assert_eq!(stridemem::Stack::new(absent, 1024).unwrap_err().status(), Status::Device);
    assert_eq!(absent.stream().unwrap_err().status(), Status::Device);
    // SAFETY: NULL is the default stream.
    assert_eq!(unsafe { absent.set_stream(std::ptr::null_mut()) }.unwrap_err().status(), Status::Device);
    // The CPU path keeps working.
    let t = Tensor::zeros(&[4], DType::F32, Device::Cpu).unwrap();
    // SAFETY: NULL stream; on a CPU tensor this is a no-op or an error, never a crash.
    let _ = unsafe { t.record_stream(std::ptr::null_mut()) };
    assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0; 4]);
}

#[test]
fn cpu_worker_threads_setting() {
    let before = stridemem::num_threads().unwrap();
    assert!(before >= 1, "{before}");
    stridemem::set_num_threads(2).unwrap();
    assert_eq!(stridemem::num_threads().unwrap(), 2);
    // A large copy still works with any setting.
    stridemem::set_num_threads(1).unwrap();
    let big = Tensor::arange(0.0, 1.0, 1 << 20, DType::F32, Device::Cpu).unwrap();
    let t = big.view(&[1024, 1024]).unwrap().transpose(0, 1).unwrap().contiguous().unwrap();
    assert_eq!(t.to_vec::<f32>().unwrap()[1], 1024.0);
    stridemem::set_num_threads(0).unwrap();
    assert!(stridemem::num_threads().unwrap() >= 1);
    assert!(stridemem::set_num_threads(-1).is_err());
    stridemem::set_num_threads(before).unwrap();
}

/// The header without its `/* ... */` comments.
fn strip_c_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("/*") {
        out.push_str(&rest[..at]);
        rest = rest[at..].find("*/").map_or("", |end| &rest[at + end + 2..]);
    }
    out.push_str(rest);
    out
}

/// `(field, offset, size)` of `typedef struct name { ... } name;` in the
/// header, laid out as a C compiler does on LP64 (each field at the next
/// multiple of its alignment). Only the field types the header's plain-data
/// structs use are known; any other type fails the test, so a header change
/// cannot slip past it.
fn c_struct_layout(header: &str, name: &str) -> Vec<(String, usize, usize)> {
    let text = strip_c_comments(header);
    let open = format!("typedef struct {name} {{");
    let start = text.find(&open).unwrap_or_else(|| panic!("no `{open}` in stridemem.h")) + open.len();
    let body = &text[start..start + text[start..].find('}').unwrap()];
    let mut fields = Vec::new();
    let mut offset = 0usize;
    for decl in body.split(';').map(str::trim).filter(|d| !d.is_empty()) {
        let decl = decl.split_whitespace().collect::<Vec<_>>().join(" ");
        let (ty, mut field) = decl.rsplit_once(' ').unwrap();
        let mut count = 1usize;
        if let Some(open) = field.find('[') {
            count = field[open + 1..field.len() - 1].parse().unwrap();
            field = &field[..open];
        }
        // (size, alignment) of one element.
        let (size, align) = match ty {
            "uint8_t" | "int8_t" => (1, 1),
            "uint16_t" | "int16_t" => (2, 2),
            "uint32_t" | "int32_t" | "sm_share_kind" => (4, 4),
            "uint64_t" | "int64_t" => (8, 8),
            "sm_device" => (8, 4), // two int32_t
            other => panic!("{name}.{field}: type {other} unknown to this test"),
        };
        offset = offset.div_ceil(align) * align;
        fields.push((field.to_string(), offset, size * count));
        offset += size * count;
    }
    fields
}

/// The header's `#define NAME value` (an integer, with or without a `u`
/// suffix).
fn c_define(header: &str, name: &str) -> u64 {
    let line = header
        .lines()
        .find(|l| l.split_whitespace().take(2).eq(["#define", name]))
        .unwrap_or_else(|| panic!("no #define {name}"));
    let value = line.split_whitespace().nth(2).unwrap().trim_end_matches('u');
    match value.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).unwrap(),
        None => value.parse().unwrap(),
    }
}

#[test]
fn share_descriptor_mirrors_the_header_field_by_field() {
    use std::mem::{offset_of, size_of};
    let header = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../include/stridemem.h")).unwrap();
    let c = c_struct_layout(&header, "sm_share_desc");
    // The size of one field of sys::sm_share_desc, without naming its type.
    fn size<F>(_: fn(&sys::sm_share_desc) -> &F) -> usize {
        size_of::<F>()
    }
    macro_rules! fields {
        ($($f:ident),*) => {
            vec![$((stringify!($f).to_string(), offset_of!(sys::sm_share_desc, $f), size(|d| &d.$f))),*]
        };
    }
    let rust = fields!(
        magic, format, struct_size, kind, library_version, device, nbytes, offset, object_bytes, object_id,
        object_dev, exporter_pid, cuda_ipc_handle, checksum
    );
    assert_eq!(rust, c, "sys::sm_share_desc (name, offset, size) vs stridemem.h");
    let end = c.last().map(|(_, o, s)| o + s).unwrap();
    assert_eq!(end, size_of::<sys::sm_share_desc>(), "no padding at the end either");
    assert_eq!(c_define(&header, "SM_SHARE_DESC_SIZE"), size_of::<sys::sm_share_desc>() as u64);
    assert_eq!(c_define(&header, "SM_SHARE_DESC_SIZE"), sys::SM_SHARE_DESC_SIZE as u64);
    assert_eq!(c_define(&header, "SM_SHARE_MAGIC"), u64::from(sys::SM_SHARE_MAGIC));
    assert_eq!(c_define(&header, "SM_SHARE_FORMAT"), u64::from(sys::SM_SHARE_FORMAT));
    // The kinds are enumerators: `SM_SHARE_MEMFD = 1,`.
    for (name, value) in [("SM_SHARE_MEMFD", sys::SM_SHARE_MEMFD), ("SM_SHARE_CUDA_IPC", sys::SM_SHARE_CUDA_IPC)] {
        let bare = strip_c_comments(&header);
        let line = bare.lines().find(|l| l.trim_start().starts_with(&format!("{name} ="))).unwrap();
        let text = line.split('=').nth(1).unwrap().trim();
        let v: i32 = text.trim_end_matches(|c: char| !c.is_ascii_digit()).parse().unwrap();
        assert_eq!(v, value, "{name}");
    }
}

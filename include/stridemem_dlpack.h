/*
 * stridemem_dlpack.h - the DLPack exchange structs, written from the DLPack
 * specification (https://dmlc.github.io/dlpack/) with an sm_ prefix so that
 * this header can be included beside <dlpack/dlpack.h>, before or after it,
 * whatever that header's version (0.x has no versioned structs: ours are
 * always here). The layouts are binary-identical to DLPack's, so a pointer
 * converts with a cast (tests assert sizes and offsets against Debian's
 * libdlpack-dev header, and tests/dlpack_official runs a C and a C++
 * consumer that includes both, in both orders). Compiles as C99 and C++.
 */
#ifndef STRIDEMEM_DLPACK_H
#define STRIDEMEM_DLPACK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* DLDeviceType: an enum (int-sized) in DLPack. */
typedef enum {
    sm_kDLCPU = 1,
    sm_kDLCUDA = 2,
    sm_kDLCUDAHost = 3
} sm_DLDeviceType;

typedef struct {
    sm_DLDeviceType device_type;
    int32_t device_id;
} sm_DLDevice;

/* DLDataTypeCode values. */
enum {
    sm_kDLInt = 0,
    sm_kDLUInt = 1,
    sm_kDLFloat = 2,
    sm_kDLOpaqueHandle = 3,
    sm_kDLBfloat = 4,
    sm_kDLComplex = 5,
    sm_kDLBool = 6
};

typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} sm_DLDataType;

typedef struct {
    void* data;
    sm_DLDevice device;
    int32_t ndim;
    sm_DLDataType dtype;
    int64_t* shape;
    int64_t* strides; /* in elements; NULL means row-major */
    uint64_t byte_offset;
} sm_DLTensor;

/* The legacy (unversioned) managed tensor. */
typedef struct sm_DLManagedTensor {
    sm_DLTensor dl_tensor;
    void* manager_ctx;
    void (*deleter)(struct sm_DLManagedTensor* self);
} sm_DLManagedTensor;

typedef struct {
    uint32_t major;
    uint32_t minor;
} sm_DLPackVersion;

#define SM_DLPACK_MAJOR_VERSION 1
#define SM_DLPACK_MINOR_VERSION 0
#define SM_DLPACK_FLAG_BITMASK_READ_ONLY (UINT64_C(1) << 0)
#define SM_DLPACK_FLAG_BITMASK_IS_COPIED (UINT64_C(1) << 1)

/* DLPack 1.x managed tensor: version first, flags. */
typedef struct sm_DLManagedTensorVersioned {
    sm_DLPackVersion version;
    void* manager_ctx;
    void (*deleter)(struct sm_DLManagedTensorVersioned* self);
    uint64_t flags;
    sm_DLTensor dl_tensor;
} sm_DLManagedTensorVersioned;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STRIDEMEM_DLPACK_H */

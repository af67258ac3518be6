/*
 * A DLPack consumer that includes the official <dlpack/dlpack.h> next to
 * stridemem.h and stridemem_dlpack.h, in the order SM_OFFICIAL_FIRST says
 * (1: official first, 0: ours first). tests/dlpack_official/check.cmake
 * compiles it as strict C99 and as C++17, in both orders, with warnings as
 * errors, then runs it: a header that clashes with the official one fails
 * the compile, a layout that differs fails the run.
 *
 * It does what a program holding both headers does: reads our exports
 * through the official structs (legacy always; the versioned struct when
 * the official header is DLPack 1.x, else through ours), and hands us a
 * DLManagedTensor it built with the official struct.
 */
#if SM_OFFICIAL_FIRST
#include <dlpack/dlpack.h>
#include "stridemem.h"
#include "stridemem_dlpack.h"
#else
#include "stridemem.h"
#include "stridemem_dlpack.h"
#include <dlpack/dlpack.h>
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int g_failures = 0;
static int g_checks = 0;

#define EXPECT(cond)                                                                \
    do {                                                                            \
        ++g_checks;                                                                 \
        if (!(cond)) {                                                              \
            fprintf(stderr, "%s:%d: expected %s (last error: %s)\n", __FILE__,      \
                    __LINE__, #cond, sm_last_error());                              \
            ++g_failures;                                                           \
        }                                                                           \
    } while (0)

#define SAME_LAYOUT(ours, theirs, field) \
    EXPECT(offsetof(ours, field) == offsetof(theirs, field))

/* DLPack 1.x defines DLPACK_MAJOR_VERSION (and the versioned struct); 0.x
 * headers (Debian's libdlpack-dev is 0.6) define DLPACK_VERSION only. */
#if defined(DLPACK_MAJOR_VERSION)
#define SM_OFFICIAL_HAS_VERSIONED 1
#else
#define SM_OFFICIAL_HAS_VERSIONED 0
#endif
#if defined(DLPACK_MAJOR_VERSION) || (defined(DLPACK_VERSION) && DLPACK_VERSION >= 80)
#define SM_OFFICIAL_HAS_BOOL 1
#else
#define SM_OFFICIAL_HAS_BOOL 0
#endif

static void same_layouts_and_codes(void)
{
    EXPECT(sizeof(sm_DLDevice) == sizeof(DLDevice));
    SAME_LAYOUT(sm_DLDevice, DLDevice, device_type);
    SAME_LAYOUT(sm_DLDevice, DLDevice, device_id);
    EXPECT(sizeof(sm_DLDataType) == sizeof(DLDataType));
    SAME_LAYOUT(sm_DLDataType, DLDataType, code);
    SAME_LAYOUT(sm_DLDataType, DLDataType, bits);
    SAME_LAYOUT(sm_DLDataType, DLDataType, lanes);
    EXPECT(sizeof(sm_DLTensor) == sizeof(DLTensor));
    SAME_LAYOUT(sm_DLTensor, DLTensor, data);
    SAME_LAYOUT(sm_DLTensor, DLTensor, device);
    SAME_LAYOUT(sm_DLTensor, DLTensor, ndim);
    SAME_LAYOUT(sm_DLTensor, DLTensor, dtype);
    SAME_LAYOUT(sm_DLTensor, DLTensor, shape);
    SAME_LAYOUT(sm_DLTensor, DLTensor, strides);
    SAME_LAYOUT(sm_DLTensor, DLTensor, byte_offset);
    EXPECT(sizeof(sm_DLManagedTensor) == sizeof(DLManagedTensor));
    SAME_LAYOUT(sm_DLManagedTensor, DLManagedTensor, dl_tensor);
    SAME_LAYOUT(sm_DLManagedTensor, DLManagedTensor, manager_ctx);
    SAME_LAYOUT(sm_DLManagedTensor, DLManagedTensor, deleter);
#if SM_OFFICIAL_HAS_VERSIONED
    EXPECT(sizeof(sm_DLManagedTensorVersioned) == sizeof(DLManagedTensorVersioned));
    SAME_LAYOUT(sm_DLManagedTensorVersioned, DLManagedTensorVersioned, version);
    SAME_LAYOUT(sm_DLManagedTensorVersioned, DLManagedTensorVersioned, manager_ctx);
    SAME_LAYOUT(sm_DLManagedTensorVersioned, DLManagedTensorVersioned, deleter);
    SAME_LAYOUT(sm_DLManagedTensorVersioned, DLManagedTensorVersioned, flags);
    SAME_LAYOUT(sm_DLManagedTensorVersioned, DLManagedTensorVersioned, dl_tensor);
    EXPECT(SM_DLPACK_FLAG_BITMASK_READ_ONLY == DLPACK_FLAG_BITMASK_READ_ONLY);
    EXPECT(SM_DLPACK_FLAG_BITMASK_IS_COPIED == DLPACK_FLAG_BITMASK_IS_COPIED);
#endif
    EXPECT((int)sm_kDLCPU == (int)kDLCPU);
    EXPECT((int)sm_kDLCUDA == (int)kDLCUDA);
    EXPECT((int)sm_kDLCUDAHost == (int)kDLCUDAHost);
    EXPECT((int)sm_kDLInt == (int)kDLInt);
    EXPECT((int)sm_kDLUInt == (int)kDLUInt);
    EXPECT((int)sm_kDLFloat == (int)kDLFloat);
    EXPECT((int)sm_kDLOpaqueHandle == (int)kDLOpaqueHandle);
    EXPECT((int)sm_kDLBfloat == (int)kDLBfloat);
    EXPECT((int)sm_kDLComplex == (int)kDLComplex);
#if SM_OFFICIAL_HAS_BOOL
    EXPECT((int)sm_kDLBool == (int)kDLBool);
#endif
    /* What the device type codes of the public header promise. */
    EXPECT(SM_DEVICE_CPU == (int)kDLCPU && SM_DEVICE_CUDA == (int)kDLCUDA);
}

static void* data_of(sm_tensor t)
{
    void* p = NULL;
    EXPECT(sm_data_ptr(t, &p) == SM_OK);
    return p;
}

/* Element [i][j] of a 2-D float DLTensor, through the official struct only. */
static float at(const DLTensor* dl, int64_t i, int64_t j)
{
    const char* base = (const char*)dl->data + dl->byte_offset;
    return *(const float*)(const void*)(base + (i * dl->strides[0] + j * dl->strides[1]) *
                                                   (int64_t)sizeof(float));
}

/* Checks an exported transposed 3x4 arange (a 4x3 view, strides 1, 4)
 * through the official DLTensor. */
static void check_transposed_arange(const DLTensor* dl, sm_tensor t)
{
    int64_t i, j;
    EXPECT(dl->ndim == 2);
    EXPECT(dl->device.device_type == kDLCPU && dl->device.device_id == 0);
    EXPECT(dl->dtype.code == kDLFloat && dl->dtype.bits == 32 && dl->dtype.lanes == 1);
    EXPECT(dl->shape[0] == 4 && dl->shape[1] == 3);
    EXPECT(dl->strides != NULL && dl->strides[0] == 1 && dl->strides[1] == 4);
    EXPECT(dl->data == data_of(t)); /* zero copy */
    for (i = 0; i < 4; ++i)
        for (j = 0; j < 3; ++j) EXPECT(at(dl, i, j) == (float)(j * 4 + i));
}

static void export_through_official_structs(void)
{
    const int64_t shape[2] = {3, 4};
    sm_device cpu;
    sm_tensor flat = NULL, m34 = NULL, t = NULL;
    void* p = NULL;
    cpu.type = SM_DEVICE_CPU;
    cpu.index = 0;
    EXPECT(sm_arange(0.0, 1.0, 12, SM_FLOAT32, cpu, &flat) == SM_OK);
    EXPECT(sm_view(flat, shape, 2, &m34) == SM_OK);
    EXPECT(sm_transpose(m34, 0, 1, &t) == SM_OK);

    /* Legacy: the official DLManagedTensor. */
    EXPECT(sm_to_dlpack(t, 0, &p) == SM_OK && p != NULL);
    if (p) {
        DLManagedTensor* m = (DLManagedTensor*)p;
        check_transposed_arange(&m->dl_tensor, t);
        EXPECT(m->deleter != NULL);
        if (m->deleter) m->deleter(m);
    }

    /* Versioned: the official struct where the header has it, else ours. */
    p = NULL;
    EXPECT(sm_to_dlpack(t, 1, &p) == SM_OK && p != NULL);
    if (p) {
#if SM_OFFICIAL_HAS_VERSIONED
        DLManagedTensorVersioned* m = (DLManagedTensorVersioned*)p;
        EXPECT(m->version.major == DLPACK_MAJOR_VERSION);
        check_transposed_arange(&m->dl_tensor, t);
#else
        sm_DLManagedTensorVersioned* m = (sm_DLManagedTensorVersioned*)p;
        EXPECT(m->version.major == SM_DLPACK_MAJOR_VERSION);
        /* Our DLTensor inside is the official one, field for field. */
        check_transposed_arange((const DLTensor*)(const void*)&m->dl_tensor, t);
#endif
        EXPECT(m->flags == 0);
        if (m->deleter) m->deleter(m);
    }
    sm_tensor_release(t);
    sm_tensor_release(m34);
    sm_tensor_release(flat);
}

/* A producer that uses the official struct: we import it zero copy and
 * call its deleter exactly once, when our last view dies. */
static int g_deleted = 0;
static void count_delete(DLManagedTensor* self)
{
    (void)self;
    ++g_deleted;
}

static void import_official_struct(void)
{
    static double data[6] = {0.5, 1.5, 2.5, 3.5, 4.5, 5.5};
    int64_t shape[2] = {2, 3};
    int64_t strides[2] = {1, 2}; /* column-major: element [i][j] at i + 2 j */
    double got[6];
    DLManagedTensor m;
    sm_tensor t = NULL;
    memset(&m, 0, sizeof m);
    m.dl_tensor.data = data;
    m.dl_tensor.device.device_type = kDLCPU;
    m.dl_tensor.device.device_id = 0;
    m.dl_tensor.ndim = 2;
    m.dl_tensor.dtype.code = (uint8_t)kDLFloat;
    m.dl_tensor.dtype.bits = 64;
    m.dl_tensor.dtype.lanes = 1;
    m.dl_tensor.shape = shape;
    m.dl_tensor.strides = strides;
    m.dl_tensor.byte_offset = 0;
    m.manager_ctx = NULL;
    m.deleter = count_delete;
    EXPECT(sm_from_dlpack(&m, 0, &t) == SM_OK);
    EXPECT(data_of(t) == (void*)data);
    EXPECT(sm_copy_to_host(t, got, sizeof got) == SM_OK);
    /* Row-major copy of [[0.5, 2.5, 4.5], [1.5, 3.5, 5.5]]. */
    EXPECT(got[0] == 0.5 && got[1] == 2.5 && got[2] == 4.5);
    EXPECT(got[3] == 1.5 && got[4] == 3.5 && got[5] == 5.5);
    EXPECT(g_deleted == 0);
    sm_tensor_release(t);
    EXPECT(g_deleted == 1);
}

int main(void)
{
    same_layouts_and_codes();
    export_through_official_structs();
    import_official_struct();
    printf("dlpack_official (%s, %s first, official DLPack %s): %d checks, %d failures\n",
#ifdef __cplusplus
           "C++",
#else
           "C",
#endif
           SM_OFFICIAL_FIRST ? "official" : "stridemem",
#if defined(DLPACK_MAJOR_VERSION)
           "1.x",
#else
           "0.x",
#endif
           g_checks, g_failures);
    return g_failures ? 1 : 0;
}

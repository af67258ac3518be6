// Binary compatibility of our hand-written DLPack structs with Debian's
// libdlpack-dev header (legacy structs; 0.6 predates the versioned ones,
// whose layout is checked against the DLPack 1.0 specification by offsets).
#include <gtest/gtest.h>

#include <cstddef>

#include <dlpack/dlpack.h>

#include "stridemem.h"
#include "stridemem_dlpack.h"

#define SAME_LAYOUT(ours, theirs, field) \
  static_assert(offsetof(ours, field) == offsetof(theirs, field), #field " offset")

static_assert(sizeof(sm_DLDevice) == sizeof(DLDevice), "DLDevice size");
SAME_LAYOUT(sm_DLDevice, DLDevice, device_type);
SAME_LAYOUT(sm_DLDevice, DLDevice, device_id);
static_assert(sizeof(sm_DLDataType) == sizeof(DLDataType), "DLDataType size");
SAME_LAYOUT(sm_DLDataType, DLDataType, code);
SAME_LAYOUT(sm_DLDataType, DLDataType, bits);
SAME_LAYOUT(sm_DLDataType, DLDataType, lanes);
static_assert(sizeof(sm_DLTensor) == sizeof(DLTensor), "DLTensor size");
SAME_LAYOUT(sm_DLTensor, DLTensor, data);
SAME_LAYOUT(sm_DLTensor, DLTensor, device);
SAME_LAYOUT(sm_DLTensor, DLTensor, ndim);
SAME_LAYOUT(sm_DLTensor, DLTensor, dtype);
SAME_LAYOUT(sm_DLTensor, DLTensor, shape);
SAME_LAYOUT(sm_DLTensor, DLTensor, strides);
SAME_LAYOUT(sm_DLTensor, DLTensor, byte_offset);
static_assert(sizeof(sm_DLManagedTensor) == sizeof(DLManagedTensor), "DLManagedTensor size");
SAME_LAYOUT(sm_DLManagedTensor, DLManagedTensor, dl_tensor);
SAME_LAYOUT(sm_DLManagedTensor, DLManagedTensor, manager_ctx);
SAME_LAYOUT(sm_DLManagedTensor, DLManagedTensor, deleter);

// DLPack 1.0: version, manager_ctx, deleter, flags, dl_tensor (64-bit ABI).
static_assert(offsetof(sm_DLManagedTensorVersioned, version) == 0, "version first");
static_assert(offsetof(sm_DLManagedTensorVersioned, manager_ctx) == 8, "manager_ctx");
static_assert(offsetof(sm_DLManagedTensorVersioned, deleter) == 16, "deleter");
static_assert(offsetof(sm_DLManagedTensorVersioned, flags) == 24, "flags");
static_assert(offsetof(sm_DLManagedTensorVersioned, dl_tensor) == 32, "dl_tensor");

TEST(DLPackLayout, EnumValuesMatchTheSpecification) {
  EXPECT_EQ(static_cast<int>(sm_kDLCPU), static_cast<int>(kDLCPU));
  EXPECT_EQ(static_cast<int>(sm_kDLCUDA), static_cast<int>(kDLCUDA));
  EXPECT_EQ(static_cast<int>(sm_kDLCUDAHost), static_cast<int>(kDLCUDAHost));
  EXPECT_EQ(sm_kDLInt, kDLInt);
  EXPECT_EQ(sm_kDLUInt, kDLUInt);
  EXPECT_EQ(sm_kDLFloat, kDLFloat);
  EXPECT_EQ(sm_kDLBfloat, kDLBfloat);
  EXPECT_EQ(SM_DEVICE_CUDA_HOST, static_cast<int>(kDLCUDAHost));
  EXPECT_EQ(sizeof(sm_DLManagedTensor), sizeof(DLManagedTensor));
}

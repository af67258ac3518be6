// What the CUDA entry points answer in a build without the CUDA backend
// (STRIDEMEM_CUDA=OFF or no nvcc): no devices, and a clear SM_ERR_DEVICE
// for any attempt to use one. The CPU path is unaffected.
#include "backend/backend.hpp"
#include "core/error.hpp"

namespace sm {

namespace {
constexpr const char* kReason = "stridemem was built without CUDA (STRIDEMEM_CUDA=OFF)";
}  // namespace

Backend& cuda_backend(int index) { fail(SM_ERR_DEVICE, "cuda:%d: %s", index, kReason); }

Backend& cuda_host_backend() { fail(SM_ERR_DEVICE, "cuda_host: %s", kReason); }

int cuda_device_count() noexcept { return 0; }

const char* cuda_unavailable_reason() noexcept { return kReason; }

}  // namespace sm

#include "memory/out_of_memory.hpp"

#include <mutex>

#include "core/error.hpp"

namespace sm {

namespace {
std::mutex g_mu;
sm_oom_observer g_observer = nullptr;
void* g_user = nullptr;
thread_local bool t_inside_observer = false;

void notify(const sm_oom_info& info) noexcept {
  if (t_inside_observer) return;
  sm_oom_observer fn;
  void* user;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    fn = g_observer;
    user = g_user;
  }
  if (!fn) return;
  t_inside_observer = true;
  fn(&info, user);  // C linkage: nothing is thrown through it
  t_inside_observer = false;
}
}  // namespace

void set_oom_observer(sm_oom_observer observer, void* user_data) noexcept {
  std::lock_guard<std::mutex> lock(g_mu);
  g_observer = observer;
  g_user = user_data;
}

void fail_out_of_memory(sm_device device, const std::string& device_name, size_t request,
                        size_t rounded, const std::string& why, const AllocatorSnapshot& s) {
  std::string report;
  Fragmentation f;
  try {
    f = fragmentation(s);
    report = oom_report(device_name, request, rounded, why, s);
  } catch (...) {
    // No host memory left even for the text: the short form still says what failed.
    throw Error(SM_ERR_OUT_OF_MEMORY, "out of memory (" + why + ")");
  }
  sm_oom_info info{};
  info.struct_size = sizeof info;
  info.device = device;
  info.requested_bytes = static_cast<int64_t>(request);
  info.allocated_bytes = s.stats.allocated_bytes;
  info.reserved_bytes = s.stats.reserved_bytes;
  info.cached_free_bytes = static_cast<int64_t>(f.free_bytes);
  info.largest_free_block = static_cast<int64_t>(f.largest_free_block);
  info.report = report.c_str();
  notify(info);
  throw Error(SM_ERR_OUT_OF_MEMORY, std::move(report));
}

}  // namespace sm

#include "memory/out_of_memory.hpp"

#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "core/error.hpp"

namespace sm {

namespace {
// One call of the observer in flight, on its caller's stack (nothing is
// allocated: the failure may be for lack of host memory), linked into the
// list of calls in flight under g_mu.
struct Call {
  uint64_t generation;  // g_generation when the observer was read
  bool replacing;       // its observer is inside set_oom_observer
  Call* next;
};

std::mutex g_mu;
std::condition_variable g_call_ended;
sm_oom_observer g_observer = nullptr;
void* g_user = nullptr;
uint64_t g_generation = 0;  // counts replacements
Call* g_calls = nullptr;
thread_local Call* t_call = nullptr;  // this thread's call, while its observer runs

void notify(const sm_oom_info& info) noexcept {
  if (t_call) return;  // a failure inside the observer does not call it again
  Call call{0, false, nullptr};
  sm_oom_observer fn;
  void* user;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    fn = g_observer;
    user = g_user;
    if (!fn) return;
    call.generation = g_generation;
    call.next = g_calls;
    g_calls = &call;
  }
  t_call = &call;
  fn(&info, user);  // C linkage: nothing is thrown through it
  t_call = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    for (Call** p = &g_calls; *p; p = &(*p)->next) {
      if (*p == &call) {
        *p = call.next;
        break;
      }
    }
  }
  g_call_ended.notify_all();
}

// A call that read an observer older than `generation` is still running,
// other than those waiting in set_oom_observer themselves (two observers
// replacing each other would otherwise wait for each other forever).
bool older_call_running(uint64_t generation) {
  for (const Call* c = g_calls; c; c = c->next)
    if (c->generation < generation && !c->replacing) return true;
  return false;
}
}  // namespace

void set_oom_observer(sm_oom_observer observer, void* user_data) noexcept {
  std::unique_lock<std::mutex> lock(g_mu);
  g_observer = observer;
  g_user = user_data;
  const uint64_t generation = ++g_generation;
  // Called from inside an observer: that call is not waited for (it is this
  // thread's own), and observers on other threads replacing the observer at
  // the same moment are not waited for either.
  if (t_call) t_call->replacing = true;
  g_call_ended.notify_all();  // a waiter may have been waiting for this call
  g_call_ended.wait(lock, [&] { return !older_call_running(generation); });
  if (t_call) t_call->replacing = false;
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

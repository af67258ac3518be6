// A fake device for the device caching allocator's unit tests: fake
// addresses (never dereferenced), a capacity to simulate running out, events
// whose completion the test controls, and counters that show what reached
// the "device" (raw allocations, frees, event waits). Shared by
// test_device_caching_allocator.cpp and test_allocator_snapshots.cpp.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "memory/device_caching_allocator.hpp"

namespace sm {
namespace {

constexpr size_t MiB = size_t(1) << 20;

struct FakeEvent {
  bool recorded = false;
  bool done = false;
  void* stream = nullptr;
};

class FakeDevice final : public DeviceMemoryOps {
 public:
  explicit FakeDevice(size_t capacity = size_t(1) << 40) : capacity_(capacity) {}
  ~FakeDevice() override {
    for (FakeEvent* e : events_) delete e;
  }

  void* raw_alloc(size_t n) override {
    std::lock_guard<std::mutex> l(mu_);
    raw_allocs++;
    if (used_ + n > capacity_) return nullptr;
    used_ += n;
    const uintptr_t p = next_;
    next_ += n + 4096;  // gaps: neighbouring segments are never contiguous
    live_[p] = n;
    return reinterpret_cast<void*>(p);
  }
  void raw_free(void* p) noexcept override {
    std::lock_guard<std::mutex> l(mu_);
    raw_frees++;
    auto it = live_.find(reinterpret_cast<uintptr_t>(p));
    if (it == live_.end()) {
      bad_frees++;
      return;
    }
    used_ -= it->second;
    live_.erase(it);
  }
  void* current_stream() override { return tls_stream(); }
  void* event_create() override {
    std::lock_guard<std::mutex> l(mu_);
    events_created++;
    auto* e = new FakeEvent();
    events_.insert(e);
    return e;
  }
  void event_destroy(void* e) noexcept override {
    std::lock_guard<std::mutex> l(mu_);
    events_.erase(static_cast<FakeEvent*>(e));
    delete static_cast<FakeEvent*>(e);
  }
  void event_record(void* e, void* stream) override {
    auto* fe = static_cast<FakeEvent*>(e);
    fe->recorded = true;
    fe->done = false;
    fe->stream = stream;
    records++;
  }
  bool event_query(void* e) override {
    queries++;
    return static_cast<FakeEvent*>(e)->done;
  }
  void event_synchronize(void* e) override {
    waits++;
    static_cast<FakeEvent*>(e)->done = true;  // "waiting" completes the work
  }
  std::string device_name() const override { return "fake:0"; }
  int device_index() const override { return 0; }

  // Completes all work recorded on a stream.
  void finish_stream(void* stream) {
    for (FakeEvent* e : events_)
      if (e->recorded && e->stream == stream) e->done = true;
  }
  static void*& tls_stream() {
    thread_local void* s = nullptr;
    return s;
  }
  size_t used() const { return used_; }
  size_t live_segments() const { return live_.size(); }

  std::atomic<int> raw_allocs{0}, raw_frees{0}, bad_frees{0}, events_created{0};
  std::atomic<int> records{0}, queries{0}, waits{0};

 private:
  std::mutex mu_;
  size_t capacity_;
  size_t used_ = 0;
  uintptr_t next_ = 0x10000000;
  std::map<uintptr_t, size_t> live_;
  std::set<FakeEvent*> events_;
};

void* const kStreamA = reinterpret_cast<void*>(0xA);
void* const kStreamB = reinterpret_cast<void*>(0xB);

struct StreamScope {
  explicit StreamScope(void* s) : prev(FakeDevice::tls_stream()) { FakeDevice::tls_stream() = s; }
  ~StreamScope() { FakeDevice::tls_stream() = prev; }
  void* prev;
};

}  // namespace
}  // namespace sm

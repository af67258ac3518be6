// The engine's one error type. Engine code throws sm::Error; the C ABI layer
// (src/abi) catches it at the edge and turns it into a status + message.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "stridemem.h"

namespace sm {

class Error : public std::runtime_error {
 public:
  Error(sm_status status, std::string message)
      : std::runtime_error(std::move(message)), status_(status) {}
  sm_status status() const noexcept { return status_; }

 private:
  sm_status status_;
};

// Formats like printf and throws Error(status, ...). Cold path.
[[noreturn]] void fail(sm_status status, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

// "[2, 3, 4]" for messages.
std::string format_dims(const int64_t* v, int n);

}  // namespace sm

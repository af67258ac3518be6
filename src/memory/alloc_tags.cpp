#include "memory/alloc_tags.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/error.hpp"

namespace sm {

namespace {

thread_local std::vector<Tag> t_tags;

// Length of the UTF-8 sequence starting at s (of n bytes left), 0 if invalid:
// overlong forms, surrogates and code points above U+10FFFF are refused, so a
// tag always reaches JSON and HTML as well-formed text.
size_t utf8_sequence(const unsigned char* s, size_t n) {
  const unsigned char c = s[0];
  if (c < 0x80) return 1;
  size_t len;
  uint32_t cp;
  if ((c & 0xE0) == 0xC0) len = 2, cp = c & 0x1F;
  else if ((c & 0xF0) == 0xE0) len = 3, cp = c & 0x0F;
  else if ((c & 0xF8) == 0xF0) len = 4, cp = c & 0x07;
  else return 0;
  if (len > n) return 0;
  for (size_t i = 1; i < len; ++i) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

}  // namespace

void push_tag(const char* name) {
  if (!name) fail(SM_ERR_INVALID_ARGUMENT, "tag is NULL");
  const size_t n = strnlen(name, kMaxTagBytes + 1);
  if (n == 0) fail(SM_ERR_INVALID_ARGUMENT, "tag is empty: give it a name, such as \"encoder\"");
  if (n > kMaxTagBytes)
    fail(SM_ERR_INVALID_ARGUMENT, "tag is longer than %zu bytes", kMaxTagBytes);
  const auto* s = reinterpret_cast<const unsigned char*>(name);
  for (size_t i = 0; i < n;) {
    if (s[i] < 0x20 || s[i] == 0x7F)
      fail(SM_ERR_INVALID_ARGUMENT, "tag has a control character (byte 0x%02x at %zu)", s[i], i);
    const size_t len = utf8_sequence(s + i, n - i);
    if (!len) fail(SM_ERR_INVALID_ARGUMENT, "tag is not valid UTF-8 (at byte %zu)", i);
    // C1 controls U+0080..U+009F are encoded as C2 80..C2 9F; in a report or
    // a terminal they act as C0 controls do (U+0085 is a line break).
    if (len == 2 && s[i] == 0xC2 && s[i + 1] < 0xA0)
      fail(SM_ERR_INVALID_ARGUMENT, "tag has a control character (U+%04X, bytes 0xc2 0x%02x at %zu)",
           static_cast<unsigned>(s[i + 1]), s[i + 1], i);
    i += len;
  }
  if (t_tags.size() >= kMaxTagDepth)
    fail(SM_ERR_INVALID_ARGUMENT,
         "this thread already has %zu tags pushed: a sm_pop_tag is missing (tags nest: pop "
         "each one when its scope ends)",
         t_tags.size());
  std::string path;
  if (!t_tags.empty()) path = *t_tags.back() + "/";
  path.append(name, n);
  t_tags.push_back(std::make_shared<const std::string>(std::move(path)));
}

void pop_tag() {
  if (t_tags.empty())
    fail(SM_ERR_INVALID_ARGUMENT, "no tag is pushed on this thread (tags are per thread: pop on "
                                  "the thread that pushed)");
  t_tags.pop_back();
}

const Tag& current_tag() noexcept {
  static const Tag kNone;
  return t_tags.empty() ? kNone : t_tags.back();
}

size_t tag_depth() noexcept { return t_tags.size(); }

}  // namespace sm

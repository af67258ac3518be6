// The calling thread's tag stack (sm_push_tag / sm_pop_tag). Every
// allocation records the tag on top, so a snapshot answers "who holds this
// memory". A tag is the whole path of the stack, joined with '/': pushing
// "attn" under "encoder" records "encoder/attn". Tags are shared, immutable
// strings: a block holds a reference, not a copy, so an allocation under a
// tag costs one reference-count increment and none without a tag.
#pragma once

#include <memory>
#include <string>

namespace sm {

using Tag = std::shared_ptr<const std::string>;  // nullptr: untagged

constexpr size_t kMaxTagBytes = 256;   // one name, in bytes
constexpr size_t kMaxTagDepth = 256;   // names pushed and not popped, per thread

// Throws Error(SM_ERR_INVALID_ARGUMENT) for a NULL, empty or over-long name,
// one that is not UTF-8 or holds control characters (C0, DEL or C1:
// U+0000..U+001F, U+007F..U+009F), and past kMaxTagDepth.
void push_tag(const char* name);
// Throws Error(SM_ERR_INVALID_ARGUMENT) when nothing is pushed on this thread.
void pop_tag();
// The path on top of this thread's stack (nullptr when empty).
const Tag& current_tag() noexcept;
size_t tag_depth() noexcept;

}  // namespace sm

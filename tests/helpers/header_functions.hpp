// The functions include/stridemem.h declares ("SM_API <type> sm_name("), read
// from the header itself: the coverage checks (bad input, concurrency) compare
// what they exercise with this list, so a function added to the header
// without a test fails them by name. Empty if the file cannot be read.
#pragma once

#include <cctype>
#include <cstdio>
#include <set>
#include <string>

namespace sm_test {

inline std::set<std::string> header_functions(const char* path) {
  std::set<std::string> out;
  FILE* f = std::fopen(path, "r");
  if (!f) return out;
  std::string h;
  char chunk[4096];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) h.append(chunk, n);
  std::fclose(f);
  for (size_t at = h.find("SM_API "); at != std::string::npos; at = h.find("SM_API ", at + 1)) {
    const size_t paren = h.find('(', at);
    if (paren == std::string::npos) break;
    size_t end = paren;
    while (end > at && h[end - 1] == ' ') --end;
    size_t start = end;
    while (start > at && (std::isalnum(static_cast<unsigned char>(h[start - 1])) || h[start - 1] == '_'))
      --start;
    const std::string name = h.substr(start, end - start);
    if (name.rfind("sm_", 0) == 0) out.insert(name);
  }
  return out;
}

}  // namespace sm_test

// A small, strict JSON reader for the memory snapshot tests (RFC 8259:
// objects, arrays, strings with every escape, numbers, true/false/null;
// nothing after the document but whitespace). Test-only: the API tests
// link only the shared library, and the snapshot must be checked by a
// reader that is not the library's own writer. Strict on purpose, so that
// a malformed snapshot fails the parse: unescaped control characters,
// invalid UTF-8, lone surrogate escapes, leading zeros, trailing commas and
// duplicate keys are all errors.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace smt {
namespace json {

struct Value {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool b = false;
  std::string text;  // String: the decoded text; Number: the literal as written
  std::vector<Value> items;
  std::vector<std::pair<std::string, Value>> members;  // in document order

  bool is_null() const { return kind == Null; }
  bool is_int() const {
    return kind == Number && text.find_first_of(".eE") == std::string::npos;
  }
  int64_t i64() const {
    if (!is_int()) throw std::runtime_error("not an integer: " + describe());
    return std::stoll(text);
  }
  uint64_t u64() const {
    if (!is_int() || text[0] == '-') throw std::runtime_error("not an unsigned integer: " + describe());
    return std::stoull(text);
  }
  double num() const {
    if (kind != Number) throw std::runtime_error("not a number: " + describe());
    return std::strtod(text.c_str(), nullptr);
  }
  const std::string& str() const {
    if (kind != String) throw std::runtime_error("not a string: " + describe());
    return text;
  }
  bool has(const std::string& key) const {
    for (const auto& m : members)
      if (m.first == key) return true;
    return false;
  }
  const Value& operator[](const std::string& key) const {
    if (kind != Object) throw std::runtime_error("not an object, looking for \"" + key + "\"");
    for (const auto& m : members)
      if (m.first == key) return m.second;
    throw std::runtime_error("no key \"" + key + "\"");
  }
  const Value& operator[](size_t i) const {
    if (kind != Array || i >= items.size()) throw std::runtime_error("no item " + std::to_string(i));
    return items[i];
  }
  size_t size() const { return kind == Array ? items.size() : members.size(); }
  std::string describe() const {
    static const char* const names[] = {"null", "bool", "number", "string", "array", "object"};
    return std::string(names[kind]) + (kind == Number || kind == String ? " " + text : "");
  }
};

class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}

  Value document() {
    Value v = value(0);
    ws();
    if (i_ != s_.size()) error("text after the document");
    return v;
  }

 private:
  [[noreturn]] void error(const std::string& what) const {
    throw std::runtime_error("JSON: " + what + " at byte " + std::to_string(i_));
  }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  char peek() {
    ws();
    if (i_ >= s_.size()) error("unexpected end");
    return s_[i_];
  }
  void expect(char c) {
    if (peek() != c) error(std::string("expected '") + c + "'");
    ++i_;
  }
  bool literal(const char* w) {
    const std::string word(w);
    if (s_.compare(i_, word.size(), word) != 0) return false;
    i_ += word.size();
    return true;
  }

  Value value(int depth) {
    if (depth > 64) error("nested too deep");
    Value v;
    const char c = peek();
    if (c == '{') {
      v.kind = Value::Object;
      ++i_;
      if (peek() == '}') {
        ++i_;
        return v;
      }
      for (;;) {
        if (peek() != '"') error("expected a key");
        std::string k = string();
        for (const auto& m : v.members)
          if (m.first == k) error("duplicate key \"" + k + "\"");
        expect(':');
        v.members.emplace_back(std::move(k), value(depth + 1));
        if (peek() == ',') {
          ++i_;
          continue;
        }
        expect('}');
        return v;
      }
    }
    if (c == '[') {
      v.kind = Value::Array;
      ++i_;
      if (peek() == ']') {
        ++i_;
        return v;
      }
      for (;;) {
        v.items.push_back(value(depth + 1));
        if (peek() == ',') {
          ++i_;
          continue;
        }
        expect(']');
        return v;
      }
    }
    if (c == '"') {
      v.kind = Value::String;
      v.text = string();
      return v;
    }
    if (literal("true")) {
      v.kind = Value::Bool;
      v.b = true;
      return v;
    }
    if (literal("false")) {
      v.kind = Value::Bool;
      return v;
    }
    if (literal("null")) return v;
    v.kind = Value::Number;
    v.text = number();
    return v;
  }

  std::string number() {
    const size_t start = i_;
    auto digits = [&] {
      const size_t d = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      if (i_ == d) error("expected a digit");
    };
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    if (i_ < s_.size() && s_[i_] == '0') {
      ++i_;
      if (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') error("leading zero");
    } else {
      digits();
    }
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      digits();
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      digits();
    }
    return s_.substr(start, i_ - start);
  }

  unsigned hex4() {
    if (i_ + 4 > s_.size()) error("short \\u escape");
    unsigned v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = s_[i_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= unsigned(c - '0');
      else if (c >= 'a' && c <= 'f') v |= unsigned(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= unsigned(c - 'A' + 10);
      else error("bad \\u escape");
    }
    return v;
  }
  static void put_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  // One raw UTF-8 sequence, validated (no overlong forms, no surrogates).
  void raw_utf8(std::string& out) {
    const unsigned char c = static_cast<unsigned char>(s_[i_]);
    size_t len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) len = 2, cp = c & 0x1F;
    else if ((c & 0xF0) == 0xE0) len = 3, cp = c & 0x0F;
    else if ((c & 0xF8) == 0xF0) len = 4, cp = c & 0x07;
    else error("invalid UTF-8 lead byte");
    if (i_ + len > s_.size()) error("truncated UTF-8");
    for (size_t k = 1; k < len; ++k) {
      const unsigned char d = static_cast<unsigned char>(s_[i_ + k]);
      if ((d & 0xC0) != 0x80) error("invalid UTF-8 continuation");
      cp = (cp << 6) | (d & 0x3F);
    }
    static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) error("invalid UTF-8");
    out.append(s_, i_, len);
    i_ += len;
  }

  std::string string() {
    expect('"');
    std::string out;
    for (;;) {
      if (i_ >= s_.size()) error("unterminated string");
      const unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        return out;
      }
      if (c < 0x20) error("unescaped control character in a string");
      if (c >= 0x80) {
        raw_utf8(out);
        continue;
      }
      ++i_;
      if (c != '\\') {
        out += static_cast<char>(c);
        continue;
      }
      if (i_ >= s_.size()) error("unterminated escape");
      const char e = s_[i_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xDC00 && cp <= 0xDFFF) error("lone low surrogate");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (s_.compare(i_, 2, "\\u") != 0) error("lone high surrogate");
            i_ += 2;
            const uint32_t lo = hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) error("bad surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          put_utf8(out, cp);
          break;
        }
        default: error(std::string("bad escape \\") + e);
      }
    }
  }

  const std::string& s_;
  size_t i_ = 0;
};

inline Value parse(const std::string& s) { return Parser(s).document(); }

}  // namespace json
}  // namespace smt

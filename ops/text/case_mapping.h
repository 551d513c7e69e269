// Upper/lower-casing of UTF-8 strings for a named locale, safe to use from many threads.
//
// The Unicode simple case mappings of utf8proc, so the result is the same on every host whatever
// locales it has installed (glibc's tables used to decide it, with a small built-in fallback).
// The locale matters only where Unicode says it does: Turkish and Azeri ("tr", "az") map dotted
// and dotless i apart.
#pragma once

#include <string>

namespace onnxflow {

class CaseMapper {
 public:
  // `locale` like "en_US" or "tr_TR.UTF-8"; "" means the default (no language-specific rules).
  explicit CaseMapper(const std::string& locale);

  std::string ToUpper(const std::string& utf8) const { return Map(utf8, true); }
  std::string ToLower(const std::string& utf8) const { return Map(utf8, false); }
  // "unicode", or "unicode+tr" / "unicode+az" with the dotted-i rules.
  const std::string& locale_name() const { return name_; }

 private:
  std::string Map(const std::string& utf8, bool upper) const;
  char32_t MapOne(char32_t c, bool upper) const;

  bool dotted_i_ = false;  // tr, az: 'i' uppercases to U+0130, 'I' lowercases to U+0131
  std::string name_;
};

// Decodes one UTF-8 sequence starting at s[i]; returns false (and leaves `len` 1) on a malformed
// sequence, whose first byte callers copy unchanged.
bool DecodeUtf8(const std::string& s, size_t i, char32_t* c, size_t* len);
void AppendUtf8(char32_t c, std::string* out);

}  // namespace onnxflow

// Upper/lower-casing of UTF-8 strings for a named locale, safe to use from many threads.
//
// Uses a glibc locale object (newlocale + tow{upper,lower}_l, which need no global setlocale).
// When neither the requested locale nor C.UTF-8 is installed, falls back to built-in tables for
// ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic.
#pragma once

#include <memory>
#include <string>

namespace onnxflow {

class CaseMapper {
 public:
  // `locale` like "en_US" or "tr_TR.UTF-8"; "" means the default (C.UTF-8).
  explicit CaseMapper(const std::string& locale);

  std::string ToUpper(const std::string& utf8) const { return Map(utf8, true); }
  std::string ToLower(const std::string& utf8) const { return Map(utf8, false); }
  // Name of the locale in use, or "builtin" for the fallback tables.
  const std::string& locale_name() const { return name_; }

 private:
  std::string Map(const std::string& utf8, bool upper) const;
  char32_t MapOne(char32_t c, bool upper) const;

  std::shared_ptr<void> locale_;  // a locale_t, freed with freelocale
  std::string name_;
  bool ascii_is_plain_ = true;  // false for locales such as tr_TR where 'i' uppercases to U+0130
};

// Decodes one UTF-8 sequence starting at s[i]; returns false (and leaves `len` 1) on a malformed
// sequence, whose first byte callers copy unchanged.
bool DecodeUtf8(const std::string& s, size_t i, char32_t* c, size_t* len);
void AppendUtf8(char32_t c, std::string* out);

}  // namespace onnxflow

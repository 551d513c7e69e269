#include "ops/text/case_mapping.h"

#include <utf8proc.h>

namespace onnxflow {

bool DecodeUtf8(const std::string& s, size_t i, char32_t* c, size_t* len) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  *len = 1;
  if (b0 < 0x80) { *c = b0; return true; }
  size_t n;
  char32_t value;
  if ((b0 & 0xE0) == 0xC0) { n = 2; value = b0 & 0x1F; }
  else if ((b0 & 0xF0) == 0xE0) { n = 3; value = b0 & 0x0F; }
  else if ((b0 & 0xF8) == 0xF0) { n = 4; value = b0 & 0x07; }
  else return false;
  if (i + n > s.size()) return false;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return false;
    value = (value << 6) | (byte(i + k) & 0x3F);
  }
  // Overlong forms, surrogates and values past U+10FFFF are malformed.
  static const char32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (value < kMin[n] || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return false;
  *c = value;
  *len = n;
  return true;
}

void AppendUtf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

namespace {

// Turkish and Azeri case dotted and dotless i apart (SpecialCasing.txt's language-specific rules;
// the only ones that change a single code point's simple mapping).
bool DottedILanguage(const std::string& locale) {
  const std::string language = locale.substr(0, locale.find_first_of("_-.@"));
  return language == "tr" || language == "az";
}

}  // namespace

CaseMapper::CaseMapper(const std::string& locale) : dotted_i_(DottedILanguage(locale)) {
  name_ = dotted_i_ ? "unicode+" + locale.substr(0, 2) : "unicode";
}

char32_t CaseMapper::MapOne(char32_t c, bool upper) const {
  if (dotted_i_) {
    if (upper && c == U'i') return 0x130;    // i -> İ
    if (!upper && c == U'I') return 0x131;   // I -> ı
    if (!upper && c == 0x130) return U'i';   // İ -> i
  }
  // ß has no simple uppercase in UnicodeData.txt (its uppercase "SS" is a full mapping that
  // changes the length); utf8proc answers U+1E9E (ẞ). Keep ß, as the spec's reference and glibc
  // locales do.
  if (upper && c == 0xDF) return c;
  const auto code = static_cast<utf8proc_int32_t>(c);
  return static_cast<char32_t>(upper ? utf8proc_toupper(code) : utf8proc_tolower(code));
}

std::string CaseMapper::Map(const std::string& utf8, bool upper) const {
  std::string out;
  out.reserve(utf8.size());
  for (size_t i = 0; i < utf8.size();) {
    const unsigned char b = static_cast<unsigned char>(utf8[i]);
    if (b < 0x80 && !dotted_i_) {  // ASCII fast path
      char c = static_cast<char>(b);
      if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
      if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
      out.push_back(c);
      ++i;
      continue;
    }
    char32_t c;
    size_t len;
    if (!DecodeUtf8(utf8, i, &c, &len)) {
      out.push_back(utf8[i]);  // malformed byte: copied unchanged
      ++i;
      continue;
    }
    AppendUtf8(MapOne(c, upper), &out);
    i += len;
  }
  return out;
}

}  // namespace onnxflow

#include "ops/text/case_mapping.h"

#include <locale.h>
#include <wctype.h>

#include <vector>

namespace onnxflow {
namespace {

locale_t TryLocale(const std::string& name) {
  if (name.empty()) return static_cast<locale_t>(nullptr);
  return newlocale(LC_CTYPE_MASK, name.c_str(), static_cast<locale_t>(nullptr));
}

// Simple case pairs for the scripts most text uses, for machines without a UTF-8 locale.
char32_t BuiltinUpper(char32_t c) {
  if (c >= U'a' && c <= U'z') return c - 32;
  if ((c >= 0xE0 && c <= 0xFE && c != 0xF7)) return c - 32;
  if (c == 0xFF) return 0x178;
  if (c >= 0x100 && c <= 0x137 && (c & 1)) return c - 1;
  if (c >= 0x139 && c <= 0x148 && !(c & 1)) return c - 1;
  if (c >= 0x14A && c <= 0x177 && (c & 1)) return c - 1;
  if (c == 0x17A || c == 0x17C || c == 0x17E) return c - 1;
  if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) return c - 32;
  if (c == 0x3C2) return 0x3A3;
  if (c >= 0x430 && c <= 0x44F) return c - 32;
  if (c >= 0x450 && c <= 0x45F) return c - 80;
  return c;
}

char32_t BuiltinLower(char32_t c) {
  if (c >= U'A' && c <= U'Z') return c + 32;
  if ((c >= 0xC0 && c <= 0xDE && c != 0xD7)) return c + 32;
  if (c == 0x178) return 0xFF;
  if (c >= 0x100 && c <= 0x137 && !(c & 1)) return c + 1;
  if (c >= 0x139 && c <= 0x148 && (c & 1)) return c + 1;
  if (c >= 0x14A && c <= 0x177 && !(c & 1)) return c + 1;
  if (c == 0x179 || c == 0x17B || c == 0x17D) return c + 1;
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  return c;
}

}  // namespace

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

CaseMapper::CaseMapper(const std::string& locale) {
  std::vector<std::string> candidates;
  if (!locale.empty()) {
    candidates = {locale, locale + ".UTF-8", locale + ".utf8"};
  }
  candidates.push_back("C.UTF-8");
  for (const std::string& name : candidates) {
    // Only UTF-8 locales map wide characters beyond ASCII; a name with another codeset still
    // yields correct wide-character tables in glibc, so any locale that loads is fine.
    locale_t loc = TryLocale(name);
    if (loc != static_cast<locale_t>(nullptr)) {
      locale_ = std::shared_ptr<void>(static_cast<void*>(loc), [](void* p) { freelocale(static_cast<locale_t>(p)); });
      name_ = name;
      ascii_is_plain_ = towupper_l(L'i', loc) == L'I' && towlower_l(L'I', loc) == L'i';
      return;
    }
  }
  name_ = "builtin";
}

char32_t CaseMapper::MapOne(char32_t c, bool upper) const {
  if (locale_ == nullptr) return upper ? BuiltinUpper(c) : BuiltinLower(c);
  const locale_t loc = static_cast<locale_t>(locale_.get());
  const wint_t w = static_cast<wint_t>(c);
  return static_cast<char32_t>(upper ? towupper_l(w, loc) : towlower_l(w, loc));
}

std::string CaseMapper::Map(const std::string& utf8, bool upper) const {
  std::string out;
  out.reserve(utf8.size());
  for (size_t i = 0; i < utf8.size();) {
    const unsigned char b = static_cast<unsigned char>(utf8[i]);
    if (b < 0x80 && ascii_is_plain_) {  // ASCII fast path
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

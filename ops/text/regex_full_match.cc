// RegexFullMatch-20: true where a string matches the RE2 `pattern` in full.
//
// The pattern is translated from RE2 syntax to ECMAScript and run with std::wregex over UTF-32,
// so `.` and character classes see code points as RE2 does. The translation gives \d \w \s
// their ASCII-only RE2 meaning, maps (?i) (?s) flags, named groups (?P<name>...), \A \z, \Q..\E
// and \x{...} (a case-insensitive pattern uses C.UTF-8's case tables when installed, so (?i) folds
// non-ASCII letters as RE2 does); it refuses what RE2 refuses (back-references, look-around) and what ECMAScript
// cannot express (\p{...} Unicode classes). With libstdc++ the regex runs in its Thompson-NFA
// mode (__polynomial): time linear in the input and stack depth bounded by the pattern, so a long
// input string cannot overflow the stack.
#include <locale>
#include <memory>
#include <regex>
#include <stdexcept>
#include <string>

#include "ops/framework/parallel.h"
#include "ops/text/case_mapping.h"
#include "ops/text/string_ops.h"

namespace onnxflow {
namespace {

std::u32string DecodeToUtf32(const std::string& s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    char32_t c;
    size_t len;
    if (!DecodeUtf8(s, i, &c, &len)) c = 0xFFFD;  // malformed byte: the replacement character
    out.push_back(c);
    i += len;
  }
  return out;
}

std::wstring ToWide(const std::u32string& s) { return std::wstring(s.begin(), s.end()); }

bool IsEcmaSpecial(char32_t c) {
  switch (c) {
    case '\\': case '^': case '$': case '.': case '|': case '?': case '*': case '+':
    case '(': case ')': case '[': case ']': case '{': case '}':
      return true;
    default:
      return false;
  }
}

void AppendLiteral(char32_t c, std::u32string* out) {
  if (IsEcmaSpecial(c)) out->push_back('\\');
  out->push_back(c);
}

struct Translated {
  std::u32string pattern;
  bool icase = false;
};

// RE2 -> ECMAScript. Returns an error naming the construct it cannot translate.
Result<Translated> TranslateRe2(const std::u32string& p) {
  Translated t;
  std::u32string& out = t.pattern;
  bool dot_all = false;
  bool in_class = false;
  size_t i = 0;
  const size_t n = p.size();
  auto rest = [&](size_t at, const char* lit) {
    for (size_t k = 0; lit[k] != 0; ++k) {
      if (at + k >= n || p[at + k] != static_cast<char32_t>(lit[k])) return false;
    }
    return true;
  };
  while (i < n) {
    const char32_t c = p[i];
    if (c == '\\') {
      if (i + 1 >= n) return InvalidArgument("pattern ends with a lone backslash");
      const char32_t e = p[i + 1];
      i += 2;
      switch (e) {
        case 'd': out += in_class ? U"0-9" : U"[0-9]"; continue;
        case 'w': out += in_class ? U"0-9A-Za-z_" : U"[0-9A-Za-z_]"; continue;
        case 's': out += in_class ? U"\\t\\n\\f\\r " : U"[\\t\\n\\f\\r ]"; continue;
        case 'D': if (!in_class) { out += U"[^0-9]"; continue; } break;
        case 'W': if (!in_class) { out += U"[^0-9A-Za-z_]"; continue; } break;
        case 'S': if (!in_class) { out += U"[^\\t\\n\\f\\r ]"; continue; } break;
        case 'A': if (!in_class) { out += U"^"; continue; } break;
        case 'z': if (!in_class) { out += U"$"; continue; } break;
        case 'Q': {  // literal text up to \E
          while (i < n && !(p[i] == '\\' && i + 1 < n && p[i + 1] == 'E')) AppendLiteral(p[i++], &out);
          if (i < n) i += 2;
          continue;
        }
        case 'x':
          if (i < n && p[i] == '{') {
            size_t close = p.find('}', i);
            if (close == std::u32string::npos) return InvalidArgument("unterminated \\x{ in pattern");
            char32_t value = 0;
            for (size_t k = i + 1; k < close; ++k) {
              const char32_t h = p[k];
              int digit;
              if (h >= '0' && h <= '9') digit = static_cast<int>(h - '0');
              else if (h >= 'a' && h <= 'f') digit = static_cast<int>(h - 'a' + 10);
              else if (h >= 'A' && h <= 'F') digit = static_cast<int>(h - 'A' + 10);
              else return InvalidArgument("bad hex digit in \\x{...}");
              value = value * 16 + static_cast<char32_t>(digit);
              if (value > 0x10FFFF) return InvalidArgument("\\x{...} past U+10FFFF");
            }
            AppendLiteral(value, &out);
            i = close + 1;
            continue;
          }
          break;
        case 'p': case 'P':
          return Unimplemented("Unicode classes (\\p, \\P) in RegexFullMatch patterns are not supported");
        case 'C':
          return Unimplemented("\\C in RegexFullMatch patterns is not supported");
        default:
          if (e >= '1' && e <= '9') return InvalidArgument("back-references are not RE2 syntax");
          break;
      }
      out.push_back('\\');
      out.push_back(e);
      continue;
    }
    if (in_class) {
      if (c == ']' ) in_class = false;
      if (c == '[' && rest(i, "[:")) {  // POSIX class: copy through its closing :]
        const size_t close = p.find(U":]", i + 2);
        if (close == std::u32string::npos) return InvalidArgument("unterminated [: in pattern");
        out.append(p, i, close + 2 - i);
        i = close + 2;
        continue;
      }
      out.push_back(c);
      ++i;
      continue;
    }
    if (c == '[') {
      in_class = true;
      out.push_back(c);
      ++i;
      if (i < n && p[i] == '^') out.push_back(p[i++]);
      if (i < n && p[i] == ']') { out += U"\\]"; ++i; }  // a leading ] is a literal in RE2
      continue;
    }
    if (c == '.' && dot_all) { out += U"[\\s\\S]"; ++i; continue; }
    if (c == '{') {
      // {n}, {n,} or {n,m} is a repetition (RE2 caps counts at 1000); any other brace is literal.
      size_t k = i + 1;
      auto number = [&](int64_t* value) {
        const size_t begin = k;
        *value = 0;
        while (k < n && p[k] >= '0' && p[k] <= '9') {
          if (*value <= 100000) *value = *value * 10 + static_cast<int64_t>(p[k] - '0');
          ++k;
        }
        return k > begin;
      };
      int64_t low = 0, high = 0;
      bool repetition = number(&low);
      if (repetition && k < n && p[k] == ',') {
        ++k;
        number(&high);
      } else {
        high = low;
      }
      repetition = repetition && k < n && p[k] == '}';
      if (!repetition) { out += U"\\{"; ++i; continue; }
      if (low > 1000 || high > 1000) return InvalidArgument("a repetition count exceeds RE2's limit of 1000");
      out.append(p, i, k + 1 - i);
      i = k + 1;
      continue;
    }
    if (c == '}') { out += U"\\}"; ++i; continue; }
    if (c == '(' && i + 1 < n && p[i + 1] == '?') {
      if (rest(i, "(?P<") || (rest(i, "(?<") && !rest(i, "(?<=") && !rest(i, "(?<!"))) {
        const size_t close = p.find('>', i);
        if (close == std::u32string::npos) return InvalidArgument("unterminated group name in pattern");
        out.push_back('(');
        i = close + 1;
        continue;
      }
      if (rest(i, "(?:")) { out += U"(?:"; i += 3; continue; }
      if (rest(i, "(?=") || rest(i, "(?!") || rest(i, "(?<")) {
        return InvalidArgument("look-around assertions are not RE2 syntax");
      }
      // Flag groups: (?flags) for the whole pattern when leading, or (?flags:...).
      size_t k = i + 2;
      bool negate = false;
      while (k < n && p[k] != ')' && p[k] != ':') {
        const char32_t f = p[k++];
        if (f == '-') { negate = true; continue; }
        if (f == 'i' && !negate) { if (!out.empty() || p[k] == ':') return Unimplemented("(?i) is only supported at the start of a pattern"); t.icase = true; continue; }
        if (f == 's' && !negate) { if (!out.empty() || p[k] == ':') return Unimplemented("(?s) is only supported at the start of a pattern"); dot_all = true; continue; }
        return Unimplemented(std::string("regex flag '") + static_cast<char>(f) + "' is not supported");
      }
      if (k >= n) return InvalidArgument("unterminated (? group in pattern");
      i = k + 1;
      continue;
    }
    out.push_back(c);
    ++i;
  }
  if (in_class) return InvalidArgument("missing ] in pattern");
  return t;
}

class RegexFullMatch final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    if (!info.has_attribute("pattern")) return InvalidArgument("attribute 'pattern' is required");
    const std::string pattern = info.GetString("pattern", "");
    auto translated = TranslateRe2(DecodeToUtf32(pattern));
    if (!translated.ok()) return translated.status().WithContext("pattern '" + pattern + "'");
    auto flags = std::regex_constants::ECMAScript;
    if (translated->icase) flags |= std::regex_constants::icase;
#ifdef __GLIBCXX__
    flags |= std::regex_constants::__polynomial;  // libstdc++'s Thompson-NFA executor
#endif
    try {
      auto regex = std::make_shared<std::wregex>();
      if (translated->icase) {
        // RE2's (?i) folds case beyond ASCII; the classic locale's wide tables do not, C.UTF-8's do.
        try {
          regex->imbue(std::locale("C.UTF-8"));
        } catch (const std::runtime_error&) {
          // Not installed: ASCII-only case folding.
        }
      }
      regex->assign(ToWide(translated->pattern), flags);
      return std::unique_ptr<OpKernel>(new RegexFullMatch(std::move(regex)));
    } catch (const std::exception& e) {
      return InvalidArgument("pattern '" + pattern + "' is not a valid regular expression: " + e.what());
    }
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (x->dtype() != DataType::kString) {
      return InvalidArgument(std::string("RegexFullMatch needs a string input, got ") + DataTypeName(x->dtype()));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, DataType::kBool, x->shape()));
    const std::string* in = x->data<std::string>();
    bool* out = y->mutable_data<bool>();
    try {
      // Each match costs roughly pattern size * input length; 256 is a guess for typical strings.
      ParallelFor(ctx, x->size(), 256, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = std::regex_match(ToWide(DecodeToUtf32(in[i])), *regex_);
      });
    } catch (const std::exception& e) {
      return ResourceExhausted(std::string("regular expression matching failed: ") + e.what());
    }
    return Status::Ok();
  }

 private:
  explicit RegexFullMatch(std::shared_ptr<const std::wregex> regex) : regex_(std::move(regex)) {}

  std::shared_ptr<const std::wregex> regex_;
};

}  // namespace

Status RegisterRegexFullMatch(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "RegexFullMatch", 20, kOpenEnded, Create<RegexFullMatch>());
}

}  // namespace onnxflow

// com.microsoft Tokenizer (version 1): splits each string of X ([C] or [N, C]) into tokens, giving
// [..., T] where T is the most tokens any string has, shorter rows padded with `pad_value`. It is
// what skl2onnx writes for a scikit-learn CountVectorizer / TfidfVectorizer before TfIdfVectorizer.
//   separators  RE2 patterns applied one after another, each splitting every piece the previous
//               ones left; the pieces between matches are the tokens. [""] splits characters.
//   tokenexp    an RE2 pattern whose matches are the tokens ("." splits characters).
//   mincharnum  tokens shorter than this many UTF-8 characters are dropped (a tokenexp match that
//               short is skipped by one character, so a longer match may start inside it).
//   mark        each row begins with "\x02" and its tokens end with "\x03", padding after.
// Matching is leftmost-longest, as ONNX Runtime sets RE2; strings must be valid UTF-8. RE2 keeps
// hostile patterns linear in the input and its compiled program within kMaxProgramBytes.
#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <re2/re2.h>
#include <utf8proc.h>

#include "ops/framework/domains.h"
#include "ops/text/string_ops.h"

namespace onnxflow {
namespace {

constexpr int64_t kMaxProgramBytes = int64_t{8} << 20;
constexpr char kStartText[] = "\x02";
constexpr char kEndText[] = "\x03";

// The UTF-8 characters in `text`, or -1 when it is not valid UTF-8.
int64_t Utf8Length(std::string_view text) {
  int64_t count = 0;
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  utf8proc_ssize_t left = static_cast<utf8proc_ssize_t>(text.size());
  while (left > 0) {
    utf8proc_int32_t code;
    const utf8proc_ssize_t bytes = utf8proc_iterate(p, left, &code);
    if (bytes <= 0) return -1;
    p += bytes;
    left -= bytes;
    ++count;
  }
  return count;
}

// The bytes of the UTF-8 character at the start of `text` (at least 1).
size_t FirstCharBytes(std::string_view text) {
  utf8proc_int32_t code;
  const utf8proc_ssize_t bytes = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                                  static_cast<utf8proc_ssize_t>(text.size()), &code);
  return bytes > 0 ? static_cast<size_t>(bytes) : 1;
}

class Tokenizer final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    for (const char* name : {"mark", "pad_value", "mincharnum"}) {
      if (!info.has_attribute(name)) return InvalidArgument(std::string("attribute '") + name + "' is required");
    }
    auto k = std::make_unique<Tokenizer>();
    k->mark_ = info.GetInt("mark", 0) != 0;
    k->pad_ = info.GetString("pad_value", "");
    k->min_chars_ = info.GetInt("mincharnum", 1);
    if (k->min_chars_ <= 0) return InvalidArgument("attribute 'mincharnum' must be positive");
    const std::vector<std::string> separators = info.GetStrings("separators");
    const std::string tokenexp = info.GetString("tokenexp", "");
    if (info.has_attribute("separators")) {
      if (separators.empty()) return InvalidArgument("attribute 'separators' must not be empty");
      k->chars_ = separators.size() == 1 && separators[0].empty();
    } else {
      if (tokenexp.empty()) return InvalidArgument("one of the attributes 'separators' and 'tokenexp' is required");
      k->chars_ = tokenexp == ".";
    }
    if (k->chars_ && k->min_chars_ > 1) {
      return InvalidArgument("mincharnum " + std::to_string(k->min_chars_) + " drops every token of a character split");
    }
    if (k->chars_) return std::unique_ptr<OpKernel>(std::move(k));
    RE2::Options options;
    options.set_longest_match(true);
    options.set_log_errors(false);
    options.set_max_mem(kMaxProgramBytes);
    const std::vector<std::string> patterns = info.has_attribute("separators") ? separators : std::vector{tokenexp};
    for (const std::string& pattern : patterns) {
      auto regex = std::make_unique<RE2>(pattern, options);
      if (!regex->ok()) return InvalidArgument("'" + pattern + "' is not a valid RE2 pattern: " + regex->error());
      k->patterns_.push_back(std::move(regex));
    }
    k->split_ = info.has_attribute("separators");
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (x->dtype() != DataType::kString) {
      return InvalidArgument(std::string("X must be a string tensor, got ") + DataTypeName(x->dtype()));
    }
    if (x->rank() != 1 && x->rank() != 2) return InvalidArgument("X must be [C] or [N, C], got " + ShapeToString(x->shape()));
    const std::string* in = x->data<std::string>();
    const int64_t count = x->size();
    std::vector<std::vector<std::string_view>> rows(static_cast<size_t>(count));
    Status failed = Status::Ok();
    for (int64_t i = 0; i < count && failed.ok(); ++i) failed = Tokens(in[i], &rows[i]);
    ONNXFLOW_RETURN_IF_ERROR(failed);
    size_t most = 0;
    for (const auto& row : rows) most = std::max(most, row.size());
    Shape shape = x->shape();
    if (count == 0) {  // [N, 0] or [0]
      shape.back() = 0;
      ONNXFLOW_RETURN_IF_ERROR(ctx.Allocate(0, DataType::kString, shape).status());
      return Status::Ok();
    }
    const int64_t width = most == 0 ? 0 : static_cast<int64_t>(most) + (mark_ ? 2 : 0);
    shape.push_back(width);
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, DataType::kString, shape));
    std::string* out = y->mutable_data<std::string>();
    for (int64_t i = 0; i < count && width > 0; ++i) {
      std::string* row = out + i * width;
      int64_t at = 0;
      if (mark_) row[at++] = kStartText;
      for (std::string_view token : rows[i]) row[at++] = std::string(token);
      if (mark_) row[at++] = kEndText;
      while (at < width) row[at++] = pad_;
    }
    return Status::Ok();
  }

 private:
  Status Tokens(const std::string& s, std::vector<std::string_view>* row) const {
    if (Utf8Length(s) < 0) return InvalidArgument("a string is not valid UTF-8: '" + s.substr(0, 64) + "'");
    const std::string_view text(s);
    if (chars_) {
      for (size_t at = 0; at < text.size();) {
        const size_t bytes = FirstCharBytes(text.substr(at));
        row->push_back(text.substr(at, bytes));
        at += bytes;
      }
      return Status::Ok();
    }
    if (!split_) {
      // The matches are the tokens; one too short is stepped over by a character.
      for (size_t at = 0; at <= text.size();) {
        re2::StringPiece match;
        if (!patterns_[0]->Match(re2::StringPiece(text.data(), text.size()), at, text.size(), RE2::UNANCHORED, &match, 1)) break;
        const size_t pos = static_cast<size_t>(match.data() - text.data());
        if (Utf8Length(std::string_view(match.data(), match.size())) >= min_chars_) {
          row->push_back(text.substr(pos, match.size()));
          at = pos + std::max<size_t>(match.size(), 1);
        } else {
          at = pos + FirstCharBytes(text.substr(pos));
        }
      }
      return Status::Ok();
    }
    // Each separator splits every piece the ones before it left.
    std::vector<std::string_view> pieces{text};
    for (const auto& separator : patterns_) {
      std::vector<std::string_view> next;
      for (std::string_view piece : pieces) {
        size_t start = 0;
        auto keep = [&](size_t end) {
          const std::string_view token = piece.substr(start, end - start);
          if (Utf8Length(token) >= min_chars_) next.push_back(token);
        };
        re2::StringPiece match;
        while (start <= piece.size() &&
               separator->Match(re2::StringPiece(piece.data(), piece.size()), start, piece.size(), RE2::UNANCHORED, &match, 1)) {
          const size_t pos = static_cast<size_t>(match.data() - piece.data());
          keep(pos);
          // An empty match steps over one character, so the scan always moves.
          start = pos + (match.empty() ? FirstCharBytes(piece.substr(pos)) : match.size());
        }
        if (start <= piece.size()) keep(piece.size());
      }
      pieces.swap(next);
    }
    *row = std::move(pieces);
    return Status::Ok();
  }

  bool mark_ = false;
  std::string pad_;
  int64_t min_chars_ = 1;
  bool chars_ = false;  // one token per UTF-8 character
  bool split_ = false;  // patterns_ are separators (else one tokenexp)
  std::vector<std::unique_ptr<RE2>> patterns_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterTokenizer(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "Tokenizer", 1, kOpenEnded, Make<Tokenizer>());
}

}  // namespace onnxflow

// TfIdfVectorizer-9: counts the pool's n-grams (with up to max_skip_count skipped items between
// consecutive items) in each row of a [C] or [N, C] int32/int64/string input, and writes the
// counts, TF, IDF or TF-IDF weighted, at the coordinates ngram_indexes gives.
//
// The pool is loaded into a trie at load time (only n-gram sizes in [min_gram_length,
// max_gram_length]); each row then walks the trie from every start position for every skip
// distance. Unigrams do not depend on the skip distance, so they are counted on the first pass only.
#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "ops/framework/parallel.h"
#include "ops/text/string_ops.h"

namespace onnxflow {
namespace {

enum class Weighting { kTF, kIDF, kTFIDF };

template <typename K>
struct NgramTrie {
  struct Node {
    int64_t output = -1;  // output coordinate when the path to here is a pool n-gram
    std::unordered_map<K, std::unique_ptr<Node>> next;
  };
  Node root;

  void Insert(const K* items, int64_t n, int64_t output) {
    Node* node = &root;
    for (int64_t i = 0; i < n; ++i) {
      std::unique_ptr<Node>& child = node->next[items[i]];
      if (child == nullptr) child = std::make_unique<Node>();
      node = child.get();
    }
    node->output = output;  // a repeated n-gram keeps its last coordinate
  }
};

struct Config {
  Weighting weighting;
  int64_t min_gram;
  int64_t max_gram;
  int64_t max_skip;
  int64_t output_size;
  std::vector<float> weights;  // by output coordinate; empty means all ones
};

// The trie key for an input item: the item itself when the types agree (no string copies),
// else widened (int32 input, int64 pool).
template <typename K, typename Item>
decltype(auto) AsKey(const Item& item) {
  if constexpr (std::is_same_v<K, Item>) {
    return (item);
  } else {
    return static_cast<K>(item);
  }
}

// Counts the pool n-grams of one row into `out` (output_size floats, zeroed).
template <typename K, typename Item>
void CountRow(const NgramTrie<K>& trie, const Config& cfg, const Item* row, int64_t c, float* out) {
  int64_t first_size = cfg.min_gram;
  // A skip distance of c or more cannot fit two items in the row.
  const int64_t last_distance = std::max<int64_t>(1, std::min<int64_t>(cfg.max_skip, c - 2) + 1);
  for (int64_t distance = 1; distance <= last_distance; ++distance) {
    for (int64_t start = 0; start < c; ++start) {
      // No n-gram of a counted size fits: start + distance * (first_size - 1) >= c, without overflow.
      if (first_size - 1 > (c - 1 - start) / distance) break;
      const typename NgramTrie<K>::Node* node = &trie.root;
      int64_t item = start;
      for (int64_t size = 1; size <= cfg.max_gram && item < c; ++size, item += distance) {
        auto it = node->next.find(AsKey<K>(row[item]));
        if (it == node->next.end()) break;
        node = it->second.get();
        if (size >= first_size && node->output >= 0) out[node->output] += 1.0f;
      }
    }
    if (first_size == 1) {
      ++first_size;
      if (first_size > cfg.max_gram) break;
    }
  }
}

void ApplyWeighting(const Config& cfg, float* row) {
  for (int64_t j = 0; j < cfg.output_size; ++j) {
    const float w = j < static_cast<int64_t>(cfg.weights.size()) ? cfg.weights[j] : 1.0f;
    switch (cfg.weighting) {
      case Weighting::kTF: break;
      case Weighting::kIDF: row[j] = row[j] > 0 ? w : 0.0f; break;
      case Weighting::kTFIDF: row[j] *= w; break;
    }
  }
}

class TfIdfVectorizer final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    std::unique_ptr<TfIdfVectorizer> k(new TfIdfVectorizer());
    Config& cfg = k->cfg_;
    const std::string mode = info.GetString("mode", "");
    if (mode == "TF") cfg.weighting = Weighting::kTF;
    else if (mode == "IDF") cfg.weighting = Weighting::kIDF;
    else if (mode == "TFIDF") cfg.weighting = Weighting::kTFIDF;
    else return InvalidArgument("mode must be TF, IDF or TFIDF, got '" + mode + "'");
    ONNXFLOW_ASSIGN_OR_RETURN(cfg.min_gram, info.RequireInt("min_gram_length"));
    ONNXFLOW_ASSIGN_OR_RETURN(cfg.max_gram, info.RequireInt("max_gram_length"));
    ONNXFLOW_ASSIGN_OR_RETURN(cfg.max_skip, info.RequireInt("max_skip_count"));
    if (cfg.min_gram < 1 || cfg.max_gram < cfg.min_gram) {
      return InvalidArgument("need 1 <= min_gram_length <= max_gram_length, got " + std::to_string(cfg.min_gram) +
                             " and " + std::to_string(cfg.max_gram));
    }
    if (cfg.max_skip < 0) return InvalidArgument("max_skip_count must be >= 0, got " + std::to_string(cfg.max_skip));
    cfg.weights = info.GetFloats("weights");

    const bool has_ints = info.has_attribute("pool_int64s");
    const bool has_strings = info.has_attribute("pool_strings");
    if (has_ints == has_strings) return InvalidArgument("exactly one of pool_int64s and pool_strings must be set");
    k->strings_ = has_strings;
    const std::vector<int64_t> counts = info.GetInts("ngram_counts");
    const std::vector<int64_t> indexes = info.GetInts("ngram_indexes");
    if (counts.empty()) return InvalidArgument("ngram_counts is required");
    if (indexes.empty()) return InvalidArgument("ngram_indexes is required");
    cfg.output_size = 0;
    for (int64_t idx : indexes) {
      if (idx < 0) return InvalidArgument("ngram_indexes has a negative entry " + std::to_string(idx));
      cfg.output_size = std::max(cfg.output_size, idx + 1);
    }
    Status loaded = has_strings ? k->LoadPool(info.GetStrings("pool_strings"), counts, indexes, &k->string_trie_)
                                : k->LoadPool(info.GetInts("pool_int64s"), counts, indexes, &k->int_trie_);
    if (!loaded.ok()) return loaded;
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    const DataType dtype = x->dtype();
    if (strings_ ? dtype != DataType::kString : (dtype != DataType::kInt32 && dtype != DataType::kInt64)) {
      return InvalidArgument(std::string("TfIdfVectorizer with pool_") + (strings_ ? "strings needs a string" : "int64s needs an int32 or int64") +
                             " input, got " + DataTypeName(dtype));
    }
    if (x->rank() > 2) return InvalidArgument("TfIdfVectorizer takes a [C] or [N, C] input, got " + ShapeToString(x->shape()));
    const int64_t rows = x->rank() == 2 ? x->dim(0) : 1;
    const int64_t c = x->rank() == 0 ? 1 : x->dim(x->rank() - 1);
    const Shape shape = x->rank() == 2 ? Shape{rows, cfg_.output_size} : Shape{cfg_.output_size};
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, DataType::kFloat, shape));
    float* out = y->mutable_data<float>();
    // Work per row: about c start positions, each walking up to max_gram trie levels, for every
    // skip distance that fits in the row (both bounded by c, which keeps this from overflowing).
    const int64_t bounded_c = std::min<int64_t>(c, 1 << 20);
    const int64_t distances = std::min<int64_t>(cfg_.max_skip, bounded_c) + 1;
    const int64_t cost = bounded_c * std::min<int64_t>(distances, 1 << 10) * std::min<int64_t>(cfg_.max_gram, 16) * 16;
    auto run_rows = [&](auto item_tag, const auto& trie) {
      using Item = decltype(item_tag);
      const Item* in = x->data<Item>();
      ParallelFor(ctx, rows, cost, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          float* row_out = out + r * cfg_.output_size;
          CountRow(trie, cfg_, in + r * c, c, row_out);
          ApplyWeighting(cfg_, row_out);
        }
      });
    };
    if (dtype == DataType::kString) run_rows(std::string{}, string_trie_);
    else if (dtype == DataType::kInt32) run_rows(int32_t{}, int_trie_);
    else run_rows(int64_t{}, int_trie_);
    return Status::Ok();
  }

 private:
  TfIdfVectorizer() = default;

  // Loads the n-grams of the sizes in [min_gram, max_gram] into `trie`.
  template <typename K>
  Status LoadPool(const std::vector<K>& pool, const std::vector<int64_t>& counts, const std::vector<int64_t>& indexes,
                  NgramTrie<K>* trie) {
    const int64_t total = static_cast<int64_t>(pool.size());
    int64_t ngram_id = 0;  // position of the n-gram in the pool, the index into ngram_indexes
    for (size_t level = 0; level < counts.size(); ++level) {
      const int64_t size = static_cast<int64_t>(level) + 1;
      const int64_t begin = counts[level];
      const int64_t end = level + 1 < counts.size() ? counts[level + 1] : total;
      if (begin < 0 || begin > end || end > total) {
        return InvalidArgument("ngram_counts " + std::to_string(begin) + ".." + std::to_string(end) +
                               " do not fit a pool of " + std::to_string(total));
      }
      const int64_t ngrams = (end - begin) / size;
      if (ngram_id + ngrams > static_cast<int64_t>(indexes.size())) {
        return InvalidArgument("ngram_indexes has " + std::to_string(indexes.size()) + " entries, the pool has more n-grams");
      }
      if (size >= cfg_.min_gram && size <= cfg_.max_gram) {
        for (int64_t g = 0; g < ngrams; ++g) trie->Insert(pool.data() + begin + g * size, size, indexes[ngram_id + g]);
      }
      ngram_id += ngrams;
    }
    return Status::Ok();
  }

  Config cfg_;
  bool strings_ = false;
  NgramTrie<int64_t> int_trie_;
  NgramTrie<std::string> string_trie_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterTfIdfVectorizer(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "TfIdfVectorizer", 9, kOpenEnded, Make<TfIdfVectorizer>());
}

}  // namespace onnxflow

// The token rows a search has produced so far: the prompt, then one token per step. A beam search
// rebuilds every row each step from the row its beam continues (a beam's history moves with it),
// so two buffers take turns, as in ONNX Runtime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace onnxflow::generation {

class Sequences {
 public:
  // `rows` rows of room for `max_length` tokens; `prompt` holds `rows` x `length` tokens.
  Sequences(int rows, int max_length, int length, const std::vector<int32_t>& prompt)
      : rows_(rows), max_length_(max_length), length_(length),
        current_(static_cast<size_t>(rows) * max_length), next_(current_.size()) {
    for (int r = 0; r < rows; ++r) {
      for (int j = 0; j < length; ++j) current_[Index(r, j)] = prompt[static_cast<size_t>(r) * length + j];
    }
  }

  int rows() const { return rows_; }
  int length() const { return length_; }
  const int32_t* row(int r) const { return &current_[Index(r, 0)]; }

  // Greedy: every row grows by its own token.
  void Append(const std::vector<int32_t>& tokens) {
    for (int r = 0; r < rows_; ++r) current_[Index(r, length_)] = tokens[r];
    ++length_;
  }

  // Beam search: row r becomes row sources[r] followed by tokens[r].
  void AppendFrom(const std::vector<int32_t>& sources, const std::vector<int32_t>& tokens) {
    for (int r = 0; r < rows_; ++r) {
      const int32_t* from = row(sources[r]);
      int32_t* to = &next_[Index(r, 0)];
      for (int j = 0; j < length_; ++j) to[j] = from[j];
      to[length_] = tokens[r];
    }
    current_.swap(next_);
    ++length_;
  }

 private:
  size_t Index(int r, int j) const { return static_cast<size_t>(r) * max_length_ + j; }

  int rows_, max_length_, length_;
  std::vector<int32_t> current_, next_;
};

}  // namespace onnxflow::generation

// A dense row-major float matrix: the feature matrix every learner consumes.
#pragma once
#include <cstddef>
#include <vector>

namespace carb {

struct Matrix {
  std::size_t rows = 0, cols = 0;
  std::vector<float> data;  // rows * cols, row-major

  Matrix() = default;
  Matrix(std::size_t r, std::size_t c, float fill = 0.0f) : rows(r), cols(c), data(r * c, fill) {}
  float& operator()(std::size_t r, std::size_t c) { return data[r * cols + c]; }
  float operator()(std::size_t r, std::size_t c) const { return data[r * cols + c]; }
  const float* row(std::size_t r) const { return data.data() + r * cols; }

  /// The rows at the given indices, in that order.
  Matrix take_rows(const std::vector<std::size_t>& idx) const;
  /// This matrix with extra columns appended (extra.rows must equal rows).
  Matrix with_columns(const Matrix& extra) const;
};

}  // namespace carb

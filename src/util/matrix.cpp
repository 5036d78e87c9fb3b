// Matrix helpers that build new matrices from existing ones: row selection
// (train/test splits, bootstrap samples) and column appending (the cascade adds
// predicted targets as features).
#include "carb/matrix.hpp"

#include <algorithm>
#include <string>

#include "carb/error.hpp"

namespace carb {

Matrix Matrix::take_rows(const std::vector<std::size_t>& idx) const {
  Matrix out(idx.size(), cols);
  for (std::size_t i = 0; i < idx.size(); ++i) {
    if (idx[i] >= rows)
      throw InputError("Matrix::take_rows: row index " + std::to_string(idx[i]) + " out of range (rows " +
                       std::to_string(rows) + ")");
    std::copy_n(row(idx[i]), cols, out.data.data() + i * cols);
  }
  return out;
}

Matrix Matrix::with_columns(const Matrix& extra) const {
  if (extra.rows != rows)
    throw InputError("Matrix::with_columns: extra has " + std::to_string(extra.rows) + " rows, expected " +
                     std::to_string(rows));
  Matrix out(rows, cols + extra.cols);
  for (std::size_t r = 0; r < rows; ++r) {
    float* dst = out.data.data() + r * out.cols;
    std::copy_n(row(r), cols, dst);
    std::copy_n(extra.row(r), extra.cols, dst + cols);
  }
  return out;
}

}  // namespace carb

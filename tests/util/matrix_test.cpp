// Tests of Matrix::take_rows and Matrix::with_columns.
#include "carb/matrix.hpp"

#include <gtest/gtest.h>

#include "carb/error.hpp"

namespace carb {
namespace {

Matrix counting(std::size_t rows, std::size_t cols) {
  Matrix m(rows, cols);
  for (std::size_t i = 0; i < m.data.size(); ++i) m.data[i] = static_cast<float>(i);
  return m;
}

struct TakeCase {
  std::vector<std::size_t> idx;
};

class MatrixTakeRows : public ::testing::TestWithParam<TakeCase> {};

TEST_P(MatrixTakeRows, CopiesTheRowsInTheGivenOrder) {
  const Matrix m = counting(4, 3);
  const auto& idx = GetParam().idx;
  const Matrix t = m.take_rows(idx);
  ASSERT_EQ(t.rows, idx.size());
  ASSERT_EQ(t.cols, 3u);
  for (std::size_t i = 0; i < idx.size(); ++i)
    for (std::size_t c = 0; c < 3; ++c) EXPECT_EQ(t(i, c), m(idx[i], c));
}

INSTANTIATE_TEST_SUITE_P(Cases, MatrixTakeRows,
                         ::testing::Values(TakeCase{{}}, TakeCase{{0}}, TakeCase{{3, 2, 1, 0}},
                                           TakeCase{{1, 1, 1}}, TakeCase{{2, 0}}));

TEST(MatrixTakeRowsInvalid, OutOfRangeIndexIsInputError) {
  EXPECT_THROW(counting(4, 3).take_rows({0, 4}), InputError);
  EXPECT_THROW(Matrix().take_rows({0}), InputError);
}

TEST(MatrixWithColumns, AppendsColumnsRowByRow) {
  const Matrix a = counting(3, 2);
  Matrix extra(3, 1);
  for (std::size_t r = 0; r < 3; ++r) extra(r, 0) = -static_cast<float>(r) - 1;
  const Matrix w = a.with_columns(extra);
  ASSERT_EQ(w.rows, 3u);
  ASSERT_EQ(w.cols, 3u);
  for (std::size_t r = 0; r < 3; ++r) {
    EXPECT_EQ(w(r, 0), a(r, 0));
    EXPECT_EQ(w(r, 1), a(r, 1));
    EXPECT_EQ(w(r, 2), extra(r, 0));
  }
}

TEST(MatrixWithColumns, ZeroExtraColumnsIsACopy) {
  const Matrix a = counting(2, 2);
  const Matrix w = a.with_columns(Matrix(2, 0));
  EXPECT_EQ(w.cols, 2u);
  EXPECT_EQ(w.data, a.data);
}

TEST(MatrixWithColumns, RowCountMismatchIsInputError) {
  EXPECT_THROW(counting(3, 2).with_columns(Matrix(2, 1)), InputError);
}

}  // namespace
}  // namespace carb

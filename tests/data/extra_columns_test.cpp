// ExtraColumns (include/carb/extra_columns.hpp): a record's side columns as a sorted array, with the
// std::map operations carb used on them, checked against a std::map doing the same.
#include "carb/extra_columns.hpp"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <stdexcept>
#include <string>

namespace carb {
namespace {

// The same random operations on both: every observable answer and the final contents agree.
TEST(ExtraColumns, BehavesAsAStdMapUnderRandomOperations) {
  std::mt19937 g(7);
  for (int round = 0; round < 50; ++round) {
    ExtraColumns e;
    std::map<std::string, std::string> m;
    for (int op = 0; op < 200; ++op) {
      const std::string k = "c" + std::to_string(g() % 40), v = std::to_string(g() % 1000);
      switch (g() % 6) {
        case 0: {
          const auto [it, added] = e.emplace(k, v);
          const auto [mit, madded] = m.emplace(k, v);
          EXPECT_EQ(added, madded);
          EXPECT_EQ(it->first, mit->first);
          EXPECT_EQ(it->second, mit->second);  // an existing value is kept, as std::map keeps it
          break;
        }
        case 1:
          EXPECT_EQ(e.insert_or_assign(k, v).second, m.insert_or_assign(k, v).second);
          break;
        case 2:
          EXPECT_EQ(e.erase(k), m.erase(k));
          break;
        case 3:
          e[k] += "x", m[k] += "x";
          break;
        case 4:
          EXPECT_EQ(e.count(k), m.count(k));
          EXPECT_EQ(e.contains(k), m.contains(k));
          if (m.contains(k)) {
            EXPECT_EQ(e.at(k), m.at(k));
          } else {
            EXPECT_THROW((void)e.at(k), std::out_of_range);
          }
          break;
        default: {
          const auto it = e.find(k);
          ASSERT_EQ(it == e.end(), !m.contains(k));
          if (it != e.end()) {
            EXPECT_EQ(it->second, m.at(k));
          }
        }
      }
    }
    EXPECT_EQ(e, ExtraColumns(m));  // the same pairs, in the same (name) order
    ASSERT_EQ(e.size(), m.size());
    auto mit = m.begin();
    for (const auto& [k, v] : e) {
      EXPECT_EQ(k, mit->first);
      EXPECT_EQ(v, mit->second);
      ++mit;
    }
  }
}

// Names given in order are appended; out of order they still land in order (hostile pass 118: a
// reader adding 8,000 columns in reverse shifted the rest at each one; it now adds them sorted).
TEST(ExtraColumns, NamesInAnyOrderEndSorted) {
  ExtraColumns forward, backward;
  for (int i = 0; i < 500; ++i) forward.emplace("x" + std::to_string(1000 + i), std::to_string(i));
  for (int i = 499; i >= 0; --i) backward.emplace("x" + std::to_string(1000 + i), std::to_string(i));
  EXPECT_EQ(forward, backward);
  std::string last;
  for (const auto& [k, v] : backward) {
    EXPECT_LT(last, k);
    last = k;
  }
  ExtraColumns listed{{"b", "2"}, {"a", "1"}, {"b", "3"}};  // a repeat keeps the first, as std::map's list does
  const std::map<std::string, std::string> as_map{{"b", "2"}, {"a", "1"}, {"b", "3"}};
  EXPECT_EQ(listed, ExtraColumns(as_map));
  EXPECT_EQ(listed.begin()->first, "a");
  EXPECT_EQ(listed.at("b"), "2");
}

}  // namespace
}  // namespace carb

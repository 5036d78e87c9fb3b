// One file given twice among inputs meant to be different (datasets to train on or merge, models
// to report, measured configurations to exclude): refused, under two names (a link, ./x) too. A
// dataset given twice was trained on as every row a duplicate, characterized as twice its rows, or
// merged as "1958 duplicates dropped" (eightieth and ninety-seventh hostile passes).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace carb::detail {

/// InputError "<what> A is given twice (also as B): give each once" when two of `files` name one
/// file (`what`, such as "--data", may be empty).
void refuse_repeated_files(const std::vector<std::filesystem::path>& files, const std::string& what);

}  // namespace carb::detail

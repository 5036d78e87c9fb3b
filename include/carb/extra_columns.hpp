// A record's further columns (name -> text) as one array sorted by name: what a std::map of them
// was, in a third of the memory. With 13 such columns a std::map's nodes were most of a dataset's
// memory (ninety-first hostile pass: the `data` commands held 2.8 KB a row, 1.4 GB for 500,000).
#pragma once
#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace carb {

/// The map operations carb uses, on a sorted array of (name, text) pairs: iteration in name order,
/// find/at/operator[]/count/contains, emplace (keeps an existing value, as std::map's does),
/// insert_or_assign, erase. Iterators yield std::pair<std::string, std::string>: a value may be
/// changed through one, a name must not be (the order is by name). Converts from a std::map.
class ExtraColumns {
 public:
  using value_type = std::pair<std::string, std::string>;
  using iterator = std::vector<value_type>::iterator;
  using const_iterator = std::vector<value_type>::const_iterator;

  ExtraColumns() = default;
  ExtraColumns(std::initializer_list<value_type> items) {
    for (const auto& [k, v] : items) emplace(k, v);  // a repeated name keeps its first value, as std::map's
  }
  // Implicit, as assigning one std::map to another was (a measurement's columns become a record's).
  ExtraColumns(const std::map<std::string, std::string>& m) : items_(m.begin(), m.end()) {}  // NOLINT

  iterator begin() { return items_.begin(); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  void clear() { items_.clear(); }
  /// Room for `n` columns, so that a reader that knows a file's columns allocates once.
  void reserve(std::size_t n) { items_.reserve(n); }

  iterator find(std::string_view name) {
    const auto it = lower(name);
    return it != items_.end() && it->first == name ? it : items_.end();
  }
  const_iterator find(std::string_view name) const {
    const auto it = lower(name);
    return it != items_.end() && it->first == name ? it : items_.end();
  }
  bool contains(std::string_view name) const { return find(name) != end(); }
  std::size_t count(std::string_view name) const { return contains(name) ? 1 : 0; }
  /// std::out_of_range when there is no such column, as std::map::at.
  std::string& at(std::string_view name) {
    const auto it = find(name);
    if (it == end()) throw std::out_of_range("no extra column '" + std::string(name) + "'");
    return it->second;
  }
  const std::string& at(std::string_view name) const {
    const auto it = find(name);
    if (it == end()) throw std::out_of_range("no extra column '" + std::string(name) + "'");
    return it->second;
  }
  /// The column's text, added empty when absent.
  std::string& operator[](std::string_view name) { return emplace(std::string(name), std::string()).first->second; }

  /// Adds the column unless it is there; either way the column and whether it was added.
  std::pair<iterator, bool> emplace(std::string name, std::string text) {
    // Names in order are appended (a reader adds a row's columns sorted: hostile pass 118 found
    // 8,000 columns in reverse order 30x slower, each insert shifting the rest).
    if (items_.empty() || items_.back().first < name) {
      items_.emplace_back(std::move(name), std::move(text));
      return {std::prev(items_.end()), true};
    }
    const auto it = lower(name);
    if (it != items_.end() && it->first == name) return {it, false};
    return {items_.emplace(it, std::move(name), std::move(text)), true};
  }
  std::pair<iterator, bool> insert_or_assign(std::string name, std::string text) {
    auto [it, added] = emplace(std::move(name), text);
    if (!added) it->second = std::move(text);
    return {it, added};
  }
  /// Each of [first, last) not already here (std::map::insert's rule).
  template <class It>
  void insert(It first, It last) {
    for (; first != last; ++first) emplace(first->first, first->second);
  }
  std::size_t erase(std::string_view name) {
    const auto it = find(name);
    if (it == end()) return 0;
    items_.erase(it);
    return 1;
  }
  iterator erase(const_iterator at) { return items_.erase(at); }

  friend bool operator==(const ExtraColumns& a, const ExtraColumns& b) { return a.items_ == b.items_; }

 private:
  template <class Items>
  static auto lower_in(Items& items, std::string_view name) {
    return std::lower_bound(items.begin(), items.end(), name,
                            [](const value_type& e, std::string_view n) { return e.first.compare(n) < 0; });
  }
  iterator lower(std::string_view name) { return lower_in(items_, name); }
  const_iterator lower(std::string_view name) const { return lower_in(items_, name); }

  std::vector<value_type> items_;  // sorted by name, each name once
};

}  // namespace carb

// A minimal well-formedness check for the SVG/HTML carb writes, used by the report tests:
// every tag closes in order, HTML void elements need no close, and no raw '<' sits in text.
#pragma once
#include <cctype>
#include <set>
#include <string>
#include <vector>

namespace carb::testing {

/// Empty when well formed; otherwise a description of the first problem.
inline std::string markup_problem(const std::string& s) {
  static const std::set<std::string> kVoid = {"meta", "br", "hr", "img", "input", "link"};
  std::vector<std::string> stack;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '>') return "stray '>' outside a tag at " + std::to_string(i);
    if (s[i] != '<') continue;
    const std::size_t end = s.find('>', i);
    if (end == std::string::npos) return "unclosed '<' at " + std::to_string(i);
    const std::string tag = s.substr(i + 1, end - i - 1);
    if (tag.empty()) return "empty tag at " + std::to_string(i);
    if (tag.find('<') != std::string::npos) return "'<' inside a tag at " + std::to_string(i);
    i = end;
    if (tag[0] == '!') continue;  // doctype
    const bool closing = tag[0] == '/', self = tag.back() == '/';
    std::string name = tag.substr(closing ? 1 : 0);
    name = name.substr(0, name.find_first_of(" /\n\t"));
    if (name.empty() || !std::isalpha(static_cast<unsigned char>(name[0]))) return "bad tag <" + tag + ">";
    if (closing) {
      if (stack.empty() || stack.back() != name)
        return "</" + name + "> closes " +
               (stack.empty() ? std::string("nothing") : "<" + stack.back() + ">");
      stack.pop_back();
    } else if (!self && !kVoid.count(name)) {
      stack.push_back(name);
    }
  }
  return stack.empty() ? "" : "<" + stack.back() + "> never closed";
}

inline std::size_t count_of(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

}  // namespace carb::testing

#include "tools/kube-sim/field_selector.hpp"

#include <algorithm>

namespace aop::sim {

bool FieldSelector::metadata_only() const {
  return std::all_of(requirements_.begin(), requirements_.end(), [](const FieldRequirement& r) {
    return r.field == "metadata.name" || r.field == "metadata.namespace";
  });
}

std::string_view FieldSelector::required_name() const {
  for (const auto& r : requirements_) {
    if (r.field == "metadata.name" && r.equals) return r.value;
  }
  return {};
}

bool FieldSelector::matches(const std::function<std::string(std::string_view)>& lookup) const {
  for (const auto& r : requirements_) {
    if ((lookup(r.field) == r.value) != r.equals) return false;
  }
  return true;
}

namespace {

// Splits on unescaped commas.
std::vector<std::string> split_terms(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      cur += s[i];
      cur += s[i + 1];
      ++i;
    } else if (s[i] == ',') {
      out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += s[i];
    }
  }
  out.push_back(std::move(cur));
  return out;
}

std::string unescape(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      out += s[i + 1];
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

Result<FieldSelector> parse_field_selector(std::string_view s) {
  FieldSelector sel;
  if (s.empty()) return sel;
  for (const auto& term : split_terms(s)) {
    if (term.empty()) continue;
    // Find the first unescaped operator.
    std::size_t pos = std::string::npos;
    std::size_t len = 0;
    bool equals = true;
    for (std::size_t i = 0; i < term.size(); ++i) {
      if (term[i] == '\\') {
        ++i;
        continue;
      }
      if (term.compare(i, 2, "!=") == 0) {
        pos = i;
        len = 2;
        equals = false;
        break;
      }
      if (term.compare(i, 2, "==") == 0) {
        pos = i;
        len = 2;
        break;
      }
      if (term[i] == '=') {
        pos = i;
        len = 1;
        break;
      }
    }
    if (pos == std::string::npos) {
      return make_error("invalid selector: '" + std::string(s) + "'; can't understand '" + term +
                        "'");
    }
    FieldRequirement r;
    r.field = unescape(std::string_view(term).substr(0, pos));
    r.equals = equals;
    r.value = unescape(std::string_view(term).substr(pos + len));
    sel.requirements_.push_back(std::move(r));
  }
  return sel;
}

}  // namespace aop::sim

#include "k8s/label_selector.hpp"

#include <algorithm>
#include <cctype>

#include <boost/json.hpp>

namespace aop::k8s {

namespace json = boost::json;

namespace {

constexpr std::size_t kMaxNameLength = 63;     // qualified-name and label-value limit
constexpr std::size_t kMaxPrefixLength = 253;  // DNS-1123 subdomain limit

constexpr std::string_view kNameRuleMessage =
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
constexpr std::string_view kValueRuleMessage =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

bool is_alnum(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], non-empty.
bool matches_name_pattern(std::string_view s) {
  if (s.empty() || !is_alnum(s.front()) || !is_alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return is_alnum(c) || c == '-' || c == '_' || c == '.'; });
}

// DNS-1123 subdomain: lower-case alphanumerics, '-' and '.', alphanumeric at both ends
// of every dot-separated label.
bool is_dns1123_subdomain(std::string_view s) {
  if (s.empty() || s.size() > kMaxPrefixLength) return false;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t dot = s.find('.', start);
    const std::string_view label =
        s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (label.empty()) return false;
    const auto ok = [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    };
    if (!std::all_of(label.begin(), label.end(), ok) || label.front() == '-' ||
        label.back() == '-') {
      return false;
    }
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return true;
}

std::string quoted(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}

std::string_view op_name(SelectorOp op) {
  switch (op) {
    case SelectorOp::in:
      return "in";
    case SelectorOp::not_in:
      return "notin";
    case SelectorOp::exists:
      return "exists";
    case SelectorOp::does_not_exist:
      return "!";
  }
  return "";
}

// apimachinery's NewRequirement validation.
std::string validate_requirement(const Requirement& r) {
  if (auto e = validate_label_key(r.key); !e.empty()) return e;
  switch (r.op) {
    case SelectorOp::in:
    case SelectorOp::not_in:
      if (r.values.empty()) {
        return "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set "
               "can't be empty";
      }
      break;
    case SelectorOp::exists:
    case SelectorOp::does_not_exist:
      if (!r.values.empty()) {
        return "values: Invalid value: " + quoted(r.values.front()) +
               ": values set must be empty for exists and does not exist";
      }
      break;
  }
  for (const auto& v : r.values) {
    if (auto e = validate_label_value(v); !e.empty()) return e;
  }
  return {};
}

}  // namespace

std::string validate_label_key(std::string_view key) {
  std::string_view name = key;
  const auto slash = key.find('/');
  if (slash != std::string_view::npos) {
    const std::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (prefix.empty()) {
      return "key: Invalid value: " + quoted(key) + ": prefix part must be non-empty";
    }
    if (!is_dns1123_subdomain(prefix)) {
      return "key: Invalid value: " + quoted(key) +
             ": prefix part a lowercase RFC 1123 subdomain must consist of lower case "
             "alphanumeric characters, '-' or '.', and must start and end with an "
             "alphanumeric character";
    }
  }
  if (name.empty()) return "key: Invalid value: " + quoted(key) + ": name part must be non-empty";
  if (name.size() > kMaxNameLength) {
    return "key: Invalid value: " + quoted(key) + ": name part must be no more than 63 characters";
  }
  if (!matches_name_pattern(name)) {
    return "key: Invalid value: " + quoted(key) + ": " + std::string(kNameRuleMessage);
  }
  return {};
}

std::string validate_label_value(std::string_view value) {
  if (value.empty()) return {};
  if (value.size() > kMaxNameLength) {
    return "values[0]: Invalid value: " + quoted(value) + ": must be no more than 63 characters";
  }
  if (!matches_name_pattern(value)) {
    return "values[0]: Invalid value: " + quoted(value) + ": " + std::string(kValueRuleMessage);
  }
  return {};
}

std::optional<std::string_view> MapLabels::get(std::string_view key) const {
  const auto it = m_.find(key);
  if (it == m_.end()) return std::nullopt;
  return std::string_view(it->second);
}

std::optional<std::string_view> JsonLabels::get(std::string_view key) const {
  if (labels_ == nullptr) return std::nullopt;
  const auto it = labels_->find(key);
  if (it == labels_->end() || !it->value().is_string()) return std::nullopt;
  return std::string_view(it->value().get_string());
}

LabelSelector LabelSelector::nothing() {
  LabelSelector s;
  s.nothing_ = true;
  return s;
}

bool LabelSelector::matches(const LabelView& labels) const {
  if (nothing_) return false;
  for (const auto& r : requirements_) {
    const auto v = labels.get(r.key);
    switch (r.op) {
      case SelectorOp::in:
        if (!v || std::find(r.values.begin(), r.values.end(), *v) == r.values.end()) return false;
        break;
      case SelectorOp::not_in:
        if (v && std::find(r.values.begin(), r.values.end(), *v) != r.values.end()) return false;
        break;
      case SelectorOp::exists:
        if (!v) return false;
        break;
      case SelectorOp::does_not_exist:
        if (v) return false;
        break;
    }
  }
  return true;
}

std::string LabelSelector::to_string() const {
  if (nothing_) return {};
  std::vector<const Requirement*> sorted;
  sorted.reserve(requirements_.size());
  for (const auto& r : requirements_) sorted.push_back(&r);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Requirement* a, const Requirement* b) { return a->key < b->key; });
  std::string out;
  for (const Requirement* r : sorted) {
    if (!out.empty()) out += ',';
    std::vector<std::string> values = r->values;
    std::sort(values.begin(), values.end());
    switch (r->op) {
      case SelectorOp::exists:
        out += r->key;
        break;
      case SelectorOp::does_not_exist:
        out += "!" + r->key;
        break;
      case SelectorOp::in:
      case SelectorOp::not_in:
        if (values.size() == 1) {
          out += r->key + (r->op == SelectorOp::in ? "=" : "!=") + values.front();
        } else {
          out += r->key + " " + std::string(op_name(r->op)) + " (";
          for (std::size_t i = 0; i < values.size(); ++i) {
            if (i > 0) out += ',';
            out += values[i];
          }
          out += ')';
        }
        break;
    }
  }
  return out;
}

LabelSelector selector_from_requirements(std::vector<Requirement> requirements) {
  LabelSelector s;
  s.requirements_ = std::move(requirements);
  return s;
}

Result<LabelSelector> parse_label_selector(const json::value& v) {
  if (!v.is_object()) {
    return make_error("label selector: expected object, got " +
                      std::string(v.is_null() ? "null" : "non-object"));
  }
  const auto& o = v.get_object();
  std::vector<Requirement> reqs;

  if (const auto it = o.find("matchLabels"); it != o.end() && !it->value().is_null()) {
    if (!it->value().is_object()) return make_error("matchLabels: expected object");
    std::vector<std::pair<std::string, std::string>> labels;
    for (const auto& kv : it->value().get_object()) {
      if (!kv.value().is_string()) {
        return make_error("matchLabels." + std::string(kv.key()) + ": expected string");
      }
      labels.emplace_back(std::string(kv.key()), std::string(kv.value().get_string()));
    }
    std::sort(labels.begin(), labels.end());
    for (auto& [k, val] : labels) {
      Requirement r{k, SelectorOp::in, {val}};
      if (auto e = validate_requirement(r); !e.empty()) return make_error(e);
      reqs.push_back(std::move(r));
    }
  }

  if (const auto it = o.find("matchExpressions"); it != o.end() && !it->value().is_null()) {
    if (!it->value().is_array()) return make_error("matchExpressions: expected array");
    for (const auto& e : it->value().get_array()) {
      if (!e.is_object()) return make_error("matchExpressions: expected object");
      const auto& eo = e.get_object();
      Requirement r;
      if (const auto k = eo.find("key"); k != eo.end() && k->value().is_string()) {
        r.key = std::string(k->value().get_string());
      }
      std::string op;
      if (const auto p = eo.find("operator"); p != eo.end() && p->value().is_string()) {
        op = std::string(p->value().get_string());
      }
      if (op == "In") {
        r.op = SelectorOp::in;
      } else if (op == "NotIn") {
        r.op = SelectorOp::not_in;
      } else if (op == "Exists") {
        r.op = SelectorOp::exists;
      } else if (op == "DoesNotExist") {
        r.op = SelectorOp::does_not_exist;
      } else {
        return make_error(quoted(op) + " is not a valid label selector operator");
      }
      if (const auto vals = eo.find("values"); vals != eo.end() && vals->value().is_array()) {
        for (const auto& val : vals->value().get_array()) {
          if (!val.is_string()) return make_error("matchExpressions.values: expected string");
          r.values.emplace_back(val.get_string());
        }
      }
      if (auto err = validate_requirement(r); !err.empty()) return make_error(err);
      reqs.push_back(std::move(r));
    }
  }
  return selector_from_requirements(std::move(reqs));
}

namespace {

// A small lexer for the string form, as apimachinery's labels.Parse tokenizes it.
class SelectorLexer {
 public:
  enum class Tok { end, ident, comma, open, close, bang, eq, deq, neq, in, notin, error };

  explicit SelectorLexer(std::string_view s) : s_(s) {}

  Tok next(std::string& text) {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_])) != 0) ++pos_;
    if (pos_ >= s_.size()) return Tok::end;
    const char c = s_[pos_];
    switch (c) {
      case ',':
        ++pos_;
        return Tok::comma;
      case '(':
        ++pos_;
        return Tok::open;
      case ')':
        ++pos_;
        return Tok::close;
      case '=':
        ++pos_;
        if (pos_ < s_.size() && s_[pos_] == '=') {
          ++pos_;
          return Tok::deq;
        }
        return Tok::eq;
      case '!':
        ++pos_;
        if (pos_ < s_.size() && s_[pos_] == '=') {
          ++pos_;
          return Tok::neq;
        }
        return Tok::bang;
      default:
        break;
    }
    const std::size_t start = pos_;
    while (pos_ < s_.size()) {
      const char d = s_[pos_];
      if (std::isspace(static_cast<unsigned char>(d)) != 0 || d == ',' || d == '(' || d == ')' ||
          d == '=' || d == '!' || d == '<' || d == '>') {
        break;
      }
      ++pos_;
    }
    if (pos_ == start) {
      text = std::string(1, s_[pos_]);
      ++pos_;
      return Tok::error;
    }
    text = std::string(s_.substr(start, pos_ - start));
    if (text == "in") return Tok::in;
    if (text == "notin") return Tok::notin;
    return Tok::ident;
  }

  Tok peek(std::string& text) {
    const std::size_t saved = pos_;
    const Tok t = next(text);
    pos_ = saved;
    return t;
  }

 private:
  std::string_view s_;
  std::size_t pos_ = 0;
};

}  // namespace

Result<LabelSelector> parse_label_selector_string(std::string_view s) {
  using Tok = SelectorLexer::Tok;
  SelectorLexer lex(s);
  std::vector<Requirement> reqs;
  std::string text;
  if (lex.peek(text) == Tok::end) return LabelSelector{};
  for (;;) {
    Requirement r;
    Tok t = lex.next(text);
    bool negated = false;
    if (t == Tok::bang) {
      negated = true;
      t = lex.next(text);
    }
    if (t != Tok::ident) {
      return make_error("unable to parse requirement: found '" + text +
                        "', expected: identifier in selector " + quoted(s));
    }
    r.key = text;
    Tok op = lex.peek(text);
    if (negated) {
      if (op != Tok::comma && op != Tok::end) {
        return make_error("unable to parse requirement: expected ',' or end after '!" + r.key +
                          "' in selector " + quoted(s));
      }
      r.op = SelectorOp::does_not_exist;
    } else if (op == Tok::comma || op == Tok::end) {
      r.op = SelectorOp::exists;
    } else {
      lex.next(text);
      if (op == Tok::eq || op == Tok::deq || op == Tok::neq) {
        r.op = op == Tok::neq ? SelectorOp::not_in : SelectorOp::in;
        const Tok v = lex.peek(text);
        if (v == Tok::ident || v == Tok::in || v == Tok::notin) {
          lex.next(text);
          r.values.push_back(text);
        } else if (v == Tok::comma || v == Tok::end) {
          r.values.emplace_back();  // `key=` selects the empty value
        } else {
          return make_error("unable to parse requirement: invalid value after '" + r.key +
                            "' in selector " + quoted(s));
        }
      } else if (op == Tok::in || op == Tok::notin) {
        r.op = op == Tok::in ? SelectorOp::in : SelectorOp::not_in;
        if (lex.next(text) != Tok::open) {
          return make_error("unable to parse requirement: expected '(' after '" + r.key +
                            (op == Tok::in ? " in" : " notin") + "' in selector " + quoted(s));
        }
        for (;;) {
          Tok v = lex.next(text);
          if (v == Tok::close) break;
          if (v == Tok::ident || v == Tok::in || v == Tok::notin) {
            r.values.push_back(text);
            v = lex.next(text);
            if (v == Tok::close) break;
            if (v == Tok::comma) continue;
          }
          return make_error("unable to parse requirement: malformed value list for '" + r.key +
                            "' in selector " + quoted(s));
        }
      } else {
        return make_error("unable to parse requirement: unsupported operator after '" + r.key +
                          "' in selector " + quoted(s));
      }
    }
    if (auto e = validate_requirement(r); !e.empty()) return make_error(e);
    reqs.push_back(std::move(r));
    const Tok sep = lex.next(text);
    if (sep == Tok::end) break;
    if (sep != Tok::comma) {
      return make_error("unable to parse requirement: expected ',' in selector " + quoted(s));
    }
  }
  return selector_from_requirements(std::move(reqs));
}

}  // namespace aop::k8s

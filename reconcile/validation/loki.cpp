#include "reconcile/validation/loki.hpp"

#include <cctype>
#include <string>

#include "reconcile/validation/prometheus.hpp"
#include "reconcile/validation/regex.hpp"
#include "reconcile/validation/text.hpp"

namespace aop::validation {
namespace {

void skip_space(std::string_view s, std::size_t& i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
}

// A Go string literal ("..." with escapes, or `...`) at s[i]; its value into `out`.
bool string_literal(std::string_view s, std::size_t& i, std::string& out) {
  if (i >= s.size()) return false;
  const char q = s[i];
  if (q == '`') {
    const auto close = s.find('`', i + 1);
    if (close == std::string_view::npos) return false;
    out = std::string(s.substr(i + 1, close - i - 1));
    i = close + 1;
    return true;
  }
  if (q != '"') return false;
  out.clear();
  for (std::size_t k = i + 1; k < s.size(); ++k) {
    if (s[k] == '\\') {
      if (k + 1 >= s.size()) return false;
      const char e = s[++k];
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case '"':
        case '\\':
        case '\'':
          out += e;
          break;
        default:
          out += '\\';
          out += e;
          break;  // \d etc. as written (regexes)
      }
      continue;
    }
    if (s[k] == '"') {
      i = k + 1;
      return true;
    }
    if (s[k] == '\n') return false;
    out += s[k];
  }
  return false;
}

}  // namespace

Complaint check_log_level(std::string_view level) {
  if (level.empty() || is_one_of(level, {"debug", "info", "warn", "error"})) return std::nullopt;
  return "log level " + describe(level) + " is not one of debug, info, warn or error";
}

Complaint check_log_format(std::string_view format) {
  if (format.empty() || is_one_of(format, {"logfmt", "json"})) return std::nullopt;
  return "log format " + describe(format) + " is not logfmt or json";
}

Complaint check_logql_selector(std::string_view s) {
  const auto bad = [&](const std::string& why) -> Complaint {
    return "invalid LogQL selector " + describe(s) + ": " + why +
           " (expected e.g. {app=\"web\", level=~\"warn|error\"} |= \"timeout\")";
  };
  if (auto c = check_text(s)) return "the selector " + *c;
  std::size_t i = 0;
  skip_space(s, i);
  if (i >= s.size() || s[i] != '{') return bad("it must start with {");
  ++i;
  std::size_t matchers = 0;
  for (;;) {
    skip_space(s, i);
    if (i < s.size() && s[i] == '}') {
      ++i;
      break;
    }
    if (matchers > 0) {
      if (i >= s.size() || s[i] != ',') return bad("matchers must be separated by ,");
      ++i;
      skip_space(s, i);
    }
    std::size_t k = i;
    while (k < s.size() && (std::isalnum(static_cast<unsigned char>(s[k])) || s[k] == '_')) ++k;
    const std::string_view name = s.substr(i, k - i);
    if (!is_label_name(name)) return bad("expected a label name at offset " + std::to_string(i));
    i = k;
    skip_space(s, i);
    std::string op;
    if (s.substr(i, 2) == "=~" || s.substr(i, 2) == "!~" || s.substr(i, 2) == "!=") {
      op = std::string(s.substr(i, 2));
      i += 2;
    } else if (i < s.size() && s[i] == '=') {
      op = "=";
      ++i;
    } else {
      return bad("expected =, !=, =~ or !~ after " + std::string(name));
    }
    skip_space(s, i);
    std::string value;
    if (!string_literal(s, i, value))
      return bad("expected a quoted value for " + std::string(name));
    if (op == "=~" || op == "!~") {
      if (auto c = check_regex(value, RegexUse::prometheus_anchored)) return c;
    }
    ++matchers;
  }
  if (matchers == 0) return bad("the stream selector needs at least one matcher");
  // The pipeline.
  for (;;) {
    skip_space(s, i);
    if (i >= s.size()) break;
    const std::string_view two = s.substr(i, 2);
    if (two == "|=" || two == "!=" || two == "|~" || two == "!~") {
      i += 2;
      skip_space(s, i);
      std::string value;
      if (!string_literal(s, i, value)) {
        return bad("expected a quoted string after " + std::string(two));
      }
      if (two == "|~" || two == "!~") {
        if (auto c = check_regex(value, RegexUse::as_written)) return c;
      }
      continue;
    }
    if (s[i] != '|') return bad("unexpected text at offset " + std::to_string(i));
    ++i;
    // Another stage: up to the next `|` outside quotes; it must not be empty.
    bool any = false;
    while (i < s.size() && s[i] != '|') {
      if (s[i] == '"' || s[i] == '`') {
        std::string v;
        if (!string_literal(s, i, v)) return bad("an unterminated string");
        any = true;
        continue;
      }
      if (s[i] == '!' && i + 1 < s.size() && (s[i + 1] == '=' || s[i + 1] == '~')) {
        // `| label != "x"` is a label filter, part of this stage.
        i += 2;
        any = true;
        continue;
      }
      if (!std::isspace(static_cast<unsigned char>(s[i]))) any = true;
      ++i;
    }
    if (!any) return bad("an empty pipeline stage after |");
  }
  return std::nullopt;
}

Complaint check_byte_size(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::size_t i = 0;
  skip_space(text, i);
  const std::size_t start = i;
  bool digits = false;
  bool dot = false;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
    if (text[i] == '.') {
      if (dot) break;
      dot = true;
    } else {
      digits = true;
    }
    ++i;
  }
  const bool number = digits && i > start;
  skip_space(text, i);
  std::string unit;
  for (; i < text.size(); ++i) {
    unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  }
  while (!unit.empty() && unit.back() == ' ') unit.pop_back();
  if (!number || !is_one_of(unit, {"",    "b",  "k",  "kb",  "ki",  "kib", "m",  "mb", "mi",
                                   "mib", "g",  "gb", "gi",  "gib", "t",   "tb", "ti", "tib",
                                   "p",   "pb", "pi", "pib", "e",   "eb",  "ei", "eib"})) {
    return "byte size " + describe(text) + " is not a size such as 512, 10KB or 1MiB";
  }
  return std::nullopt;
}

Complaint check_template_text(std::string_view text) {
  if (auto c = check_text(text)) return "the template " + *c;
  std::size_t i = 0;
  for (;;) {
    const auto open = text.find("{{", i);
    if (open == std::string_view::npos) return std::nullopt;
    const auto close = text.find("}}", open + 2);
    if (close == std::string_view::npos) {
      return "the template has an unclosed {{ at offset " + std::to_string(open);
    }
    i = close + 2;
  }
}

}  // namespace aop::validation

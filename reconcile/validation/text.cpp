#include "reconcile/validation/text.hpp"

#include "net/redact.hpp"

#include <cstdint>

namespace aop::validation {
namespace {

// The code point starting at text[i] of valid UTF-8, and its length.
std::uint32_t decode_at(std::string_view text, std::size_t i, std::size_t& len) {
  const auto c = static_cast<unsigned char>(text[i]);
  if (c < 0x80) {
    len = 1;
    return c;
  }
  std::uint32_t cp = 0;
  if (c < 0xE0) {
    len = 2;
    cp = c & 0x1Fu;
  } else if (c < 0xF0) {
    len = 3;
    cp = c & 0x0Fu;
  } else {
    len = 4;
    cp = c & 0x07u;
  }
  for (std::size_t k = 1; k < len && i + k < text.size(); ++k) {
    cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3Fu);
  }
  return cp;
}

bool is_control(std::uint32_t cp) {
  return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F);
}

Complaint control_characters(std::string_view text, bool allow_breaks) {
  if (!is_valid_utf8(text)) return "is not valid UTF-8";
  for (std::size_t i = 0; i < text.size();) {
    std::size_t len = 1;
    const std::uint32_t cp = decode_at(text, i, len);
    if (is_control(cp) && !(allow_breaks && (cp == '\t' || cp == '\n' || cp == '\r'))) {
      return allow_breaks ? "contains a control character (other than tab or line break)"
                          : "contains a control character (such as a line break or tab); it "
                            "must be a single line of printable text";
    }
    i += len;
  }
  return std::nullopt;
}

}  // namespace

std::string describe(std::string_view text) {
  // Credentials in URLs are redacted before the text is cut: a cut URL might no longer
  // look like one.
  std::string redacted;
  if (net::needs_redaction(text)) {
    redacted = net::redact(text);
    text = redacted;
  }
  constexpr std::size_t kMax = 80;
  constexpr std::string_view hex = "0123456789abcdef";
  const bool utf8 = is_valid_utf8(text);
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    const auto c = static_cast<unsigned char>(ch);
    // Cut only at a character boundary, so the message stays valid UTF-8.
    if (i >= kMax && (!utf8 || (c & 0xC0u) != 0x80u)) {
      out += "...";
      break;
    }
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else if (ch == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F || (c >= 0x80 && !utf8)) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 0xFu];
    } else {
      out += ch;
    }
  }
  out += '"';
  return out;
}

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (auto& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool is_valid_utf8(std::string_view text) {
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
      cp = c & 0x1Fu;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      cp = c & 0x0Fu;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      cp = c & 0x07u;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (std::size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(text[i + k]);
      if ((cc & 0xC0u) != 0x80u) return false;
      cp = (cp << 6) | (cc & 0x3Fu);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += len;
  }
  return true;
}

Complaint check_single_line(std::string_view text) {
  return control_characters(text, false);
}

Complaint check_text(std::string_view text) {
  return control_characters(text, true);
}

Complaint check_header_name(std::string_view name) {
  if (name.empty()) return "the header name is empty";
  for (const char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    const bool token = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       std::string_view("!#$%&'*+-.^_`|~").find(ch) != std::string_view::npos;
    if (!token) {
      return "header name " + describe(name) +
             " is not an HTTP token: use letters, digits and !#$%&'*+-.^_`|~ only (no spaces, "
             "colons or control characters)";
    }
  }
  return std::nullopt;
}

Complaint check_header_value(std::string_view value) {
  if (!is_valid_utf8(value)) return "the header value is not valid UTF-8";
  for (const char ch : value) {
    if (ch == '\r' || ch == '\n' || ch == '\0') {
      return "the header value contains a line break or NUL, which HTTP does not allow";
    }
  }
  return std::nullopt;
}

Complaint check_no_reloader_reference(std::string_view text) {
  for (std::size_t i = text.find("$("); i != std::string_view::npos; i = text.find("$(", i + 1)) {
    std::size_t k = i + 2;
    while (k < text.size() &&
           ((text[k] >= 'a' && text[k] <= 'z') || (text[k] >= 'A' && text[k] <= 'Z') ||
            (text[k] >= '0' && text[k] <= '9') || text[k] == '_')) {
      ++k;
    }
    if (k > i + 2 && k < text.size() && text[k] == ')') {
      return "contains " + describe(text.substr(i, k + 1 - i)) +
             ", which the agent's config reloader replaces with an environment variable of "
             "the agent container (and fails the whole configuration when it is unset); "
             "write the value itself";
    }
  }
  return std::nullopt;
}

bool is_one_of(std::string_view value, std::span<const std::string_view> allowed) {
  for (const auto a : allowed) {
    if (a == value) return true;
  }
  return false;
}

std::string list_of(std::span<const std::string_view> values) {
  std::string out;
  std::size_t i = 0;
  for (const auto v : values) {
    if (i > 0) out += i + 1 == values.size() ? " or " : ", ";
    out += v;
    ++i;
  }
  return out;
}

}  // namespace aop::validation

#include "net/redact.hpp"

#include <algorithm>

namespace aop::net {

namespace {

constexpr std::array<std::string_view, 2> kCredentialPrefixes = {"x_amz_", "x_goog_"};
constexpr std::array<std::string_view, 7> kCredentialSuffixes = {
    "_token", "_secret", "_password", "_passwd", "_key", "_signature", "_credential"};

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The key as matched: percent-decoded (so "to%6Ben" is "token"), lower-case, '-' as '_'.
std::string normalize_key(std::string_view key) {
  std::string out;
  out.reserve(key.size());
  for (std::size_t i = 0; i < key.size(); ++i) {
    char c = key[i];
    if (c == '%' && i + 2 < key.size()) {
      const int hi = hex_value(key[i + 1]);
      const int lo = hex_value(key[i + 2]);
      if (hi >= 0 && lo >= 0) {
        c = static_cast<char>(hi * 16 + lo);
        i += 2;
      }
    }
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c == '-') c = '_';
    out += c;
  }
  return out;
}

bool ends_url(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u <= 0x20 || u == 0x7f || c == '"' || c == '\'' || c == '<' || c == '>' || c == '`' ||
         c == '\\';
}

bool is_scheme_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '-' || c == '.';
}

// Appends `params` ("k=v&k2=v2", a query or a fragment) with credential values replaced.
void append_params(std::string& out, std::string_view params) {
  std::size_t start = 0;
  while (start <= params.size()) {
    std::size_t end = params.find_first_of("&;", start);
    if (end == std::string_view::npos) end = params.size();
    const std::string_view param = params.substr(start, end - start);
    const std::size_t eq = param.find('=');
    if (eq != std::string_view::npos && eq + 1 < param.size() &&
        is_credential_key(param.substr(0, eq))) {
      out.append(param.substr(0, eq + 1));
      out.append(kRedacted);
    } else {
      out.append(param);
    }
    if (end == params.size()) break;
    out += params[end];
    start = end + 1;
  }
}

}  // namespace

bool is_credential_key(std::string_view key) {
  const std::string k = normalize_key(key);
  if (k.empty()) return false;
  if (std::find(kCredentialKeys.begin(), kCredentialKeys.end(), k) != kCredentialKeys.end()) {
    return true;
  }
  for (const auto p : kCredentialPrefixes) {
    if (k.size() > p.size() && k.starts_with(p)) return true;
  }
  for (const auto s : kCredentialSuffixes) {
    if (k.ends_with(s)) return true;
  }
  return false;
}

std::string redact_url(std::string_view url) {
  std::string out;
  out.reserve(url.size());
  const std::size_t sep = url.find("://");
  const std::size_t authority = sep == std::string_view::npos ? 0 : sep + 3;
  out.append(url.substr(0, authority));
  std::size_t authority_end = url.find_first_of("/?#", authority);
  if (authority_end == std::string_view::npos) authority_end = url.size();
  std::string_view host = url.substr(authority, authority_end - authority);
  if (sep != std::string_view::npos) {
    if (const std::size_t at = host.rfind('@'); at != std::string_view::npos) {
      out.append(kRedacted);
      host.remove_prefix(at);  // keeps the '@'
    }
  }
  out.append(host);
  std::string_view rest = url.substr(authority_end);
  const std::size_t hash = rest.find('#');
  const std::string_view before_fragment = rest.substr(0, hash);
  const std::size_t question = before_fragment.find('?');
  out.append(before_fragment.substr(0, question));
  if (question != std::string_view::npos) {
    out += '?';
    append_params(out, before_fragment.substr(question + 1));
  }
  if (hash != std::string_view::npos) {
    out += '#';
    append_params(out, rest.substr(hash + 1));
  }
  return out;
}

std::string redact(std::string_view text) {
  std::size_t sep = text.find("://");
  if (sep == std::string_view::npos) return std::string(text);
  std::string out;
  out.reserve(text.size());
  std::size_t copied = 0;
  while (sep != std::string_view::npos) {
    std::size_t begin = sep;
    while (begin > copied && is_scheme_char(text[begin - 1])) --begin;
    std::size_t end = sep + 3;
    while (end < text.size() && !ends_url(text[end])) ++end;
    out.append(text.substr(copied, begin - copied));
    out.append(redact_url(text.substr(begin, end - begin)));
    copied = end;
    sep = text.find("://", end);
  }
  out.append(text.substr(copied));
  return out;
}

bool needs_redaction(std::string_view text) {
  if (text.find("://") == std::string_view::npos) return false;
  return redact(text) != text;
}

}  // namespace aop::net

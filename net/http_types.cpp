#include "net/http_types.hpp"

#include <algorithm>

namespace aop::net {

std::string_view method_name(Method m) {
  switch (m) {
    case Method::get:
      return "GET";
    case Method::head:
      return "HEAD";
    case Method::post:
      return "POST";
    case Method::put:
      return "PUT";
    case Method::patch:
      return "PATCH";
    case Method::delete_:
      return "DELETE";
    case Method::options:
      return "OPTIONS";
  }
  return "GET";
}

std::optional<Method> parse_method(std::string_view name) {
  for (const Method m : {Method::get, Method::head, Method::post, Method::put, Method::patch,
                         Method::delete_, Method::options}) {
    if (method_name(m) == name) return m;
  }
  return std::nullopt;
}

bool is_idempotent(Method m) {
  return m != Method::post && m != Method::patch;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

void Headers::add(std::string name, std::string value) {
  fields_.emplace_back(std::move(name), std::move(value));
}

void Headers::set(std::string_view name, std::string value) {
  remove(name);
  fields_.emplace_back(std::string(name), std::move(value));
}

void Headers::remove(std::string_view name) {
  std::erase_if(fields_, [&](const Field& f) { return iequals(f.first, name); });
}

std::optional<std::string_view> Headers::get(std::string_view name) const {
  for (const auto& [k, v] : fields_) {
    if (iequals(k, name)) return std::string_view(v);
  }
  return std::nullopt;
}

}  // namespace aop::net

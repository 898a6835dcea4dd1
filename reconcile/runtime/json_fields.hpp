// Field access on Boost.JSON objects shared by the runtime's sources.
#pragma once

#include <string>
#include <string_view>

#include <boost/json/object.hpp>

namespace aop::runtime::detail {

// The string at `key`, or "" when absent or not a string.
inline std::string string_at(const boost::json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

// The object at `key`, made one (replacing any other value) when it is not.
inline boost::json::object& ensure_object(boost::json::object& o, std::string_view key) {
  boost::json::value& v = o[key];
  if (!v.is_object()) v = boost::json::object();
  return v.get_object();
}

}  // namespace aop::runtime::detail

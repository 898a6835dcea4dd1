#include "k8s/decode.hpp"

#include <limits>

namespace aop::k8s {

namespace json = boost::json;

std::string_view json_kind_name(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null:
      return "null";
    case json::kind::bool_:
      return "boolean";
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_:
      return "number";
    case json::kind::string:
      return "string";
    case json::kind::array:
      return "array";
    case json::kind::object:
      return "object";
  }
  return "value";
}

Decoder::Scope Decoder::field(std::string_view name) {
  const bool at_root = path_.size() == 1 && path_.front().empty();
  path_.push_back(at_root ? std::string(name) : "." + std::string(name));
  return Scope(this);
}

Decoder::Scope Decoder::index(std::size_t i) {
  path_.push_back("[" + std::to_string(i) + "]");
  return Scope(this);
}

std::string Decoder::path() const {
  std::string out;
  for (const auto& seg : path_) out += seg;
  return out;
}

void Decoder::error(std::string_view message) {
  const std::string p = path();
  errors_.push_back(p.empty() ? std::string(message) : p + ": " + std::string(message));
}

void Decoder::error_at(std::string_view key, std::string_view message) {
  const auto scope = field(key);
  error(message);
}

std::string Decoder::message() const {
  std::string out;
  for (const auto& e : errors_) {
    if (!out.empty()) out += "; ";
    out += e;
  }
  return out;
}

namespace {

// The value under `key`, or nullptr when absent or JSON null.
const json::value* present(const json::object& o, std::string_view key) {
  const auto it = o.find(key);
  if (it == o.end() || it->value().is_null()) return nullptr;
  return &it->value();
}

std::string expected(std::string_view what, const json::value& got) {
  return "expected " + std::string(what) + ", got " + std::string(json_kind_name(got));
}

}  // namespace

const json::value* Decoder::raw(const json::object& o, std::string_view key) {
  return present(o, key);
}

std::optional<std::string> Decoder::opt_string(const json::object& o, std::string_view key) {
  const json::value* v = present(o, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) {
    error_at(key, expected("string", *v));
    return std::nullopt;
  }
  return std::string(v->get_string());
}

std::string Decoder::string(const json::object& o, std::string_view key) {
  return opt_string(o, key).value_or(std::string());
}

std::optional<bool> Decoder::opt_bool(const json::object& o, std::string_view key) {
  const json::value* v = present(o, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_bool()) {
    error_at(key, expected("boolean", *v));
    return std::nullopt;
  }
  return v->get_bool();
}

bool Decoder::boolean(const json::object& o, std::string_view key) {
  return opt_bool(o, key).value_or(false);
}

std::optional<std::int64_t> Decoder::opt_int64(const json::object& o, std::string_view key) {
  const json::value* v = present(o, key);
  if (v == nullptr) return std::nullopt;
  if (v->is_int64()) return v->get_int64();
  if (v->is_uint64()) {
    if (v->get_uint64() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return static_cast<std::int64_t>(v->get_uint64());
    }
    error_at(key, "integer out of range");
    return std::nullopt;
  }
  if (v->is_double()) {
    const double d = v->get_double();
    if (d == static_cast<double>(static_cast<std::int64_t>(d))) return static_cast<std::int64_t>(d);
    error_at(key, "expected integer, got fractional number");
    return std::nullopt;
  }
  error_at(key, expected("integer", *v));
  return std::nullopt;
}

std::int64_t Decoder::int64(const json::object& o, std::string_view key) {
  return opt_int64(o, key).value_or(0);
}

std::optional<std::uint64_t> Decoder::opt_uint64(const json::object& o, std::string_view key) {
  const json::value* v = present(o, key);
  if (v == nullptr) return std::nullopt;
  if (v->is_uint64()) return v->get_uint64();
  if (v->is_int64()) {
    if (v->get_int64() >= 0) return static_cast<std::uint64_t>(v->get_int64());
    error_at(key, "expected non-negative integer");
    return std::nullopt;
  }
  if (v->is_double()) {
    const double d = v->get_double();
    if (d >= 0 && d == static_cast<double>(static_cast<std::uint64_t>(d))) {
      return static_cast<std::uint64_t>(d);
    }
    error_at(key, "expected non-negative integer");
    return std::nullopt;
  }
  error_at(key, expected("integer", *v));
  return std::nullopt;
}

std::optional<std::vector<std::string>> Decoder::opt_string_list(const json::object& o,
                                                                 std::string_view key) {
  const json::value* v = present(o, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_array()) {
    error_at(key, expected("array", *v));
    return std::nullopt;
  }
  std::vector<std::string> out;
  const auto scope = field(key);
  const auto& arr = v->get_array();
  out.reserve(arr.size());
  for (std::size_t i = 0; i < arr.size(); ++i) {
    if (!arr[i].is_string()) {
      const auto item = index(i);
      error(expected("string", arr[i]));
      continue;
    }
    out.emplace_back(arr[i].get_string());
  }
  return out;
}

std::vector<std::string> Decoder::string_list(const json::object& o, std::string_view key) {
  return opt_string_list(o, key).value_or(std::vector<std::string>{});
}

std::optional<std::map<std::string, std::string>> Decoder::opt_string_map(const json::object& o,
                                                                          std::string_view key) {
  const json::value* v = present(o, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_object()) {
    error_at(key, expected("object", *v));
    return std::nullopt;
  }
  std::map<std::string, std::string> out;
  const auto scope = field(key);
  for (const auto& kv : v->get_object()) {
    if (kv.value().is_null()) continue;
    if (!kv.value().is_string()) {
      error_at(kv.key(), expected("string", kv.value()));
      continue;
    }
    out.emplace(std::string(kv.key()), std::string(kv.value().get_string()));
  }
  return out;
}

std::map<std::string, std::string> Decoder::string_map(const json::object& o,
                                                       std::string_view key) {
  return opt_string_map(o, key).value_or(std::map<std::string, std::string>{});
}

const json::object* Decoder::object(const json::object& o, std::string_view key) {
  const json::value* v = present(o, key);
  if (v == nullptr) return nullptr;
  if (!v->is_object()) {
    error_at(key, expected("object", *v));
    return nullptr;
  }
  return &v->get_object();
}

const json::array* Decoder::array(const json::object& o, std::string_view key) {
  const json::value* v = present(o, key);
  if (v == nullptr) return nullptr;
  if (!v->is_array()) {
    error_at(key, expected("array", *v));
    return nullptr;
  }
  return &v->get_array();
}

}  // namespace aop::k8s

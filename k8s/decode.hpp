// Typed decoding of JSON into C++ structs, reporting the JSON path of every error:
//
//   Decoder d;
//   auto spec = d.object(root, "spec");          // path "spec"
//   d.list(*spec, "endpoints", [&](const json::value& e) { ... });
//   -> "spec.endpoints[2].port: expected string, got number"
//
// Missing and null fields decode to the default (or nullopt) without error, as in the
// Go API types; a present value of the wrong type is an error and decodes to the
// default, so decoding continues and reports every problem in one pass.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

namespace aop::k8s {

// "string", "number", "object", ... for messages.
std::string_view json_kind_name(const boost::json::value& v);

class Decoder {
 public:
  explicit Decoder(std::string root_path = {}) { path_.push_back(std::move(root_path)); }

  // Path scopes (RAII). Nested scopes append `.name` or `[i]`.
  class Scope {
   public:
    Scope(Scope&& other) noexcept : d_(other.d_) { other.d_ = nullptr; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    Scope& operator=(Scope&&) = delete;
    ~Scope() {
      if (d_ != nullptr) d_->path_.pop_back();
    }

   private:
    friend class Decoder;
    explicit Scope(Decoder* d) : d_(d) {}
    Decoder* d_;
  };
  Scope field(std::string_view name);
  Scope index(std::size_t i);

  // The current path, e.g. `spec.endpoints[2]`.
  std::string path() const;
  // Records "<path>: <message>" (or "<path>.<key>: <message>").
  void error(std::string_view message);
  void error_at(std::string_view key, std::string_view message);

  bool ok() const { return errors_.empty(); }
  const std::vector<std::string>& errors() const { return errors_; }
  // All errors joined with "; ".
  std::string message() const;

  // --- typed field access on an object -------------------------------------------
  std::string string(const boost::json::object& o, std::string_view key);
  std::optional<std::string> opt_string(const boost::json::object& o, std::string_view key);
  bool boolean(const boost::json::object& o, std::string_view key);
  std::optional<bool> opt_bool(const boost::json::object& o, std::string_view key);
  std::int64_t int64(const boost::json::object& o, std::string_view key);
  std::optional<std::int64_t> opt_int64(const boost::json::object& o, std::string_view key);
  std::optional<std::uint64_t> opt_uint64(const boost::json::object& o, std::string_view key);
  std::vector<std::string> string_list(const boost::json::object& o, std::string_view key);
  // nullopt when absent/null (nil), an empty vector for `[]`.
  std::optional<std::vector<std::string>> opt_string_list(const boost::json::object& o,
                                                          std::string_view key);
  std::map<std::string, std::string> string_map(const boost::json::object& o, std::string_view key);
  std::optional<std::map<std::string, std::string>> opt_string_map(const boost::json::object& o,
                                                                   std::string_view key);
  // nullptr when absent or null; an error (and nullptr) when not an object/array.
  const boost::json::object* object(const boost::json::object& o, std::string_view key);
  const boost::json::array* array(const boost::json::object& o, std::string_view key);
  // The raw value, nullptr when absent or null.
  const boost::json::value* raw(const boost::json::object& o, std::string_view key);

  // Decodes an optional sub-object with `fn(const object&) -> T` under `key`'s path.
  template <class Fn>
  auto opt(const boost::json::object& o, std::string_view key, Fn&& fn)
      -> std::optional<decltype(fn(std::declval<const boost::json::object&>()))> {
    const boost::json::object* sub = object(o, key);
    if (sub == nullptr) return std::nullopt;
    const auto scope = field(key);
    return fn(*sub);
  }

  // Decodes a list of objects with `fn(const object&) -> T`, each under `key[i]`.
  // Elements that are not objects are reported and skipped.
  template <class Fn>
  auto list(const boost::json::object& o, std::string_view key, Fn&& fn)
      -> std::vector<decltype(fn(std::declval<const boost::json::object&>()))> {
    std::vector<decltype(fn(std::declval<const boost::json::object&>()))> out;
    const boost::json::array* arr = array(o, key);
    if (arr == nullptr) return out;
    const auto scope = field(key);
    out.reserve(arr->size());
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const auto item_scope = index(i);
      const auto& item = (*arr)[i];
      if (!item.is_object()) {
        error(std::string("expected object, got ") + std::string(json_kind_name(item)));
        continue;
      }
      out.push_back(fn(item.get_object()));
    }
    return out;
  }

 private:
  std::vector<std::string> path_;  // segments: "spec", ".endpoints", "[2]"
  std::vector<std::string> errors_;
};

}  // namespace aop::k8s

#include "tools/kube-sim/schema.hpp"

#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include <re2/re2.h>
#include <boost/json.hpp>

#include "tools/kube-sim/cel.hpp"

namespace aop::sim {

namespace json = boost::json;

namespace {

// Compiled `pattern` regexes, by pattern text; nullptr for one RE2 rejects. Patterns are
// Go regular expressions, which RE2 implements (std::regex's ECMAScript dialect has no
// `(?i)` and differs elsewhere). Compiling costs tens of microseconds, and a custom
// resource with a few patterned fields is validated on every write: without the cache,
// patching ServiceMonitors was limited to ~150 writes/s (bench/scale). The set of
// patterns is bounded by the installed CRDs.
const RE2* compiled_pattern(std::string_view pattern) {
  static std::mutex mutex;  // owns cache (kube-sim's tests may validate from several threads)
  static std::unordered_map<std::string, std::unique_ptr<RE2>> cache;
  const std::lock_guard lock(mutex);
  auto [it, inserted] = cache.try_emplace(std::string(pattern));
  if (inserted) {
    RE2::Options options;
    options.set_log_errors(false);
    auto re = std::make_unique<RE2>(it->first, options);
    if (re->ok()) it->second = std::move(re);
  }
  return it->second.get();
}

// Parsed CEL rules (x-kubernetes-validations), by rule text; nullptr for rules outside
// the subset kube-sim evaluates (tools/kube-sim/cel.hpp), which are accepted.
std::shared_ptr<const cel::Program> compiled_rule(std::string_view rule) {
  static std::mutex mutex;  // owns cache
  static std::unordered_map<std::string, std::shared_ptr<const cel::Program>> cache;
  const std::lock_guard lock(mutex);
  auto [it, inserted] = cache.try_emplace(std::string(rule));
  if (inserted) it->second = cel::compile(rule);
  return it->second;
}

std::string_view type_name(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null:
      return "null";
    case json::kind::bool_:
      return "boolean";
    case json::kind::int64:
    case json::kind::uint64:
      return "integer";
    case json::kind::double_:
      return "number";
    case json::kind::string:
      return "string";
    case json::kind::array:
      return "array";
    case json::kind::object:
      return "object";
  }
  return "unknown";
}

// Go's %v-ish rendering used in "Invalid value: <repr>".
std::string value_repr(const json::value& v) {
  if (v.is_string()) return errors::quote(v.as_string());
  if (v.is_object() || v.is_array()) return errors::quote(json::serialize(v));
  return json::serialize(v);
}

bool flag(const json::object& s, std::string_view key) {
  const auto* v = s.if_contains(key);
  return v != nullptr && v->is_bool() && v->as_bool();
}

std::string join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::optional<double> number_of(const json::value& v) {
  if (v.is_int64()) return static_cast<double>(v.as_int64());
  if (v.is_uint64()) return static_cast<double>(v.as_uint64());
  if (v.is_double()) return v.as_double();
  return std::nullopt;
}

std::string number_repr(double d) {
  if (std::floor(d) == d && std::abs(d) < 1e15) return std::to_string(static_cast<long long>(d));
  return json::serialize(json::value(d));
}

class Walker {
 public:
  explicit Walker(SchemaOutcome& out) : out_(out) {}

  // Prunes, drops non-nullable nulls and defaults below `v`, then validates `v`.
  void visit(const json::object& s, json::value& v, const std::string& path, bool root) {
    normalise(s, v, path, root);
    validate(s, v, path);
  }

 private:
  void normalise(const json::object& s, json::value& v, const std::string& path, bool root) {
    if (v.is_object()) {
      auto& obj = v.as_object();
      const auto* props = s.if_contains("properties");
      const auto* addl = s.if_contains("additionalProperties");
      const bool preserve = flag(s, "x-kubernetes-preserve-unknown-fields");
      // Defaults for absent properties.
      if (props != nullptr && props->is_object()) {
        for (const auto& [k, ps] : props->as_object()) {
          if (!ps.is_object()) continue;
          const auto* def = ps.as_object().if_contains("default");
          if (def == nullptr) continue;
          auto it = obj.find(k);
          if (it == obj.end() || (it->value().is_null() && !flag(ps.as_object(), "nullable"))) {
            obj[k] = *def;
          }
        }
      }
      std::vector<std::string> remove;
      for (auto& [k, child] : obj) {
        const std::string_view key = k;
        if (root && (key == "apiVersion" || key == "kind" || key == "metadata")) continue;
        const json::object* cs = nullptr;
        if (props != nullptr && props->is_object()) {
          const auto* p = props->as_object().if_contains(key);
          if (p != nullptr && p->is_object()) cs = &p->as_object();
        }
        if (cs == nullptr && addl != nullptr) {
          if (addl->is_object()) {
            cs = &addl->as_object();
          } else if (addl->is_bool() && addl->as_bool()) {
            continue;
          }
        }
        if (cs == nullptr) {
          if (!preserve) {
            remove.emplace_back(key);
            out_.pruned_fields.push_back(join(path, key));
          }
          continue;
        }
        if (child.is_null() && !flag(*cs, "nullable")) {
          remove.emplace_back(key);
          continue;
        }
        normalise(*cs, child, join(path, key), false);
      }
      for (const auto& k : remove) obj.erase(k);
    } else if (v.is_array()) {
      const auto* items = s.if_contains("items");
      if (items != nullptr && items->is_object()) {
        auto& arr = v.as_array();
        for (std::size_t i = 0; i < arr.size(); ++i) {
          normalise(items->as_object(), arr[i], path + "[" + std::to_string(i) + "]", false);
        }
      }
    }
  }

  void type_error(const std::string& path, const json::value& v, std::string_view want) {
    const std::string shown = path.empty() ? "body" : path + " in body";
    out_.errors.push_back(errors::field_invalid(
        path, errors::quote(type_name(v)),
        shown + " must be of type " + std::string(want) + ": " + errors::quote(type_name(v))));
  }

  void validate(const json::object& s, const json::value& v, const std::string& path) {
    const std::string in_body = path.empty() ? "body" : path + " in body";
    if (v.is_null()) {
      if (flag(s, "nullable")) return;
    }
    const auto* typev = s.if_contains("type");
    const std::string_view type =
        typev != nullptr && typev->is_string() ? std::string_view(typev->as_string()) : "";
    const bool int_or_string = flag(s, "x-kubernetes-int-or-string");
    if (int_or_string) {
      if (!v.is_string() && !v.is_int64() && !v.is_uint64()) {
        out_.errors.push_back(errors::field_invalid(
            path, errors::quote(type_name(v)),
            in_body + " must be of type integer,string: " + errors::quote(type_name(v))));
        return;
      }
    } else if (!type.empty()) {
      bool ok = false;
      if (type == "object") {
        ok = v.is_object();
      } else if (type == "array") {
        ok = v.is_array();
      } else if (type == "string") {
        ok = v.is_string();
      } else if (type == "integer") {
        ok = v.is_int64() || v.is_uint64();
      } else if (type == "number") {
        ok = v.is_int64() || v.is_uint64() || v.is_double();
      } else if (type == "boolean") {
        ok = v.is_bool();
      }
      if (!ok) {
        type_error(path, v, type);
        return;
      }
    }
    if (const auto* en = s.if_contains("enum"); en != nullptr && en->is_array()) {
      bool found = false;
      for (const auto& e : en->as_array()) {
        if (e == v) {
          found = true;
          break;
        }
      }
      if (!found) {
        std::vector<std::string> reprs;
        for (const auto& e : en->as_array()) reprs.push_back(value_repr(e));
        out_.errors.push_back(errors::field_not_supported(path, value_repr(v), reprs));
      }
    }
    if (auto n = number_of(v)) {
      if (const auto* mn = s.if_contains("minimum")) {
        if (auto m = number_of(*mn)) {
          const bool excl = flag(s, "exclusiveMinimum");
          if (excl ? *n <= *m : *n < *m) {
            out_.errors.push_back(errors::field_invalid(path, value_repr(v),
                                                        in_body + " should be greater than " +
                                                            (excl ? "" : "or equal to ") +
                                                            number_repr(*m)));
          }
        }
      }
      if (const auto* mx = s.if_contains("maximum")) {
        if (auto m = number_of(*mx)) {
          const bool excl = flag(s, "exclusiveMaximum");
          if (excl ? *n >= *m : *n > *m) {
            out_.errors.push_back(errors::field_invalid(path, value_repr(v),
                                                        in_body + " should be less than " +
                                                            (excl ? "" : "or equal to ") +
                                                            number_repr(*m)));
          }
        }
      }
    }
    if (v.is_string()) {
      const auto& str = v.as_string();
      if (const auto* ml = s.if_contains("maxLength"); ml != nullptr && ml->is_number()) {
        const auto m = ml->to_number<std::int64_t>();
        if (static_cast<std::int64_t>(str.size()) > m) {
          out_.errors.push_back(
              errors::field_too_long(path, "may not be more than " + std::to_string(m) + " bytes"));
        }
      }
      if (const auto* ml = s.if_contains("minLength"); ml != nullptr && ml->is_number()) {
        const auto m = ml->to_number<std::int64_t>();
        if (static_cast<std::int64_t>(str.size()) < m) {
          out_.errors.push_back(errors::field_invalid(
              path, value_repr(v),
              in_body + " should be at least " + std::to_string(m) + " chars long"));
        }
      }
      if (const auto* pat = s.if_contains("pattern"); pat != nullptr && pat->is_string()) {
        // An unsupported pattern (nullptr) is accepted, as the API server would have
        // rejected the CRD instead.
        if (const RE2* re = compiled_pattern(pat->as_string());
            re != nullptr && !RE2::PartialMatch(std::string(str), *re)) {
          out_.errors.push_back(errors::field_invalid(
              path, value_repr(v),
              in_body + " should match '" + std::string(pat->as_string()) + "'"));
        }
      }
    }
    if (v.is_array()) {
      const auto& arr = v.as_array();
      if (const auto* m = s.if_contains("minItems"); m != nullptr && m->is_number()) {
        const auto n = m->to_number<std::int64_t>();
        if (static_cast<std::int64_t>(arr.size()) < n) {
          out_.errors.push_back(errors::field_invalid(
              path, std::to_string(arr.size()),
              in_body + " should have at least " + std::to_string(n) + " items"));
        }
      }
      if (const auto* m = s.if_contains("maxItems"); m != nullptr && m->is_number()) {
        const auto n = m->to_number<std::int64_t>();
        if (static_cast<std::int64_t>(arr.size()) > n) {
          out_.errors.push_back(StatusCause{"FieldValueTooMany",
                                            "Too many: " + std::to_string(arr.size()) +
                                                ": must have at most " + std::to_string(n) +
                                                " items",
                                            path});
        }
      }
      if (const auto* items = s.if_contains("items"); items != nullptr && items->is_object()) {
        for (std::size_t i = 0; i < arr.size(); ++i) {
          validate(items->as_object(), arr[i], path + "[" + std::to_string(i) + "]");
        }
      }
    }
    if (v.is_object()) {
      const auto& obj = v.as_object();
      if (const auto* req = s.if_contains("required"); req != nullptr && req->is_array()) {
        for (const auto& r : req->as_array()) {
          if (!r.is_string()) continue;
          if (!obj.contains(r.as_string())) {
            out_.errors.push_back(errors::field_required(join(path, r.as_string())));
          }
        }
      }
      if (const auto* m = s.if_contains("maxProperties"); m != nullptr && m->is_number()) {
        const auto n = m->to_number<std::int64_t>();
        if (static_cast<std::int64_t>(obj.size()) > n) {
          out_.errors.push_back(StatusCause{"FieldValueTooMany",
                                            "Too many: " + std::to_string(obj.size()) +
                                                ": must have at most " + std::to_string(n) +
                                                " items",
                                            path});
        }
      }
      const auto* props = s.if_contains("properties");
      const auto* addl = s.if_contains("additionalProperties");
      for (const auto& [k, child] : obj) {
        const bool root = path.empty();
        if (root && (k == "apiVersion" || k == "kind" || k == "metadata")) continue;
        const json::object* cs = nullptr;
        if (props != nullptr && props->is_object()) {
          const auto* p = props->as_object().if_contains(k);
          if (p != nullptr && p->is_object()) cs = &p->as_object();
        }
        if (cs == nullptr && addl != nullptr && addl->is_object()) cs = &addl->as_object();
        if (cs != nullptr) validate(*cs, child, join(path, k));
      }
    }
    // Cross-field rules, also when a member has a schema error (as the API server does;
    // a value of the wrong type returned above).
    if (const auto* rules = s.if_contains("x-kubernetes-validations");
        rules != nullptr && rules->is_array()) {
      for (const auto& r : rules->as_array()) {
        if (!r.is_object()) continue;
        const auto* rule = r.as_object().if_contains("rule");
        if (rule == nullptr || !rule->is_string()) continue;
        const auto program = compiled_rule(rule->as_string());
        if (!program) continue;  // outside the subset: not evaluated
        const auto outcome = cel::evaluate(*program, v);
        if (outcome.value && !outcome.error) continue;
        const auto* message = r.as_object().if_contains("message");
        std::string text = outcome.error ? "evaluating rule: " + *outcome.error
                                         : (message != nullptr && message->is_string()
                                                ? std::string(message->as_string())
                                                : "failed rule: " + std::string(rule->as_string()));
        out_.errors.push_back(errors::field_invalid(path, value_repr(v), text));
      }
    }
  }

  SchemaOutcome& out_;
};

}  // namespace

SchemaOutcome apply_schema(const json::value& schema, json::value& object) {
  SchemaOutcome out;
  if (!schema.is_object()) return out;
  Walker w(out);
  w.visit(schema.as_object(), object, "", true);
  return out;
}

std::vector<StatusCause> check_structural_schema(const json::value& schema,
                                                 const std::string& field_path) {
  std::vector<StatusCause> out;
  if (!schema.is_object()) {
    out.push_back(errors::field_required(field_path, "a schema object is required"));
    return out;
  }
  const auto& s = schema.as_object();
  const auto* t = s.if_contains("type");
  if (t != nullptr) {
    static const std::vector<std::string> kTypes = {"object",  "array",  "string",
                                                    "integer", "number", "boolean"};
    if (!t->is_string() ||
        std::find(kTypes.begin(), kTypes.end(), std::string(t->as_string())) == kTypes.end()) {
      std::vector<std::string> reprs;
      reprs.reserve(kTypes.size());
      for (const auto& k : kTypes) reprs.push_back(errors::quote(k));
      out.push_back(errors::field_not_supported(field_path + ".type", value_repr(*t), reprs));
    }
  }
  if (const auto* p = s.if_contains("properties"); p != nullptr && p->is_object()) {
    if (t == nullptr || !t->is_string() || t->as_string() != "object") {
      if (!flag(s, "x-kubernetes-preserve-unknown-fields")) {
        out.push_back(errors::field_required(field_path + ".type",
                                             "must not be empty for specified object fields"));
      }
    }
    for (const auto& [k, child] : p->as_object()) {
      auto sub = check_structural_schema(child, field_path + ".properties[" + std::string(k) + "]");
      out.insert(out.end(), sub.begin(), sub.end());
    }
  }
  if (const auto* i = s.if_contains("items"); i != nullptr && i->is_object()) {
    auto sub = check_structural_schema(*i, field_path + ".items");
    out.insert(out.end(), sub.begin(), sub.end());
  }
  return out;
}

}  // namespace aop::sim

#include "tools/kube-sim/patch.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

namespace aop::sim {

namespace json = boost::json;

// ---------------------------------------------------------------------------------------
// JSON merge patch

namespace {

json::value merge_patch_value(json::value target, const json::value& patch) {
  if (!patch.is_object()) return patch;
  json::object result = target.is_object() ? std::move(target.as_object()) : json::object();
  for (const auto& [key, value] : patch.as_object()) {
    if (value.is_null()) {
      result.erase(key);
      continue;
    }
    auto it = result.find(key);
    if (it == result.end()) {
      result[key] = merge_patch_value(json::value(), value);
    } else {
      it->value() = merge_patch_value(std::move(it->value()), value);
    }
  }
  return result;
}

}  // namespace

Result<json::value> apply_merge_patch(json::value target, const json::value& patch) {
  return merge_patch_value(std::move(target), patch);
}

json::value create_merge_patch(const json::value& from, const json::value& to) {
  if (!from.is_object() || !to.is_object()) return to;
  json::object patch;
  for (const auto& [k, v] : from.as_object()) {
    if (!to.as_object().contains(k)) patch[k] = nullptr;
  }
  for (const auto& [k, v] : to.as_object()) {
    auto it = from.as_object().find(k);
    if (it == from.as_object().end()) {
      patch[k] = v;
    } else if (it->value() != v) {
      if (it->value().is_object() && v.is_object()) {
        patch[k] = create_merge_patch(it->value(), v);
      } else {
        patch[k] = v;
      }
    }
  }
  return patch;
}

// ---------------------------------------------------------------------------------------
// JSON patch

namespace {

// Splits a JSON pointer into unescaped reference tokens.
Result<std::vector<std::string>> parse_pointer(std::string_view p) {
  std::vector<std::string> out;
  if (p.empty()) return out;
  if (p.front() != '/') return make_error("JSON pointer must start with '/': " + std::string(p));
  std::string cur;
  for (std::size_t i = 1; i <= p.size(); ++i) {
    if (i == p.size() || p[i] == '/') {
      out.push_back(std::move(cur));
      cur.clear();
      continue;
    }
    if (p[i] == '~') {
      if (i + 1 >= p.size() || (p[i + 1] != '0' && p[i + 1] != '1')) {
        return make_error("invalid escape in JSON pointer: " + std::string(p));
      }
      cur += p[i + 1] == '0' ? '~' : '/';
      ++i;
      continue;
    }
    cur += p[i];
  }
  return out;
}

Result<std::size_t> parse_index(const std::string& tok, std::size_t size, bool allow_end) {
  if (tok == "-" && allow_end) return size;
  if (tok.empty() || (tok.size() > 1 && tok[0] == '0') ||
      !std::all_of(tok.begin(), tok.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return make_error("invalid array index: " + tok);
  }
  std::size_t idx = 0;
  try {
    idx = std::stoul(tok);
  } catch (const std::exception&) {
    return make_error("invalid array index: " + tok);
  }
  if (idx > size || (!allow_end && idx == size)) {
    return make_error("array index out of bounds: " + tok);
  }
  return idx;
}

// Walks to the parent container of the last token.
Result<json::value*> walk_parent(json::value& doc, const std::vector<std::string>& toks,
                                 std::string_view path) {
  json::value* cur = &doc;
  for (std::size_t i = 0; i + 1 < toks.size(); ++i) {
    if (cur->is_object()) {
      auto it = cur->as_object().find(toks[i]);
      if (it == cur->as_object().end()) {
        return make_error("doc is missing path: " + std::string(path));
      }
      cur = &it->value();
    } else if (cur->is_array()) {
      auto idx = parse_index(toks[i], cur->as_array().size(), false);
      if (!idx) return make_error("doc is missing path: " + std::string(path));
      cur = &cur->as_array()[*idx];
    } else {
      return make_error("doc is missing path: " + std::string(path));
    }
  }
  return cur;
}

Result<json::value> get_at(json::value& doc, std::string_view path) {
  auto toks = parse_pointer(path);
  if (!toks) return toks.error();
  if (toks->empty()) return doc;
  auto parent = walk_parent(doc, *toks, path);
  if (!parent) return parent.error();
  json::value* p = *parent;
  if (p->is_object()) {
    auto it = p->as_object().find(toks->back());
    if (it == p->as_object().end()) return make_error("doc is missing key: " + std::string(path));
    return it->value();
  }
  if (p->is_array()) {
    auto idx = parse_index(toks->back(), p->as_array().size(), false);
    if (!idx) return idx.error();
    return p->as_array()[*idx];
  }
  return make_error("doc is missing path: " + std::string(path));
}

Result<void> add_at(json::value& doc, std::string_view path, json::value v) {
  auto toks = parse_pointer(path);
  if (!toks) return toks.error();
  if (toks->empty()) {
    doc = std::move(v);
    return {};
  }
  auto parent = walk_parent(doc, *toks, path);
  if (!parent) return parent.error();
  json::value* p = *parent;
  if (p->is_object()) {
    p->as_object()[toks->back()] = std::move(v);
    return {};
  }
  if (p->is_array()) {
    auto idx = parse_index(toks->back(), p->as_array().size(), true);
    if (!idx) return idx.error();
    auto& arr = p->as_array();
    arr.insert(arr.begin() + static_cast<std::ptrdiff_t>(*idx), std::move(v));
    return {};
  }
  return make_error("doc is missing path: " + std::string(path));
}

Result<json::value> remove_at(json::value& doc, std::string_view path) {
  auto toks = parse_pointer(path);
  if (!toks) return toks.error();
  if (toks->empty()) return make_error("cannot remove the document root");
  auto parent = walk_parent(doc, *toks, path);
  if (!parent) return parent.error();
  json::value* p = *parent;
  if (p->is_object()) {
    auto it = p->as_object().find(toks->back());
    if (it == p->as_object().end()) {
      return make_error("remove operation does not apply: doc is missing path: " +
                        std::string(path));
    }
    json::value old = std::move(it->value());
    p->as_object().erase(it);
    return old;
  }
  if (p->is_array()) {
    auto idx = parse_index(toks->back(), p->as_array().size(), false);
    if (!idx) {
      return make_error("remove operation does not apply: doc is missing path: " +
                        std::string(path));
    }
    auto& arr = p->as_array();
    json::value old = std::move(arr[*idx]);
    arr.erase(arr.begin() + static_cast<std::ptrdiff_t>(*idx));
    return old;
  }
  return make_error("remove operation does not apply: doc is missing path: " + std::string(path));
}

}  // namespace

Result<json::value> apply_json_patch(json::value target, const json::value& patch) {
  if (!patch.is_array()) return make_error("a JSON patch must be an array of operations");
  for (const auto& opv : patch.as_array()) {
    if (!opv.is_object()) return make_error("each JSON patch operation must be an object");
    const auto& op = opv.as_object();
    const auto* opname = op.if_contains("op");
    const auto* pathv = op.if_contains("path");
    if (opname == nullptr || !opname->is_string()) return make_error("operation has no \"op\"");
    if (pathv == nullptr || !pathv->is_string()) {
      return make_error("operation has no \"path\"");
    }
    const std::string_view name = opname->as_string();
    const std::string_view path = pathv->as_string();
    const json::value* value = op.if_contains("value");
    if (name == "add") {
      if (value == nullptr) return make_error("add operation has no \"value\"");
      auto r = add_at(target, path, *value);
      if (!r) return make_error("add operation does not apply: " + r.error().message);
    } else if (name == "remove") {
      auto r = remove_at(target, path);
      if (!r) return r.error();
    } else if (name == "replace") {
      if (value == nullptr) return make_error("replace operation has no \"value\"");
      auto old = get_at(target, path);
      if (!old) {
        return make_error("replace operation does not apply: doc is missing key: " +
                          std::string(path) + ": missing value");
      }
      auto toks = parse_pointer(path);
      if (toks->empty()) {
        target = *value;
      } else {
        (void)remove_at(target, path);
        auto r = add_at(target, path, *value);
        if (!r) return r.error();
      }
    } else if (name == "move" || name == "copy") {
      const auto* fromv = op.if_contains("from");
      if (fromv == nullptr || !fromv->is_string()) {
        return make_error(std::string(name) + " operation has no \"from\"");
      }
      const std::string_view from = fromv->as_string();
      Result<json::value> v = name == "move" ? remove_at(target, from) : get_at(target, from);
      if (!v)
        return make_error(std::string(name) + " operation does not apply: " + v.error().message);
      auto r = add_at(target, path, std::move(*v));
      if (!r)
        return make_error(std::string(name) + " operation does not apply: " + r.error().message);
    } else if (name == "test") {
      if (value == nullptr) return make_error("test operation has no \"value\"");
      auto v = get_at(target, path);
      if (!v || *v != *value) {
        return make_error("testing value " + std::string(path) + " failed: test failed");
      }
    } else {
      return make_error("Unexpected kind: " + std::string(name));
    }
  }
  return target;
}

// ---------------------------------------------------------------------------------------
// Strategic merge patch

namespace {

enum class ListStrategy { replace, merge_by_key, merge_primitives };

struct ListRule {
  ListStrategy strategy = ListStrategy::replace;
  std::string_view key;
};

// The patch strategy of a list field, from the field name and its parent field names
// (the `patchStrategy:"merge" patchMergeKey:"..."` tags of the core/v1, apps/v1 and
// meta/v1 Go types).
ListRule list_rule(const std::vector<std::string>& path, std::string_view field) {
  const std::string_view parent = path.empty() ? std::string_view() : path.back();
  if (field == "containers" || field == "initContainers" || field == "ephemeralContainers" ||
      field == "volumes" || field == "imagePullSecrets" || field == "env" ||
      field == "resourceClaims" || field == "schedulingGates" || field == "secrets") {
    return {ListStrategy::merge_by_key, "name"};
  }
  if (field == "ports") {
    if (parent == "containers" || parent == "initContainers" || parent == "ephemeralContainers") {
      return {ListStrategy::merge_by_key, "containerPort"};
    }
    return {ListStrategy::merge_by_key, "port"};
  }
  if (field == "volumeMounts") return {ListStrategy::merge_by_key, "mountPath"};
  if (field == "volumeDevices") return {ListStrategy::merge_by_key, "devicePath"};
  if (field == "hostAliases" || field == "podIPs" || field == "hostIPs") {
    return {ListStrategy::merge_by_key, "ip"};
  }
  if (field == "ownerReferences") return {ListStrategy::merge_by_key, "uid"};
  if (field == "conditions" || field == "addresses") return {ListStrategy::merge_by_key, "type"};
  if (field == "topologySpreadConstraints") {
    return {ListStrategy::merge_by_key, "topologyKey"};
  }
  if (field == "finalizers" && parent == "metadata") return {ListStrategy::merge_primitives, {}};
  return {};
}

bool key_equal(const json::value& a, const json::value& b) {
  return a == b;
}

Result<json::value> smp_object(json::value original, const json::object& patch,
                               std::vector<std::string>& path);

Result<json::value> smp_list(json::value original, const json::array& patch,
                             std::vector<std::string>& path, std::string_view field) {
  const ListRule rule = list_rule(path, field);
  if (rule.strategy == ListStrategy::replace || !original.is_array()) {
    // Still strip directives from items of a replaced list.
    json::array out;
    for (const auto& item : patch) {
      if (item.is_object() && item.as_object().contains("$patch")) {
        json::object o = item.as_object();
        o.erase("$patch");
        if (o.empty()) continue;
        out.push_back(std::move(o));
      } else {
        out.push_back(item);
      }
    }
    return json::value(std::move(out));
  }
  json::array result = std::move(original.as_array());
  if (rule.strategy == ListStrategy::merge_primitives) {
    for (const auto& item : patch) {
      if (std::find(result.begin(), result.end(), item) == result.end()) result.push_back(item);
    }
    return json::value(std::move(result));
  }
  // merge by key; `{"$patch": "replace"}` anywhere in the patch list replaces the list.
  for (const auto& item : patch) {
    if (item.is_object()) {
      const auto* d = item.as_object().if_contains("$patch");
      if (d != nullptr && d->is_string() && d->as_string() == "replace") {
        json::array out;
        for (const auto& other : patch) {
          if (&other == &item) continue;
          out.push_back(other);
        }
        return json::value(std::move(out));
      }
    }
  }
  path.emplace_back(field);
  for (const auto& item : patch) {
    if (!item.is_object()) {
      path.pop_back();
      return make_error("strategic merge patch: items of " + std::string(field) +
                        " must be objects with merge key " + std::string(rule.key));
    }
    const auto& io = item.as_object();
    const auto* keyv = io.if_contains(rule.key);
    if (keyv == nullptr) {
      path.pop_back();
      return make_error("map: " + json::serialize(io) +
                        " does not contain declared merge key: " + std::string(rule.key));
    }
    auto it = std::find_if(result.begin(), result.end(), [&](const json::value& o) {
      return o.is_object() && o.as_object().contains(rule.key) &&
             key_equal(o.as_object().at(rule.key), *keyv);
    });
    const auto* directive = io.if_contains("$patch");
    if (directive != nullptr && directive->is_string() && directive->as_string() == "delete") {
      if (it != result.end()) result.erase(it);
      continue;
    }
    if (it == result.end()) {
      auto merged = smp_object(json::object(), io, path);
      if (!merged) {
        path.pop_back();
        return merged.error();
      }
      result.push_back(std::move(*merged));
    } else {
      auto merged = smp_object(std::move(*it), io, path);
      if (!merged) {
        path.pop_back();
        return merged.error();
      }
      *it = std::move(*merged);
    }
  }
  path.pop_back();
  return json::value(std::move(result));
}

// Reorders `list` so the items named in `order` come first, in that order.
void apply_element_order(json::array& list, const json::array& order, std::string_view key) {
  json::array out;
  std::vector<bool> used(list.size(), false);
  for (const auto& o : order) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (used[i]) continue;
      bool match = false;
      if (key.empty()) {
        match = list[i] == o;
      } else if (o.is_object() && list[i].is_object()) {
        const auto* a = o.as_object().if_contains(key);
        const auto* b = list[i].as_object().if_contains(key);
        match = a != nullptr && b != nullptr && *a == *b;
      }
      if (match) {
        out.push_back(list[i]);
        used[i] = true;
        break;
      }
    }
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!used[i]) out.push_back(list[i]);
  }
  list = std::move(out);
}

Result<json::value> smp_object(json::value original, const json::object& patch,
                               std::vector<std::string>& path) {
  if (const auto* d = patch.if_contains("$patch"); d != nullptr && d->is_string()) {
    if (d->as_string() == "replace") {
      json::object out = patch;
      out.erase("$patch");
      return json::value(std::move(out));
    }
    if (d->as_string() == "delete") return json::value(nullptr);
  }
  json::object result = original.is_object() ? std::move(original.as_object()) : json::object();
  const json::value* retain = nullptr;
  std::vector<std::pair<std::string, const json::value*>> orders;
  for (const auto& [k, v] : patch) {
    const std::string_view key = k;
    if (key == "$patch") continue;
    if (key == "$retainKeys") {
      retain = &v;
      continue;
    }
    if (key.starts_with("$setElementOrder/")) {
      orders.emplace_back(std::string(key.substr(17)), &v);
      continue;
    }
    if (key.starts_with("$deleteFromPrimitiveList/")) {
      const std::string field(key.substr(25));
      auto it = result.find(field);
      if (it != result.end() && it->value().is_array() && v.is_array()) {
        auto& arr = it->value().as_array();
        json::array kept;
        for (auto& e : arr) {
          if (std::find(v.as_array().begin(), v.as_array().end(), e) == v.as_array().end()) {
            kept.push_back(std::move(e));
          }
        }
        arr = std::move(kept);
      }
      continue;
    }
    if (v.is_null()) {
      result.erase(key);
      continue;
    }
    auto it = result.find(key);
    if (v.is_object()) {
      path.emplace_back(key);
      auto merged = smp_object(it == result.end() ? json::value() : std::move(it->value()),
                               v.as_object(), path);
      path.pop_back();
      if (!merged) return merged.error();
      if (merged->is_null()) {
        result.erase(key);
      } else {
        result[key] = std::move(*merged);
      }
    } else if (v.is_array()) {
      auto merged = smp_list(it == result.end() ? json::value() : std::move(it->value()),
                             v.as_array(), path, key);
      if (!merged) return merged.error();
      result[key] = std::move(*merged);
    } else {
      result[key] = v;
    }
  }
  for (const auto& [field, order] : orders) {
    auto it = result.find(field);
    if (it == result.end() || !it->value().is_array() || !order->is_array()) continue;
    const ListRule rule = list_rule(path, field);
    if (rule.strategy == ListStrategy::replace) continue;
    apply_element_order(it->value().as_array(), order->as_array(), rule.key);
  }
  if (retain != nullptr && retain->is_array()) {
    json::object kept;
    for (auto& kv : result) {
      const std::string_view key = kv.key();
      const bool keep =
          std::any_of(retain->as_array().begin(), retain->as_array().end(),
                      [&](const json::value& r) { return r.is_string() && r.as_string() == key; });
      if (keep) kept[key] = std::move(kv.value());
    }
    result = std::move(kept);
  }
  return json::value(std::move(result));
}

}  // namespace

Result<json::value> apply_strategic_merge_patch(json::value target, const json::value& patch) {
  if (!patch.is_object()) return make_error("a strategic merge patch must be a JSON object");
  std::vector<std::string> path;
  auto r = smp_object(std::move(target), patch.as_object(), path);
  if (!r) return r.error();
  if (r->is_null()) return make_error("a strategic merge patch cannot delete the whole object");
  return r;
}

}  // namespace aop::sim

// Kubernetes strategic-merge-patch for core/v1 Container, as upstream applies
// `spec.containers` onto the generated containers.
//
// Rules of apimachinery's strategicpatch for this type: scalars and lists without a patch
// strategy are replaced; maps merge recursively; the lists `env` (merge key `name`),
// `volumeMounts` (`mountPath`), `ports` (`containerPort`), `volumeDevices` (`devicePath`)
// and `resizePolicy` (`resourceName`) merge element-wise. The order of a merged list
// follows apimachinery's normalizeElementOrder: patch elements keep patch order,
// original-only elements keep original order, and the two are interleaved by original
// position, which puts patch elements that are new ahead of remaining original ones.
#include <algorithm>
#include <map>

#include "reconcile/agent/objects.hpp"

namespace aop::agent {
namespace {

using boost::json::array;
using boost::json::object;
using boost::json::value;

const std::map<std::string, std::string, std::less<>>& container_merge_keys() {
  static const std::map<std::string, std::string, std::less<>> keys{
      {"env", "name"},
      {"volumeMounts", "mountPath"},
      {"ports", "containerPort"},
      {"volumeDevices", "devicePath"},
      {"resizePolicy", "resourceName"},
  };
  return keys;
}

// Go's encoding/json would never produce null for the user container's fields; a null
// here means "unset".
value strip_nulls(const value& v) {
  if (v.is_object()) {
    object out;
    for (const auto& kv : v.get_object()) {
      if (!kv.value().is_null()) out[kv.key()] = strip_nulls(kv.value());
    }
    return out;
  }
  if (v.is_array()) {
    array out;
    for (const auto& e : v.get_array()) {
      if (!e.is_null()) out.push_back(strip_nulls(e));
    }
    return out;
  }
  return v;
}

object merge_maps(object original, const object& patch);

std::ptrdiff_t index_of(const array& list, std::string_view key, const value& id) {
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_object()) continue;
    const auto* v = list[i].get_object().if_contains(key);
    if (v != nullptr && *v == id) return static_cast<std::ptrdiff_t>(i);
  }
  return -1;
}

const value* key_of(const value& item, std::string_view key) {
  return item.is_object() ? item.get_object().if_contains(key) : nullptr;
}

array merge_list(const array& original, const array& patch, std::string_view key) {
  // 1. Merge patch elements into matching originals; append the rest.
  array merged = original;
  for (const auto& p : patch) {
    const value* id = key_of(p, key);
    const std::ptrdiff_t at = id != nullptr ? index_of(merged, key, *id) : -1;
    if (at >= 0 && merged[at].is_object() && p.is_object()) {
      merged[at] = merge_maps(merged[at].get_object(), p.get_object());
    } else {
      merged.push_back(p);
    }
  }
  // 2. Partition: elements present in the patch (in patch order) vs original-only.
  array patch_items;
  for (const auto& p : patch) {
    const value* id = key_of(p, key);
    const std::ptrdiff_t at = id != nullptr ? index_of(merged, key, *id) : -1;
    patch_items.push_back(at >= 0 ? merged[at] : p);
  }
  array server_only;
  for (const auto& m : merged) {
    const value* id = key_of(m, key);
    if (id == nullptr || index_of(patch, key, *id) < 0) server_only.push_back(m);
  }
  // 3. mergeSortedSlice(server_only, patch_items) ordered by position in the original.
  auto pos = [&](const value& item) -> std::ptrdiff_t {
    const value* id = key_of(item, key);
    return id != nullptr ? index_of(original, key, *id) : -1;
  };
  array out;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < server_only.size() || j < patch_items.size()) {
    if (j >= patch_items.size()) {
      out.push_back(server_only[i++]);
    } else if (i >= server_only.size()) {
      out.push_back(patch_items[j++]);
    } else {
      const auto li = pos(server_only[i]);
      const auto ri = pos(patch_items[j]);
      if (li >= 0 && ri >= 0 && li < ri) {
        out.push_back(server_only[i++]);
      } else {
        out.push_back(patch_items[j++]);
      }
    }
  }
  return out;
}

object merge_maps(object original, const object& patch) {
  for (const auto& kv : patch) {
    auto* cur = original.if_contains(kv.key());
    if (cur == nullptr) {
      original[kv.key()] = kv.value();
    } else if (cur->is_object() && kv.value().is_object()) {
      *cur = merge_maps(cur->get_object(), kv.value().get_object());
    } else {
      *cur = kv.value();
    }
  }
  return original;
}

}  // namespace

object strategic_merge_container(const object& original, const object& patch_in) {
  const value patch_v = strip_nulls(patch_in);
  const object& patch = patch_v.get_object();
  object out = original;
  for (const auto& kv : patch) {
    auto* cur = out.if_contains(kv.key());
    const auto& keys = container_merge_keys();
    const auto mk = keys.find(std::string_view(kv.key()));
    if (cur == nullptr) {
      out[kv.key()] = kv.value();
    } else if (mk != keys.end() && cur->is_array() && kv.value().is_array()) {
      *cur = merge_list(cur->get_array(), kv.value().get_array(), mk->second);
    } else if (cur->is_object() && kv.value().is_object()) {
      *cur = merge_maps(cur->get_object(), kv.value().get_object());
    } else {
      *cur = kv.value();
    }
  }
  return out;
}

array merge_containers(array generated, const array& user) {
  auto name_of = [](const value& c) -> std::string_view {
    if (!c.is_object()) return {};
    const auto* n = c.get_object().if_contains("name");
    return (n != nullptr && n->is_string()) ? std::string_view(n->get_string())
                                            : std::string_view();
  };
  std::vector<bool> used(user.size(), false);
  for (auto& g : generated) {
    // The last user container of a name wins, like upstream's map by name.
    for (std::size_t k = user.size(); k-- > 0;) {
      if (user[k].is_object() && name_of(user[k]) == name_of(g)) {
        g = strategic_merge_container(g.get_object(), user[k].get_object());
        for (std::size_t m = 0; m < user.size(); ++m) {
          if (name_of(user[m]) == name_of(g)) used[m] = true;
        }
        break;
      }
    }
  }
  for (std::size_t k = 0; k < user.size(); ++k) {
    if (!used[k] && user[k].is_object()) generated.push_back(strip_nulls(user[k]));
  }
  return generated;
}

}  // namespace aop::agent

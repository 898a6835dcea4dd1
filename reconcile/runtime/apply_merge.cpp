// The engine's pure parts: comparing desired with live objects and building update
// bodies under the merge and carry-over rules (apply.hpp).
#include <algorithm>

#include <boost/json.hpp>

#include "reconcile/runtime/apply.hpp"
#include "reconcile/runtime/json_fields.hpp"

namespace aop::runtime {

namespace json = boost::json;

namespace {

GroupKind service_kind() {
  return {"", "Service"};
}

GroupKind deployment_kind() {
  return {"apps", "Deployment"};
}

GroupKind statefulset_kind() {
  return {"apps", "StatefulSet"};
}

GroupKind daemonset_kind() {
  return {"apps", "DaemonSet"};
}

bool numbers_equal(const json::value& a, const json::value& b) {
  if (a.is_double() || b.is_double()) {
    const auto da = a.to_number<double>();
    const auto db = b.to_number<double>();
    return da == db;
  }
  if (a.is_int64() && b.is_int64()) return a.get_int64() == b.get_int64();
  if (a.is_uint64() && b.is_uint64()) return a.get_uint64() == b.get_uint64();
  const json::value& i = a.is_int64() ? a : b;
  const json::value& u = a.is_int64() ? b : a;
  return i.get_int64() >= 0 && static_cast<std::uint64_t>(i.get_int64()) == u.get_uint64();
}

const json::value* find_path(const json::object& o, const JsonPath& path) {
  const json::object* cur = &o;
  const json::value* v = nullptr;
  for (std::size_t i = 0; i < path.size(); ++i) {
    v = cur->if_contains(path[i]);
    if (!v) return nullptr;
    if (i + 1 < path.size()) {
      cur = v->if_object();
      if (!cur) return nullptr;
    }
  }
  return v;
}

void set_path(json::object& o, const JsonPath& path, json::value value) {
  json::object* cur = &o;
  for (std::size_t i = 0; i + 1 < path.size(); ++i) {
    json::value& next = (*cur)[path[i]];
    if (!next.is_object()) next = json::object();
    cur = &next.get_object();
  }
  (*cur)[path.back()] = std::move(value);
}

using detail::ensure_object;
using detail::string_at;

std::string api_group(std::string_view api_version) {
  const auto slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string()
                                         : std::string(api_version.substr(0, slash));
}

}  // namespace

std::map<GroupKind, std::vector<JsonPath>> ApplyOptions::default_carry_over() {
  return {
      {service_kind(),
       {{"spec", "clusterIP"},
        {"spec", "clusterIPs"},
        {"spec", "ipFamilies"},
        {"spec", "ipFamilyPolicy"},
        {"spec", "healthCheckNodePort"}}},
      {deployment_kind(), {{"spec", "replicas"}}},
      {statefulset_kind(), {{"spec", "replicas"}}},
  };
}

std::map<GroupKind, std::vector<JsonPath>> ApplyOptions::default_drift_ignore() {
  return {
      {deployment_kind(), {{"spec", "replicas"}}},
      {statefulset_kind(), {{"spec", "replicas"}}},
  };
}

std::map<GroupKind, k8s::DeleteOptions> ApplyOptions::default_recreate() {
  k8s::DeleteOptions sts;
  sts.grace_period_seconds = 5;
  return {{statefulset_kind(), sts}, {daemonset_kind(), {}}, {deployment_kind(), {}}};
}

bool json_subset(const json::value& desired, const json::value& live) {
  if (desired.is_number() && live.is_number()) return numbers_equal(desired, live);
  if (desired.kind() != live.kind()) return false;
  switch (desired.kind()) {
    case json::kind::object: {
      const auto& lo = live.get_object();
      for (const auto& [k, v] : desired.get_object()) {
        const auto* lv = lo.if_contains(k);
        if (!lv || !json_subset(v, *lv)) return false;
      }
      return true;
    }
    case json::kind::array: {
      const auto& da = desired.get_array();
      const auto& la = live.get_array();
      if (da.size() != la.size()) return false;
      for (std::size_t i = 0; i < da.size(); ++i) {
        if (!json_subset(da[i], la[i])) return false;
      }
      return true;
    }
    default:
      return desired == live;
  }
}

json::object update_body(const json::object& desired, const json::object& live,
                         const ApplyOptions& options, const std::string& hash, bool drift_repair) {
  json::object body = desired;
  json::object& md = ensure_object(body, "metadata");
  const json::object* live_md = nullptr;
  if (const auto* v = live.if_contains("metadata")) live_md = v->if_object();
  static const json::object kEmpty;
  if (!live_md) live_md = &kEmpty;

  md["resourceVersion"] = string_at(*live_md, "resourceVersion");

  auto merge_map = [&](std::string_view field, bool merge) {
    json::object merged;
    if (merge) {
      if (const auto* v = live_md->if_contains(field); v && v->is_object())
        merged = v->get_object();
    }
    if (const auto* v = md.if_contains(field); v && v->is_object()) {
      for (const auto& [k, val] : v->get_object()) merged[k] = val;
    }
    return merged;
  };
  json::object labels = merge_map("labels", options.merge_labels);
  if (!labels.empty()) {
    md["labels"] = std::move(labels);
  } else {
    md.erase("labels");
  }
  json::object annotations = merge_map("annotations", options.merge_annotations);
  annotations[options.hash_annotation] = hash;
  md["annotations"] = std::move(annotations);

  if (options.merge_owner_references) {
    json::array refs;
    if (const auto* v = live_md->if_contains("ownerReferences"); v && v->is_array()) {
      refs = v->get_array();
    }
    if (const auto* v = md.if_contains("ownerReferences"); v && v->is_array()) {
      for (const auto& want : v->get_array()) {
        if (!want.is_object()) continue;
        const auto& w = want.get_object();
        const std::string uid = string_at(w, "uid");
        const auto same_uid = std::find_if(refs.begin(), refs.end(), [&](const json::value& r) {
          return r.is_object() && string_at(r.get_object(), "uid") == uid;
        });
        // An existing reference is kept as it is. A controller reference to another owner
        // never reaches here: such an object is not the root's (ownership()).
        if (same_uid != refs.end()) continue;
        refs.push_back(want);
      }
    }
    if (!refs.empty()) md["ownerReferences"] = std::move(refs);
  }

  const auto gvk = gvk_of(desired);
  const GroupKind gk = gvk ? GroupKind::of(*gvk) : GroupKind{};
  auto carry = [&](const JsonPath& path, bool overwrite) {
    if (path.empty()) return;
    const json::value* have = find_path(live, path);
    if (!have) return;
    if (!overwrite && find_path(body, path)) return;
    set_path(body, path, *have);
  };
  for (const auto& path : options.carry_over_all) carry(path, false);
  if (const auto it = options.carry_over.find(gk); it != options.carry_over.end()) {
    for (const auto& path : it->second) carry(path, false);
  }
  if (drift_repair) {
    if (const auto it = options.drift_ignore.find(gk); it != options.drift_ignore.end()) {
      for (const auto& path : it->second) carry(path, true);
    }
  }
  return body;
}

Ownership ownership(const k8s::Object& live, std::string_view owner_uid,
                    const json::object* desired, const ApplyOptions& options) {
  if (owner_uid.empty()) {
    if (options.managed_by_value.empty()) return Ownership::owned;
    return live.label(options.managed_by_label) ==
                   std::optional<std::string_view>(options.managed_by_value)
               ? Ownership::owned
               : Ownership::not_owned;
  }
  const auto refs = live.owner_references();
  bool ours = false;
  bool other_controller = false;
  for (const auto& r : refs) {
    if (r.uid == owner_uid) {
      ours = true;
    } else if (r.controller) {
      other_controller = true;
    }
  }
  if (ours && !other_controller) return Ownership::owned;
  if (ours || refs.empty() || desired == nullptr) return Ownership::not_owned;
  // The desired object's reference to the root names its group, kind and name.
  const json::object* root_ref = nullptr;
  if (const auto* md = desired->if_contains("metadata"); md && md->is_object()) {
    if (const auto* v = md->get_object().if_contains("ownerReferences"); v && v->is_array()) {
      for (const auto& r : v->get_array()) {
        if (r.is_object() && string_at(r.get_object(), "uid") == owner_uid) {
          root_ref = &r.get_object();
        }
      }
    }
  }
  if (root_ref == nullptr) return Ownership::not_owned;
  const std::string group = api_group(string_at(*root_ref, "apiVersion"));
  const std::string kind = string_at(*root_ref, "kind");
  const std::string name = string_at(*root_ref, "name");
  const bool all_stale = std::all_of(refs.begin(), refs.end(), [&](const auto& r) {
    return api_group(r.api_version) == group && r.kind == kind && r.name == name;
  });
  return all_stale ? Ownership::stale_owner : Ownership::not_owned;
}

std::string whose(const k8s::Object& live, std::string_view owner_uid,
                  const ApplyOptions& options) {
  if (owner_uid.empty()) {
    return "it lacks the label " + options.managed_by_label + "=" + options.managed_by_value +
           " (not created by this operator)";
  }
  const auto refs = live.owner_references();
  for (const auto& r : refs) {
    if (r.controller && r.uid != owner_uid) {
      return "it is controlled by " + r.kind + " " + r.name + " (uid " + r.uid + ")";
    }
  }
  if (!refs.empty()) {
    const auto& r = refs.front();
    return "it belongs to " + r.kind + " " + r.name + " (uid " + r.uid + ")";
  }
  return "no ownerReference names this root";
}

bool update_is_noop(const json::object& body, const json::object& live) {
  const json::object* live_md = nullptr;
  if (const auto* v = live.if_contains("metadata")) live_md = v->if_object();
  if (!live_md) return false;
  const json::object* body_md = nullptr;
  if (const auto* v = body.if_contains("metadata")) body_md = v->if_object();
  if (body_md) {
    for (const char* field : {"labels", "annotations"}) {
      const auto* want = body_md->if_contains(field);
      if (!want) continue;
      const auto* have = live_md->if_contains(field);
      if (!have || !json_subset(*want, *have)) return false;
    }
    if (const auto* want = body_md->if_contains("ownerReferences"); want && want->is_array()) {
      const auto* have = live_md->if_contains("ownerReferences");
      if (!have || !have->is_array()) return !want->get_array().empty() ? false : true;
      for (const auto& ref : want->get_array()) {
        const bool found = std::any_of(have->get_array().begin(), have->get_array().end(),
                                       [&](const json::value& h) { return json_subset(ref, h); });
        if (!found) return false;
      }
    }
    if (const auto* want = body_md->if_contains("finalizers")) {
      const auto* have = live_md->if_contains("finalizers");
      if (!have || !json_subset(*want, *have)) return false;
    }
  }
  json::object rest = body;
  rest.erase("metadata");
  rest.erase("status");
  return json_subset(rest, live);
}

}  // namespace aop::runtime

#include "reconcile/agent/live_view.hpp"

#include <boost/json.hpp>

#include "k8s/base64.hpp"

namespace aop::agent {

namespace json = boost::json;

k8s::KindCache* LiveCaches::of(Kind kind) const {
  switch (kind) {
    case Kind::namespace_:
      return namespaces;
    case Kind::secret:
      return secrets;
    case Kind::config_map:
      return config_maps;
    case Kind::stateful_set:
    case Kind::daemon_set:
    case Kind::deployment:
    case Kind::service: {
      const auto it = workloads.find(kind);
      return it == workloads.end() ? nullptr : it->second;
    }
    default: {
      const auto it = members.find(kind);
      return it == members.end() ? nullptr : it->second;
    }
  }
}

Result<void> LiveClusterView::list(Kind kind, std::string_view ns,
                                   const k8s::LabelSelector& selector,
                                   const std::function<void(const ListedObject&)>& visit) const {
  const k8s::KindCache* cache = caches_.of(kind);
  if (cache == nullptr) {
    return make_error(std::string(kind_name(kind)) + " objects are not watched by this operator");
  }
  for (const auto& obj : cache->select(ns, selector)) visit(ListedObject{*obj});
  return {};
}

Result<Labels> LiveClusterView::namespace_labels(std::string_view ns) const {
  if (caches_.namespaces == nullptr) return make_error("Namespaces are not watched");
  const auto obj = caches_.namespaces->get(k8s::ObjectKey{"", std::string(ns)});
  if (!obj) return make_error("Namespace " + std::string(ns) + " not found");
  return runtime::labels_of(*obj);
}

std::string AssetObject::str() const {
  return (kind == AssetKind::secret ? "Secret " : "ConfigMap ") + ns + "/" + name;
}

namespace {

k8s::KindCache* metadata_cache(const LiveCaches& caches, AssetKind kind) {
  return kind == AssetKind::secret ? caches.secrets : caches.config_maps;
}

// A string map of a GET response (`data` or `binaryData`), base64-decoded when asked.
Result<std::map<std::string, std::string>> string_map(const json::object& obj,
                                                      std::string_view field, bool base64,
                                                      const std::string& what) {
  std::map<std::string, std::string> out;
  const auto* v = obj.if_contains(field);
  if (v == nullptr || v->is_null()) return out;
  if (!v->is_object()) return make_error(what + ": " + std::string(field) + ": expected an object");
  for (const auto& [k, val] : v->get_object()) {
    if (!val.is_string()) {
      return make_error(what + ": " + std::string(field) + "." + std::string(k) +
                        ": expected a string");
    }
    if (!base64) {
      out.emplace(std::string(k), std::string(val.get_string()));
      continue;
    }
    auto bytes = k8s::base64_decode(val.get_string());
    if (!bytes) {
      return make_error(what + ": " + std::string(field) + "." + std::string(k) +
                        ": not valid base64");
    }
    out.emplace(std::string(k), std::move(*bytes));
  }
  return out;
}

std::string resource_version_of(const json::value& v) {
  const auto* o = v.if_object();
  if (o == nullptr) return {};
  const auto* md = o->if_contains("metadata");
  if (md == nullptr || !md->is_object()) return {};
  const auto* rv = md->get_object().if_contains("resourceVersion");
  return rv != nullptr && rv->is_string() ? std::string(rv->get_string()) : std::string();
}

}  // namespace

std::shared_ptr<const AssetContents::Content> AssetContents::lookup(
    const AssetObject& id, std::string_view current_rv) const {
  const std::lock_guard lock(mutex_);
  const auto it = contents_.find(id);
  if (it == contents_.end()) return nullptr;
  // Valid while the cache shows the version we saw when fetching, or has caught up with
  // the (possibly newer) version the GET returned.
  if (it->second->seen_rv != current_rv && it->second->fetched_rv != current_rv) return nullptr;
  return it->second;
}

boost::asio::awaitable<Result<void>> AssetContents::fetch(
    k8s::ApiClient& client, const LiveCaches& caches,
    const std::vector<runtime::ObjectDependency>& objects) {
  for (const auto& dep : objects) {
    const auto id = asset_object(dep);
    if (!id) continue;
    const k8s::KindCache* meta = metadata_cache(caches, id->kind);
    if (meta == nullptr) co_return make_error(id->str() + ": this kind is not watched");
    const auto cached = meta->get(dep.key);
    if (!cached) continue;  // absent: nothing to read (a reference to it renders nothing)
    const std::string seen_rv(cached->resource_version());
    if (lookup(*id, seen_rv)) continue;

    auto got = co_await client.get(
        gvk(id->kind == AssetKind::secret ? Kind::secret : Kind::config_map), dep.key);
    {
      const std::lock_guard lock(mutex_);
      ++fetches_;
    }
    Content content;
    content.seen_rv = seen_rv;
    if (!got) {
      if (!got.error().not_found()) {
        co_return make_error("reading " + id->str() + ": " + got.error().describe());
      }
      content.exists = false;  // deleted since the cache saw it; its event follows
    } else {
      content.exists = true;
      content.fetched_rv = resource_version_of(got.value());
      const auto* obj = got.value().if_object();
      if (obj == nullptr) co_return make_error("reading " + id->str() + ": not an object");
      auto data = string_map(*obj, "data", id->kind == AssetKind::secret, id->str());
      if (!data) co_return data.error();
      content.data = std::move(*data);
      if (id->kind == AssetKind::config_map) {
        auto binary = string_map(*obj, "binaryData", true, id->str());
        if (!binary) co_return binary.error();
        content.binary_data = std::move(*binary);
      }
    }
    auto shared = std::make_shared<const Content>(std::move(content));
    const std::lock_guard lock(mutex_);
    contents_[*id] = std::move(shared);
  }
  co_return Result<void>{};
}

void AssetContents::retain(const std::string& root, std::set<AssetObject> objects) {
  const std::lock_guard lock(mutex_);
  auto& held = by_root_[root];
  for (const auto& id : objects) {
    if (!held.contains(id)) ++refs_[id];
  }
  for (const auto& id : held) {
    if (objects.contains(id)) continue;
    const auto it = refs_.find(id);
    if (it == refs_.end()) continue;
    if (--it->second <= 0) {
      refs_.erase(it);
      contents_.erase(id);
    }
  }
  if (objects.empty()) {
    by_root_.erase(root);
  } else {
    held = std::move(objects);
  }
}

void AssetContents::forget(const AssetObject& id) {
  const std::lock_guard lock(mutex_);
  contents_.erase(id);
}

std::size_t AssetContents::size() const {
  const std::lock_guard lock(mutex_);
  return contents_.size();
}

std::uint64_t AssetContents::fetches() const {
  const std::lock_guard lock(mutex_);
  return fetches_;
}

Result<std::shared_ptr<const AssetContents::Content>> PlanningAssets::content(
    const AssetObject& id) const {
  if (const auto it = looked_up_.find(id); it != looked_up_.end()) return it->second;
  const k8s::KindCache* meta = id.kind == AssetKind::secret ? caches_.secrets : caches_.config_maps;
  Result<std::shared_ptr<const AssetContents::Content>> out =
      std::shared_ptr<const AssetContents::Content>();
  if (meta == nullptr) {
    out = make_error(std::string(id.kind == AssetKind::secret ? "Secrets" : "ConfigMaps") +
                     " are not watched");
  } else if (const auto cached = meta->get(k8s::ObjectKey{id.ns, id.name})) {
    if (auto found = contents_.lookup(id, cached->resource_version())) {
      out = std::move(found);
    } else {
      missed_ = true;
      out = make_error("contents not read yet");
    }
  }
  return looked_up_.emplace(id, std::move(out)).first->second;
}

Result<std::optional<SecretData>> PlanningAssets::secret(std::string_view ns,
                                                         std::string_view name) const {
  auto content = this->content({AssetKind::secret, std::string(ns), std::string(name)});
  if (!content) return content.error();
  if (!*content || !(*content)->exists) return std::optional<SecretData>();
  return std::optional<SecretData>(SecretData{(*content)->data});
}

Result<std::optional<std::vector<std::string>>> PlanningAssets::keys(Kind kind, std::string_view ns,
                                                                     std::string_view name) const {
  const bool secret = kind == Kind::secret;
  auto content = this->content(
      {secret ? AssetKind::secret : AssetKind::config_map, std::string(ns), std::string(name)});
  if (!content) return content.error();
  std::optional<std::vector<std::string>> out;
  if (!*content || !(*content)->exists) return out;
  out.emplace();
  for (const auto& [k, v] : (*content)->data) out->push_back(k);
  for (const auto& [k, v] : (*content)->binary_data) out->push_back(k);
  return out;
}

Result<bool> PlanningAssets::exists(Kind kind, std::string_view ns, std::string_view name) const {
  const k8s::KindCache* meta = kind == Kind::secret ? caches_.secrets : caches_.config_maps;
  if (meta == nullptr) return make_error("not watched");
  return meta->get(k8s::ObjectKey{std::string(ns), std::string(name)}) != nullptr;
}

Result<std::optional<ConfigMapData>> PlanningAssets::config_map(std::string_view ns,
                                                                std::string_view name) const {
  auto content = this->content({AssetKind::config_map, std::string(ns), std::string(name)});
  if (!content) return content.error();
  if (!*content || !(*content)->exists) return std::optional<ConfigMapData>();
  return std::optional<ConfigMapData>(ConfigMapData{(*content)->data, (*content)->binary_data});
}

std::optional<AssetObject> asset_object(const runtime::ObjectDependency& dep) {
  if (dep.kind == runtime::GroupKind::of(gvk(Kind::secret))) {
    return AssetObject{AssetKind::secret, dep.key.ns, dep.key.name};
  }
  if (dep.kind == runtime::GroupKind::of(gvk(Kind::config_map))) {
    return AssetObject{AssetKind::config_map, dep.key.ns, dep.key.name};
  }
  return std::nullopt;
}

}  // namespace aop::agent

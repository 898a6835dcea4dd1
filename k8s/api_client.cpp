// The parts of the API client contract that do not depend on the transport: the
// resource registry, ApiError, and the default page-level list.
#include "k8s/api_client.hpp"

#include <stdexcept>

namespace aop::k8s {

namespace {

ResourceInfo builtin(std::string group, std::string version, std::string kind, std::string resource,
                     bool namespaced, bool has_status) {
  ResourceInfo info;
  info.gvk = {std::move(group), std::move(version), std::move(kind)};
  info.resource = std::move(resource);
  info.namespaced = namespaced;
  info.has_status = has_status;
  return info;
}

}  // namespace

void throw_exception_from_error(const ApiError& e, const boost::source_location&) {
  throw std::runtime_error(e.describe());
}

ResourceRegistry::ResourceRegistry() {
  // The built-in kinds the operator reads or writes. Custom resources come from
  // discovery (ApiClient::discover), so that "is this CRD served?" has one answer.
  for (auto info : {
           builtin("", "v1", "Namespace", "namespaces", false, true),
           builtin("", "v1", "Node", "nodes", false, true),
           builtin("", "v1", "Secret", "secrets", true, false),
           builtin("", "v1", "ConfigMap", "configmaps", true, false),
           builtin("", "v1", "Service", "services", true, true),
           builtin("", "v1", "Endpoints", "endpoints", true, false),
           builtin("", "v1", "Event", "events", true, false),
           builtin("", "v1", "Pod", "pods", true, true),
           builtin("", "v1", "ServiceAccount", "serviceaccounts", true, false),
           builtin("apps", "v1", "StatefulSet", "statefulsets", true, true),
           builtin("apps", "v1", "Deployment", "deployments", true, true),
           builtin("apps", "v1", "DaemonSet", "daemonsets", true, true),
           builtin("coordination.k8s.io", "v1", "Lease", "leases", true, false),
           builtin("events.k8s.io", "v1", "Event", "events", true, false),
           builtin("apiextensions.k8s.io", "v1", "CustomResourceDefinition",
                   "customresourcedefinitions", false, true),
       }) {
    by_kind_.emplace(info.gvk, std::move(info));
  }
}

void ResourceRegistry::add(ResourceInfo info) {
  const std::lock_guard lock(mutex_);
  by_kind_.insert_or_assign(info.gvk, std::move(info));
}

std::optional<ResourceInfo> ResourceRegistry::find(const GroupVersionKind& gvk) const {
  const std::lock_guard lock(mutex_);
  const auto it = by_kind_.find(gvk);
  if (it == by_kind_.end()) return std::nullopt;
  return it->second;
}

std::optional<ResourceInfo> ResourceRegistry::find_resource(const GroupVersionResource& gvr) const {
  const std::lock_guard lock(mutex_);
  for (const auto& [gvk, info] : by_kind_) {
    if (gvk.group == gvr.group && gvk.version == gvr.version && info.resource == gvr.resource) {
      return info;
    }
  }
  return std::nullopt;
}

boost::asio::awaitable<ApiResult<ListPage>> ApiClient::list_page(const GroupVersionKind& gvk,
                                                                 std::string_view ns,
                                                                 const ListOptions& options,
                                                                 std::string continue_token) {
  if (!continue_token.empty()) {
    ApiError e;
    e.code = 410;
    e.reason = "Expired";
    e.message = "this client serves lists as a single page";
    co_return e;
  }
  auto all = co_await list(gvk, ns, options);
  if (!all) co_return all.error();
  co_return ListPage{std::move(all->items), std::move(all->resource_version), {}};
}

boost::asio::awaitable<ApiResult<ObjectListPage>> ApiClient::list_objects_page(
    const GroupVersionKind& gvk, std::string_view ns, const ListOptions& options,
    std::string continue_token, Transform transform) {
  auto page = co_await list_page(gvk, ns, options, std::move(continue_token));
  if (!page) co_return page.error();
  ObjectListPage out;
  out.items.reserve(page->items.size());
  for (auto& item : page->items) {
    if (auto obj = Object::from_json(item, transform, gvk)) out.items.push_back(std::move(obj));
    item = nullptr;  // free the tree as we go
  }
  out.resource_version = std::move(page->resource_version);
  out.continue_token = std::move(page->continue_token);
  co_return out;
}

boost::asio::awaitable<ApiResult<ObjectWatchEvent>> WatchStream::next_object(
    const Transform& transform, const GroupVersionKind& kind) {
  auto event = co_await next();
  if (!event) co_return event.error();
  ObjectWatchEvent out;
  out.type = event->type;
  if (event->type == WatchEvent::Type::error) {
    out.status = std::move(event->object);
  } else {
    out.object = Object::from_json(event->object, transform, kind);
  }
  co_return out;
}

}  // namespace aop::k8s

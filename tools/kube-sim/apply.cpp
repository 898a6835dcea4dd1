// Server-side apply (PATCH with application/apply-patch+yaml, `kubectl apply
// --server-side`), simplified: the applied configuration is merged into the live object
// (strategic merge for built-in kinds, so containers, ports and env merge by key; JSON
// merge for custom resources), an object that does not exist is created from it, and map
// fields this field manager applied before but left out now are removed. There is no
// per-field ownership between managers, so no conflicts are reported (`force` is accepted
// and changes nothing) and managedFields are not returned. The README lists this under
// its simplifications.
#include <boost/json.hpp>

#include "k8s/yaml.hpp"
#include "tools/kube-sim/api.hpp"
#include "tools/kube-sim/api_internal.hpp"
#include "tools/kube-sim/patch.hpp"

namespace aop::sim {

namespace json = boost::json;
using namespace detail;

namespace {

// The merge patch that removes, from the live object, the map fields `before` set and
// `after` no longer sets: null where a key went away, recursing where both are maps.
json::object removals(const json::object& before, const json::object& after) {
  json::object out;
  for (const auto& [key, old_value] : before) {
    const auto* now = after.if_contains(key);
    if (now == nullptr) {
      out[key] = nullptr;
    } else if (old_value.is_object() && now->is_object()) {
      auto nested = removals(old_value.as_object(), now->as_object());
      if (!nested.empty()) out[key] = std::move(nested);
    }
  }
  return out;
}

// `patch` with `removed` folded in (the applied values win over removals).
void add_removals(json::object& patch, const json::object& removed) {
  for (const auto& [key, value] : removed) {
    auto* existing = patch.if_contains(key);
    if (existing == nullptr) {
      patch[key] = value;
    } else if (existing->is_object() && value.is_object()) {
      add_removals(existing->as_object(), value.as_object());
    }
  }
}

}  // namespace

Response ApiServer::do_apply(const Request& req, Target& t) {
  const std::string manager(t.param("fieldManager"));
  if (manager.empty()) {
    return error_response(errors::bad_request(
        "PATCH " + t.path + ": fieldManager: Required value: is required for apply patch"));
  }
  if (!t.subresource.empty()) {
    return error_response(errors::bad_request("server-side apply of the " + t.subresource +
                                              " subresource is not supported by kube-sim"));
  }
  // kubectl sends JSON, which is YAML too; other clients send YAML.
  auto docs = k8s::yaml::parse_all(req.body);
  if (!docs || docs->size() != 1 || !(*docs)[0].is_object()) {
    return error_response(errors::bad_request(
        "error decoding YAML: the apply configuration must be one YAML or JSON object" +
        (docs ? std::string() : ": " + docs.error().message)));
  }
  json::object applied = std::move((*docs)[0].as_object());
  if (str_field(applied, "apiVersion") != t.type->api_version() ||
      str_field(applied, "kind") != t.type->kind) {
    return error_response(errors::bad_request(
        "the apply configuration's apiVersion and kind (" + str_field(applied, "apiVersion") +
        ", " + str_field(applied, "kind") + ") must be those of the resource (" +
        t.type->api_version() + ", " + t.type->kind + ")"));
  }
  auto& md = metadata_of(applied);
  if (str_field(md, "name") != t.name) {
    return error_response(errors::bad_request("the name of the object (" + str_field(md, "name") +
                                              ") does not match the name on the URL (" + t.name +
                                              ")"));
  }
  if (t.type->namespaced && !str_field(md, "namespace").empty() &&
      str_field(md, "namespace") != t.ns) {
    return error_response(errors::bad_request(
        "the namespace of the provided object does not match the namespace sent on the request"));
  }
  md.erase("managedFields");
  md.erase("resourceVersion");

  WriteContext ctx;
  ctx.dry_run = t.param("dryRun") == "All";
  ctx.user_agent = req.user_agent;
  std::vector<std::string> warnings;
  ctx.warnings = &warnings;
  ctx.field_validation =
      t.has("fieldValidation") ? std::string(t.param("fieldValidation")) : "Strict";

  Collection* c = store_.find(t.type->storage_key());
  ObjectPtr old = c != nullptr ? c->get(StoredObject::make_key(t.ns, t.name)) : nullptr;
  ApiResult<ObjectPtr> written = [&]() -> ApiResult<ObjectPtr> {
    if (!old) return create_in(t.type, t.ns, applied, ctx);
    json::object patch = applied;
    const auto previous = applied_configs_.find(std::string(old->uid()));
    if (previous != applied_configs_.end()) {
      if (const auto mine = previous->second.find(manager); mine != previous->second.end()) {
        add_removals(patch, removals(mine->second, applied));
      }
    }
    auto merged = t.type->builtin ? apply_strategic_merge_patch(old->parse(), patch)
                                  : apply_merge_patch(old->parse(), patch);
    if (!merged) {
      ApiError e;
      e.code = 422;
      e.reason = "Invalid";
      e.message = merged.error().message;
      return e;
    }
    return update_in(t.type, *c, old, std::move(merged->as_object()), false, ctx);
  }();
  if (!written) return error_response(written.error());
  if (!ctx.dry_run) applied_configs_[std::string((*written)->uid())][manager] = std::move(applied);
  Response r =
      json_response(old ? 200 : 201, (*written)->api_version() == t.type->api_version()
                                         ? std::string((*written)->json())
                                         : (*written)->with_api_version(t.type->api_version()));
  for (const auto& w : warnings) r.headers.emplace_back("Warning", "299 - " + errors::quote(w));
  return r;
}

}  // namespace aop::sim

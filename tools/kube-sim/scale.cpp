// The scale subresource (autoscaling/v1 Scale) of Deployments, StatefulSets and custom
// resources whose CRD declares `subresources.scale`: what `kubectl scale` and
// autoscalers use. Reading renders a Scale from the object; writing (PUT or any patch
// of the Scale) changes only the object's replica count.
#include <boost/json.hpp>

#include "k8s/label_selector.hpp"
#include "tools/kube-sim/api.hpp"
#include "tools/kube-sim/api_internal.hpp"
#include "tools/kube-sim/patch.hpp"
#include "tools/kube-sim/table.hpp"

namespace aop::sim {

namespace json = boost::json;
using namespace detail;

namespace {

// Sets a `.a.b.c` path, creating objects on the way.
void set_path(json::object& root, std::string_view path, json::value v) {
  if (path.starts_with(".")) path.remove_prefix(1);
  json::object* cur = &root;
  while (true) {
    const auto dot = path.find('.');
    const std::string key(path.substr(0, dot));
    if (dot == std::string_view::npos) {
      (*cur)[key] = std::move(v);
      return;
    }
    auto& next = (*cur)[key];
    if (!next.is_object()) next = json::object();
    cur = &next.as_object();
    path.remove_prefix(dot + 1);
  }
}

json::object scale_of(const ResourceType& type, const StoredObject& o) {
  const json::value obj = o.parse();
  auto first = [&](const std::string& path) -> const json::value* {
    static thread_local std::vector<json::value> found;
    found = eval_json_path(obj, path);
    return found.empty() ? nullptr : &found.front();
  };
  std::int64_t spec = 0;
  if (const auto* v = first(type.scale_spec_path); v != nullptr && v->is_number())
    spec = v->to_number<std::int64_t>();
  std::int64_t status = 0;
  if (!type.scale_status_path.empty()) {
    if (const auto* v = first(type.scale_status_path); v != nullptr && v->is_number()) {
      status = v->to_number<std::int64_t>();
    }
  }
  json::object st{{"replicas", status}};
  if (!type.scale_selector_path.empty()) {
    if (const auto* v = first(type.scale_selector_path)) {
      if (v->is_string()) {
        st["selector"] = v->as_string();
      } else if (v->is_object()) {
        if (auto sel = k8s::parse_label_selector(*v)) st["selector"] = sel->to_string();
      }
    }
  }
  const auto& md = obj.as_object().at("metadata").as_object();
  json::object smd;
  for (const char* k : {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"}) {
    if (const auto* v = md.if_contains(k)) smd[k] = *v;
  }
  return json::object{{"kind", "Scale"},
                      {"apiVersion", "autoscaling/v1"},
                      {"metadata", std::move(smd)},
                      {"spec", json::object{{"replicas", spec}}},
                      {"status", std::move(st)}};
}

}  // namespace

Response ApiServer::do_scale(const Request& req, Target& t) {
  Collection* c = store_.find(t.type->storage_key());
  ObjectPtr old = c ? c->get(StoredObject::make_key(t.ns, t.name)) : nullptr;
  if (!old) return error_response(errors::not_found(t.type->group_resource(), t.name));
  json::object current = scale_of(*t.type, *old);
  if (t.verb == "get") return json_response(200, json::serialize(current));

  boost::system::error_code ec;
  json::value body = json::parse(req.body, ec);
  if (ec)
    return error_response(
        errors::bad_request("error decoding request body: invalid JSON: " + ec.message()));
  json::value desired;
  if (t.verb == "update") {
    desired = std::move(body);
  } else {
    std::string ct = req.content_type.substr(0, req.content_type.find(';'));
    Result<json::value> patched =
        ct == "application/json-patch+json" ? apply_json_patch(current, body)
        : ct == "application/merge-patch+json" || ct == "application/strategic-merge-patch+json"
            ? apply_merge_patch(current, body)
            : Result<json::value>(make_error("unsupported"));
    if (!patched) {
      if (patched.error().message == "unsupported") {
        return error_response(errors::unsupported_media_type(
            "the body of the request was in an unknown format - accepted media types include: "
            "application/json-patch+json, application/merge-patch+json, "
            "application/strategic-merge-patch+json"));
      }
      ApiError e;
      e.code = 422;
      e.reason = "Invalid";
      e.message = patched.error().message;
      return error_response(e);
    }
    desired = std::move(*patched);
  }
  if (!desired.is_object())
    return error_response(errors::bad_request("a Scale object is required"));
  const auto& d = desired.as_object();
  const json::value* replicas = nullptr;
  if (const auto* spec = d.if_contains("spec"); spec != nullptr && spec->is_object()) {
    replicas = spec->as_object().if_contains("replicas");
  }
  if (replicas == nullptr || !replicas->is_number() || replicas->to_number<double>() < 0 ||
      replicas->is_double()) {
    return error_response(errors::invalid(
        "autoscaling", "Scale", t.name,
        {errors::field_invalid("spec.replicas", replicas ? json::serialize(*replicas) : "null",
                               "must be greater than or equal to 0")}));
  }
  if (const auto* md = d.if_contains("metadata"); md != nullptr && md->is_object()) {
    const std::string rv = str_field(md->as_object(), "resourceVersion");
    if (!rv.empty() && rv != std::to_string(old->rv())) {
      return error_response(errors::conflict_modified(t.type->group_resource(), t.name));
    }
  }
  if (faults_->take_conflict(t.type->resource, t.ns, t.name) ||
      faults_->take_conflict(t.type->storage_key(), t.ns, t.name)) {
    return error_response(errors::conflict_modified(t.type->group_resource(), t.name));
  }
  json::object obj = old->parse();
  set_path(obj, t.type->scale_spec_path, replicas->to_number<std::int64_t>());
  WriteContext ctx;
  ctx.dry_run = t.param("dryRun") == "All";
  ctx.user_agent = req.user_agent;
  ctx.field_validation = "Ignore";
  auto so = update_in(t.type, *c, old, std::move(obj), false, ctx);
  if (!so) return error_response(so.error());
  return json_response(200, json::serialize(scale_of(*t.type, **so)));
}

}  // namespace aop::sim

// The write verbs (create, update, patch, delete, deletecollection), metadata validation,
// and the background work writes cause: ownerReference garbage collection, namespace
// termination and CRD registration/cleanup.
//
// Simplifications (documented in README.md): there is no kubelet, so Pods are deleted
// at once whatever their grace period; namespace deletion removes the namespace's objects
// (honouring their finalizers) and then the namespace; deleting a CRD deletes its custom
// resources without waiting for their finalizers.
#include <algorithm>
#include <charconv>
#include <optional>
#include <set>

#include <boost/json.hpp>

#include "k8s/label_selector.hpp"
#include "tools/kube-sim/api.hpp"
#include "tools/kube-sim/api_internal.hpp"
#include "tools/kube-sim/patch.hpp"
#include "tools/kube-sim/protobuf.hpp"
#include "tools/kube-sim/schema.hpp"

namespace aop::sim {

namespace json = boost::json;
using namespace detail;

namespace detail {

std::string validate_name(NameRule rule, std::string_view name) {
  auto lower_alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  switch (rule) {
    case NameRule::path_segment:
      if (name == ".") return "may not be '.'";
      if (name == "..") return "may not be '..'";
      if (name.find('/') != std::string_view::npos) return "may not contain '/'";
      if (name.find('%') != std::string_view::npos) return "may not contain '%'";
      return {};
    case NameRule::dns_subdomain: {
      if (name.size() > 253) return "must be no more than 253 characters";
      bool ok = !name.empty();
      std::size_t start = 0;
      while (ok && start <= name.size()) {
        std::size_t dot = name.find('.', start);
        if (dot == std::string_view::npos) dot = name.size();
        const std::string_view label = name.substr(start, dot - start);
        ok = !label.empty() && lower_alnum(label.front()) && lower_alnum(label.back()) &&
             std::all_of(label.begin(), label.end(),
                         [&](char c) { return lower_alnum(c) || c == '-'; });
        start = dot + 1;
      }
      if (ok) return {};
      return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
             "'-' or '.', and must start and end with an alphanumeric character (e.g. "
             "'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    }
    case NameRule::dns_label: {
      if (name.size() > 63) return "must be no more than 63 characters";
      const bool ok =
          !name.empty() && lower_alnum(name.front()) && lower_alnum(name.back()) &&
          std::all_of(name.begin(), name.end(), [&](char c) { return lower_alnum(c) || c == '-'; });
      if (ok) return {};
      return "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
             "'-', "
             "and must start and end with an alphanumeric character (e.g. 'my-name',  or "
             "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    }
    case NameRule::dns1035_label: {
      if (name.size() > 63) return "must be no more than 63 characters";
      const bool ok =
          !name.empty() && name.front() >= 'a' && name.front() <= 'z' && lower_alnum(name.back()) &&
          std::all_of(name.begin(), name.end(), [&](char c) { return lower_alnum(c) || c == '-'; });
      if (ok) return {};
      return "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
             "with an alphabetic character, and end with an alphanumeric character (e.g. "
             "'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
    }
  }
  return {};
}

std::string validate_qualified_name(std::string_view name) {
  std::string msg = k8s::validate_label_key(name);
  if (msg.empty()) return msg;
  // k8s::validate_label_key words it as `key: Invalid value: "<k>": <detail>`.
  const std::string marker = errors::quote(name) + ": ";
  auto pos = msg.find(marker);
  return pos == std::string::npos ? msg : msg.substr(pos + marker.size());
}

}  // namespace detail

namespace {

ApiResult<json::object> decode_body(const Request& req) {
  std::string_view ct = req.content_type;
  ct = ct.substr(0, ct.find(';'));
  while (!ct.empty() && ct.back() == ' ') ct.remove_suffix(1);
  if (ct == "application/vnd.kubernetes.protobuf") {
    auto obj = decode_k8s_protobuf(req.body);
    if (!obj) return errors::unsupported_media_type(obj.error().message);
    return std::move(*obj);
  }
  if (!ct.empty() && ct != "application/json" && ct != "*/*") {
    return errors::unsupported_media_type(
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/vnd.kubernetes.protobuf (some kinds)");
  }
  boost::system::error_code ec;
  json::value v = json::parse(req.body, ec);
  if (ec) {
    return errors::bad_request("error decoding request body: invalid JSON: " + ec.message());
  }
  if (!v.is_object()) {
    return errors::bad_request(
        "the object provided is unrecognized or invalid JSON: expected an object");
  }
  return std::move(v.as_object());
}

// Fills in or checks kind and apiVersion against the URL's type.
ApiResult<void> check_kind(json::object& obj, const ResourceType& type, std::string_view body) {
  const std::string kind = str_field(obj, "kind");
  const std::string av = str_field(obj, "apiVersion");
  if (kind.empty()) {
    if (!type.builtin)
      return errors::bad_request("Object 'Kind' is missing in '" +
                                 std::string(body.substr(0, 512)) + "'");
    obj["kind"] = type.kind;
  } else if (kind != type.kind) {
    return errors::bad_request("the kind in the data (" + kind +
                               ") does not match the kind of the resource (" + type.kind + ")");
  }
  if (av.empty()) {
    if (!type.builtin)
      return errors::bad_request("Object 'apiVersion' is missing in '" +
                                 std::string(body.substr(0, 512)) + "'");
    obj["apiVersion"] = type.api_version();
  } else if (av != type.api_version()) {
    return errors::bad_request("the API version in the data (" + av +
                               ") does not match the expected API version (" + type.api_version() +
                               ")");
  }
  return {};
}

std::vector<std::string> finalizers_of(const json::object& md) {
  std::vector<std::string> out;
  if (const auto* f = md.if_contains("finalizers"); f != nullptr && f->is_array()) {
    for (const auto& v : f->as_array()) {
      if (v.is_string()) out.emplace_back(v.as_string());
    }
  }
  return out;
}

void set_finalizers(json::object& md, const std::vector<std::string>& f) {
  if (f.empty()) {
    md.erase("finalizers");
    return;
  }
  json::array a;
  for (const auto& s : f) a.emplace_back(s);
  md["finalizers"] = std::move(a);
}

json::value without(const json::object& o, std::initializer_list<std::string_view> keys) {
  json::object c = o;
  for (auto k : keys) c.erase(k);
  return c;
}

std::string base_content_type(std::string_view ct) {
  ct = ct.substr(0, ct.find(';'));
  while (!ct.empty() && ct.back() == ' ') ct.remove_suffix(1);
  return std::string(ct);
}

constexpr std::string_view kForeground = "foregroundDeletion";
constexpr std::string_view kOrphan = "orphan";

}  // namespace

// ---------------------------------------------------------------------------------------
// Validation shared by create and update

std::vector<StatusCause> ApiServer::validate_metadata(const TypePtr& type, const json::object& obj,
                                                      bool create) {
  std::vector<StatusCause> out;
  const auto* mdv = obj.if_contains("metadata");
  if (mdv == nullptr || !mdv->is_object()) return out;
  const auto& md = mdv->as_object();
  const std::string name = str_field(md, "name");
  if (create) {
    if (auto msg = validate_name(type->name_rule, name); !msg.empty()) {
      out.push_back(errors::field_invalid("metadata.name", errors::quote(name), msg));
    }
  }
  if (const auto* labels = md.if_contains("labels"); labels != nullptr) {
    if (labels->is_object()) {
      for (const auto& [k, v] : labels->as_object()) {
        if (auto msg = validate_qualified_name(k); !msg.empty()) {
          out.push_back(errors::field_invalid("metadata.labels", errors::quote(k), msg));
        }
        const std::string_view value =
            v.is_string() ? std::string_view(v.as_string()) : std::string_view();
        if (auto msg = k8s::validate_label_value(value); !msg.empty()) {
          const std::string marker = errors::quote(value) + ": ";
          auto pos = msg.find(marker);
          out.push_back(errors::field_invalid(
              "metadata.labels", errors::quote(value),
              pos == std::string::npos ? msg : msg.substr(pos + marker.size())));
        }
      }
    }
  }
  if (const auto* ann = md.if_contains("annotations"); ann != nullptr && ann->is_object()) {
    std::size_t total = 0;
    for (const auto& [k, v] : ann->as_object()) {
      if (auto msg = validate_qualified_name(k); !msg.empty()) {
        out.push_back(errors::field_invalid("metadata.annotations", errors::quote(k), msg));
      }
      total += k.size() + (v.is_string() ? v.as_string().size() : 0);
    }
    if (total > 262144) {
      out.push_back(
          errors::field_too_long("metadata.annotations", "must have at most 262144 bytes"));
    }
  }
  if (const auto* fin = md.if_contains("finalizers"); fin != nullptr && fin->is_array()) {
    const auto& arr = fin->as_array();
    for (std::size_t i = 0; i < arr.size(); ++i) {
      const std::string f = arr[i].is_string() ? std::string(arr[i].as_string()) : std::string();
      if (auto msg = validate_qualified_name(f); !msg.empty()) {
        out.push_back(errors::field_invalid("metadata.finalizers[" + std::to_string(i) + "]",
                                            errors::quote(f), msg));
      }
    }
  }
  if (const auto* refs = md.if_contains("ownerReferences"); refs != nullptr && refs->is_array()) {
    int controllers = 0;
    for (const auto& r : refs->as_array()) {
      if (!r.is_object()) continue;
      const auto& ro = r.as_object();
      const std::string av = str_field(ro, "apiVersion");
      if (av.empty()) {
        out.push_back(errors::field_invalid("metadata.ownerReferences.apiVersion", "\"\"",
                                            "version must not be empty"));
      }
      if (str_field(ro, "kind").empty()) {
        out.push_back(errors::field_invalid("metadata.ownerReferences.kind", "\"\"",
                                            "kind must not be empty"));
      }
      if (str_field(ro, "name").empty()) {
        out.push_back(errors::field_invalid("metadata.ownerReferences.name", "\"\"",
                                            "name must not be empty"));
      }
      if (str_field(ro, "uid").empty()) {
        out.push_back(
            errors::field_invalid("metadata.ownerReferences.uid", "\"\"", "uid must not be empty"));
      }
      if (const auto* c = ro.if_contains("controller");
          c != nullptr && c->is_bool() && c->as_bool()) {
        ++controllers;
      }
    }
    if (controllers > 1) {
      out.push_back(errors::field_invalid("metadata.ownerReferences",
                                          "\"" + json::serialize(*refs) + "\"",
                                          "Only one reference can have Controller set to true"));
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Create

ApiResult<ObjectPtr> ApiServer::create_object(json::value value, const std::string& user_agent) {
  if (!value.is_object()) return errors::bad_request("an object is required");
  auto& obj = value.as_object();
  auto type = registry_.find_kind(str_field(obj, "apiVersion"), str_field(obj, "kind"));
  if (!type) {
    return errors::bad_request("no kind \"" + str_field(obj, "kind") +
                               "\" is registered for version \"" + str_field(obj, "apiVersion") +
                               "\"");
  }
  std::string ns = str_field(metadata_of(obj), "namespace");
  if (type->namespaced && ns.empty()) ns = "default";
  WriteContext ctx;
  ctx.user_agent = user_agent;
  ctx.field_validation = "Ignore";
  return create_in(type, ns, std::move(obj), ctx);
}

ApiResult<ObjectPtr> ApiServer::create_in(const TypePtr& type, const std::string& ns,
                                          json::object obj, const WriteContext& ctx) {
  Collection* c = store_.find(type->storage_key());
  if (c == nullptr) return errors::not_found(type->group_resource(), "");
  auto& md = metadata_of(obj);
  if (type->namespaced) {
    md["namespace"] = ns;
  } else {
    md.erase("namespace");
  }
  if (!str_field(md, "resourceVersion").empty()) {
    return errors::bad_request("resourceVersion should not be set on objects to be created");
  }
  std::string name = str_field(md, "name");
  if (type->namespaced) {
    const Collection* nsc = store_.find("namespaces");
    ObjectPtr nso = nsc != nullptr ? nsc->get(ns) : nullptr;
    if (!nso) return errors::not_found({"", "namespaces"}, ns);
    if (nso->terminating()) {
      return errors::forbidden(
          type->group_resource(), name,
          "unable to create new content in namespace " + ns + " because it is being terminated");
    }
  }
  if (name.empty()) {
    const std::string gen = str_field(md, "generateName");
    if (gen.empty()) {
      return errors::invalid(
          type->group, type->kind, "",
          {errors::field_required("metadata.name", "name or generateName is required")});
    }
    for (int attempt = 0; attempt < 8; ++attempt) {
      name = gen + random_suffix();
      if (!c->get(StoredObject::make_key(type->namespaced ? ns : "", name))) break;
    }
    md["name"] = name;
  }
  // Server-set fields.
  md["uid"] = new_uid();
  md["creationTimestamp"] = now_rfc3339();
  md.erase("deletionTimestamp");
  md.erase("deletionGracePeriodSeconds");
  md.erase("managedFields");
  md.erase("selfLink");
  if (type->generation) {
    md["generation"] = 1;
  } else {
    md.erase("generation");
  }
  if (type->status_subresource && !type->builtin) obj.erase("status");
  omit_empty_fields(*type, obj);
  if (type->builtin) {
    if (type->kind == "Secret" && type->group.empty()) {
      if (auto msg = secret_decode_error(obj); !msg.empty()) return errors::bad_request(msg);
    }
    default_builtin(*type, obj, true);
    omit_empty_fields(*type, obj);  // stringData may have left an empty data map
    if (type->kind == "DaemonSet" && type->group == "apps") {
      stamp_daemonset_template_generation(obj, nullptr);
    }
    if (type->kind == "Service" && type->group.empty()) {
      auto& spec = obj["spec"].as_object();
      const std::string stype = str_field(spec, "type");
      std::string ip = str_field(spec, "clusterIP");
      if (stype != "ExternalName" && ip.empty()) {
        std::uniform_int_distribution<int> d(1, 254);
        ip = "10.96." + std::to_string(d(rng_)) + "." + std::to_string(d(rng_));
        spec["clusterIP"] = ip;
      }
      if (!ip.empty() && !spec.contains("clusterIPs"))
        spec["clusterIPs"] = json::array{json::value(ip)};
    }
  }
  auto causes = validate_metadata(type, obj, true);
  if (type->builtin) {
    auto more = validate_builtin(*type, obj, nullptr);
    causes.insert(causes.end(), more.begin(), more.end());
  } else if (!type->schema.is_null()) {
    json::value v(std::move(obj));
    auto outcome = apply_schema(type->schema, v);
    obj = std::move(v.as_object());
    if (!outcome.pruned_fields.empty()) {
      if (ctx.field_validation == "Strict") {
        std::string msg = type->kind + " in version \"" + type->version +
                          "\" cannot be handled as a " + type->kind + ": strict decoding error: ";
        for (std::size_t i = 0; i < outcome.pruned_fields.size(); ++i) {
          if (i > 0) msg += ", ";
          msg += "unknown field \"" + outcome.pruned_fields[i] + "\"";
        }
        return errors::bad_request(msg);
      }
      if (ctx.field_validation == "Warn" && ctx.warnings != nullptr) {
        for (const auto& f : outcome.pruned_fields)
          ctx.warnings->push_back("unknown field \"" + f + "\"");
      }
    }
    causes.insert(causes.end(), outcome.errors.begin(), outcome.errors.end());
  }
  bool is_crd = type->group == "apiextensions.k8s.io" && type->kind == "CustomResourceDefinition";
  if (is_crd) {
    auto crd = read_crd(obj);
    causes.insert(causes.end(), crd.errors.begin(), crd.errors.end());
  }
  if (!causes.empty()) return errors::invalid(type->group, type->kind, name, std::move(causes));
  if (is_crd) {
    // The CRD controllers accept names and establish the CRD at once.
    const auto& spec = obj["spec"].as_object();
    json::array stored;
    for (const auto& v : spec.at("versions").as_array()) {
      const auto* st = v.as_object().if_contains("storage");
      if (st != nullptr && st->is_bool() && st->as_bool())
        stored.push_back(v.as_object().at("name"));
    }
    const std::string now = now_rfc3339();
    obj["status"] = json::object{
        {"acceptedNames", spec.at("names")},
        {"conditions",
         json::array{json::object{{"type", "NamesAccepted"},
                                  {"status", "True"},
                                  {"lastTransitionTime", now},
                                  {"reason", "NoConflicts"},
                                  {"message", "no conflicts found"}},
                     json::object{{"type", "Established"},
                                  {"status", "True"},
                                  {"lastTransitionTime", now},
                                  {"reason", "InitialNamesAccepted"},
                                  {"message", "the initial names have been accepted"}}}},
        {"storedVersions", std::move(stored)}};
  }
  const std::string key = StoredObject::make_key(type->namespaced ? ns : "", name);
  if (c->get(key)) return errors::already_exists(type->group_resource(), name);
  if (type->namespaced) {
    if (auto admitted = admit_quota(*type, ns, name, ctx.dry_run); !admitted) {
      return admitted.error();
    }
  }
  if (ctx.dry_run) return StoredObject::make(obj, 0);
  auto so = store_.create(*c, std::move(obj));
  if (so->has_owner_refs()) {
    index_owners(type->storage_key(), nullptr, so);
    gc_queue_.push_back(GcItem{GcItem::dangling, type->storage_key(), std::string(so->key()), ""});
  }
  if (is_crd) on_crd_written(so);
  return so;
}

namespace {

// The quota resource names that count objects of `type`: count/<resource>[.<group>], and
// the older plain names of the core kinds that have one.
std::vector<std::string> quota_names(const ResourceType& type) {
  std::vector<std::string> out{"count/" + type.storage_key()};
  static const std::set<std::string, std::less<>> kCore = {"pods",
                                                           "services",
                                                           "secrets",
                                                           "configmaps",
                                                           "persistentvolumeclaims",
                                                           "replicationcontrollers",
                                                           "resourcequotas"};
  if (type.group.empty() && kCore.contains(type.resource)) out.push_back(type.resource);
  return out;
}

// A quantity of objects ("10", "2k"); nullopt when it is not a whole count.
std::optional<std::int64_t> object_count(const json::value* v) {
  if (v == nullptr || !v->is_string()) return std::nullopt;
  std::string_view s = v->as_string();
  std::int64_t scale = 1;
  if (!s.empty() && (s.back() == 'k' || s.back() == 'M' || s.back() == 'G')) {
    scale = s.back() == 'k' ? 1000 : s.back() == 'M' ? 1000000 : 1000000000;
    s.remove_suffix(1);
  }
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || n < 0) return std::nullopt;
  return n * scale;
}

const json::object* object_at(const json::object& o, std::string_view a, std::string_view b) {
  const auto* x = o.if_contains(a);
  if (x == nullptr || !x->is_object()) return nullptr;
  const auto* y = x->as_object().if_contains(b);
  return y != nullptr && y->is_object() ? &y->as_object() : nullptr;
}

}  // namespace

// As kube-apiserver's quota admission, for object counts: a ResourceQuota of the
// namespace limits the kind when its status.hard does (spec.hard counts only once a quota
// controller has copied it there: none runs here, nor in a kube-apiserver without a
// controller-manager, so the status is what its writer put there). Such a quota must
// have the kind's usage in status.used, and the create must fit under status.hard; then
// it is charged to status.used. Refusals are 403 Forbidden with kube-apiserver's messages.
ApiResult<void> ApiServer::admit_quota(const ResourceType& type, const std::string& ns,
                                       const std::string& name, bool dry_run) {
  Collection* quotas = store_.find("resourcequotas");
  if (quotas == nullptr || quotas->size() == 0) return {};
  const auto names = quota_names(type);
  std::vector<std::pair<ObjectPtr, std::string>> charged;  // quota, resource name
  std::optional<ApiError> refused;
  const auto scanned = quotas->scan(ns + "/", "", 0, store_.rv(), [&](const ObjectPtr& q) {
    const json::object quota = q->parse();
    const auto* hard = object_at(quota, "status", "hard");
    if (hard == nullptr) return true;
    const auto* used = object_at(quota, "status", "used");
    for (const auto& resource : names) {
      const auto* hard_value = hard->if_contains(resource);
      if (hard_value == nullptr) continue;
      const auto limit = object_count(hard_value);
      const auto in_use = object_count(used != nullptr ? used->if_contains(resource) : nullptr);
      std::string why;
      if (!limit || !in_use) {
        why.append("status unknown for quota: ").append(q->name());
        why.append(", resources: ").append(resource);
      } else if (*in_use + 1 > *limit) {
        why.append("exceeded quota: ").append(q->name());
        why.append(", requested: ").append(resource).append("=1");
        why.append(", used: ").append(resource).append("=").append(std::to_string(*in_use));
        why.append(", limited: ").append(resource).append("=").append(std::to_string(*limit));
      }
      if (!why.empty()) {
        refused = errors::forbidden(type.group_resource(), name, why);
        return false;
      }
      charged.emplace_back(q, resource);
    }
    return true;
  });
  if (!scanned) return scanned.error();
  if (refused) return *refused;
  if (dry_run) return {};
  const TypePtr quota_type = quotas->type();
  for (const auto& [q, resource] : charged) {
    json::object quota = q->parse();
    auto& used = quota["status"].as_object()["used"].as_object();
    used[resource] = std::to_string(*object_count(used.if_contains(resource)) + 1);
    metadata_of(quota).erase("resourceVersion");
    commit_update(quota_type, *quotas, q, std::move(quota));
  }
  return {};
}

Response ApiServer::do_create(const Request& req, Target& t) {
  auto body = decode_body(req);
  if (!body) return error_response(body.error());
  if (auto k = check_kind(*body, *t.type, req.body); !k) return error_response(k.error());
  auto& md = metadata_of(*body);
  const std::string body_ns = str_field(md, "namespace");
  if (t.type->namespaced && !body_ns.empty() && body_ns != t.ns) {
    return error_response(errors::bad_request(
        "the namespace of the provided object does not match the namespace sent on the request"));
  }
  WriteContext ctx;
  ctx.dry_run = t.param("dryRun") == "All";
  ctx.user_agent = req.user_agent;
  std::vector<std::string> warnings;
  ctx.warnings = &warnings;
  if (auto fv = t.param("fieldValidation"); !fv.empty())
    ctx.field_validation = std::string(fv);
  else
    ctx.field_validation = "Warn";
  auto so = create_in(t.type, t.ns, std::move(*body), ctx);
  if (!so) return error_response(so.error());
  if (t.name.empty()) t.name = std::string((*so)->name());
  Response r = json_response(201, (*so)->api_version() == t.type->api_version()
                                      ? std::string((*so)->json())
                                      : (*so)->with_api_version(t.type->api_version()));
  for (const auto& w : warnings) r.headers.emplace_back("Warning", "299 - " + errors::quote(w));
  return r;
}

// ---------------------------------------------------------------------------------------
// Update and patch

ObjectPtr ApiServer::commit_update(const TypePtr& type, Collection& c, const ObjectPtr& old,
                                   json::object obj) {
  auto so = store_.update(c, old, std::move(obj));
  if (so->has_owner_refs() || old->has_owner_refs()) index_owners(type->storage_key(), old, so);
  if (so->terminating()) {
    json::object parsed = so->parse();
    if (finalizers_of(metadata_of(parsed)).empty()) {
      remove_now(type, c, so, std::move(parsed));
    }
  }
  return so;
}

ApiResult<ObjectPtr> ApiServer::update_in(const TypePtr& type, Collection& c, const ObjectPtr& old,
                                          json::object obj, bool status, const WriteContext& ctx) {
  json::object oldobj = old->parse();
  json::object next;
  if (status) {
    next = oldobj;
    if (const auto* s = obj.if_contains("status")) {
      next["status"] = *s;
    } else {
      next.erase("status");
    }
  } else {
    next = std::move(obj);
    if (type->status_subresource) {
      if (const auto* s = oldobj.if_contains("status")) {
        next["status"] = *s;
      } else {
        next.erase("status");
      }
    }
  }
  next["kind"] = type->kind;
  next["apiVersion"] = type->api_version();
  auto& md = metadata_of(next);
  const auto& oldmd = metadata_of(oldobj);
  for (const char* k : {"name", "namespace", "uid", "creationTimestamp", "deletionTimestamp",
                        "deletionGracePeriodSeconds", "generation"}) {
    if (const auto* v = oldmd.if_contains(k)) {
      md[k] = *v;
    } else {
      md.erase(k);
    }
  }
  md.erase("managedFields");
  md.erase("selfLink");
  md.erase("resourceVersion");
  std::vector<StatusCause> causes;
  if (old->terminating()) {
    const auto before = finalizers_of(oldmd);
    std::vector<std::string> added;
    for (const auto& f : finalizers_of(md)) {
      if (std::find(before.begin(), before.end(), f) == before.end()) added.push_back(f);
    }
    if (!added.empty()) {
      std::string list;
      for (std::size_t i = 0; i < added.size(); ++i)
        list += (i ? ", " : "") + errors::quote(added[i]);
      causes.push_back(errors::field_forbidden("metadata.finalizers",
                                               "no new finalizers can be added if the object is "
                                               "being deleted, found new finalizers []string{" +
                                                   list + "}"));
    }
  }
  omit_empty_fields(*type, next);
  if (type->builtin) {
    if (type->kind == "Secret" && type->group.empty()) {
      if (auto msg = secret_decode_error(next); !msg.empty()) return errors::bad_request(msg);
    }
    default_builtin(*type, next, false);
    omit_empty_fields(*type, next);
    if (type->kind == "DaemonSet" && type->group == "apps") {
      stamp_daemonset_template_generation(next, &oldobj);
    }
    if (type->kind == "Service" && type->group.empty()) {
      // The API server keeps the addresses it allocated when an update leaves them out.
      auto& spec = next["spec"].as_object();
      if (const auto* os = oldobj.if_contains("spec"); os != nullptr && os->is_object()) {
        if (str_field(spec, "clusterIP").empty() &&
            !str_field(os->as_object(), "clusterIP").empty()) {
          spec["clusterIP"] = os->as_object().at("clusterIP");
          if (const auto* ips = os->as_object().if_contains("clusterIPs"))
            spec["clusterIPs"] = *ips;
        }
      }
    }
  }
  auto more = validate_metadata(type, next, false);
  causes.insert(causes.end(), more.begin(), more.end());
  if (type->builtin) {
    auto b = validate_builtin(*type, next, &oldobj);
    causes.insert(causes.end(), b.begin(), b.end());
  } else if (!type->schema.is_null()) {
    json::value v(std::move(next));
    auto outcome = apply_schema(type->schema, v);
    next = std::move(v.as_object());
    if (!outcome.pruned_fields.empty()) {
      if (ctx.field_validation == "Strict") {
        std::string msg = type->kind + " in version \"" + type->version +
                          "\" cannot be handled as a " + type->kind + ": strict decoding error: ";
        for (std::size_t i = 0; i < outcome.pruned_fields.size(); ++i) {
          if (i > 0) msg += ", ";
          msg += "unknown field \"" + outcome.pruned_fields[i] + "\"";
        }
        return errors::bad_request(msg);
      }
      if (ctx.field_validation == "Warn" && ctx.warnings != nullptr) {
        for (const auto& f : outcome.pruned_fields)
          ctx.warnings->push_back("unknown field \"" + f + "\"");
      }
    }
    causes.insert(causes.end(), outcome.errors.begin(), outcome.errors.end());
  }
  const bool is_crd =
      type->group == "apiextensions.k8s.io" && type->kind == "CustomResourceDefinition";
  if (is_crd && !status) {
    auto crd = read_crd(next);
    causes.insert(causes.end(), crd.errors.begin(), crd.errors.end());
    if (crd.errors.empty()) {
      // Keep acceptedNames and storedVersions current, as the CRD controllers would.
      auto& st = next["status"];
      if (!st.is_object()) st = json::object();
      st.as_object()["acceptedNames"] = next["spec"].as_object()["names"];
      json::array stored;
      if (const auto* sv = st.as_object().if_contains("storedVersions");
          sv != nullptr && sv->is_array())
        stored = sv->as_array();
      for (const auto& v : next["spec"].as_object()["versions"].as_array()) {
        const auto* s = v.as_object().if_contains("storage");
        if (s != nullptr && s->is_bool() && s->as_bool() &&
            std::find(stored.begin(), stored.end(), v.as_object().at("name")) == stored.end()) {
          stored.push_back(v.as_object().at("name"));
        }
      }
      st.as_object()["storedVersions"] = std::move(stored);
    }
  }
  if (!causes.empty())
    return errors::invalid(type->group, type->kind, old->name(), std::move(causes));
  auto& nmd = metadata_of(next);  // `next` may have been replaced above
  if (type->generation && !status) {
    const auto a = without(next, {"metadata", "status"});
    const auto b = without(oldobj, {"metadata", "status"});
    if (a != b) {
      const auto* g = oldmd.if_contains("generation");
      const std::int64_t gen = g != nullptr && g->is_number() ? g->to_number<std::int64_t>() : 0;
      nmd["generation"] = gen + 1;
    }
  }
  nmd["resourceVersion"] = std::to_string(old->rv());
  if (next == oldobj) return old;  // no change: no new resourceVersion, no event
  if (ctx.dry_run) return StoredObject::make(next, old->rv());
  auto so = commit_update(type, c, old, std::move(next));
  if (so->has_owner_refs()) {
    gc_queue_.push_back(GcItem{GcItem::dangling, type->storage_key(), std::string(so->key()), ""});
  }
  if (is_crd) on_crd_written(so);
  return so;
}

Response ApiServer::do_update(const Request& req, Target& t) {
  auto body = decode_body(req);
  if (!body) return error_response(body.error());
  if (auto k = check_kind(*body, *t.type, req.body); !k) return error_response(k.error());
  auto& md = metadata_of(*body);
  const std::string body_name = str_field(md, "name");
  if (body_name != t.name) {
    return error_response(errors::bad_request("the name of the object (" + body_name +
                                              ") does not match the name on the URL (" + t.name +
                                              ")"));
  }
  const std::string body_ns = str_field(md, "namespace");
  if (t.type->namespaced && !body_ns.empty() && body_ns != t.ns) {
    return error_response(errors::bad_request(
        "the namespace of the provided object does not match the namespace sent on the request"));
  }
  WriteContext ctx;
  ctx.dry_run = t.param("dryRun") == "All";
  ctx.user_agent = req.user_agent;
  std::vector<std::string> warnings;
  ctx.warnings = &warnings;
  ctx.field_validation =
      t.has("fieldValidation") ? std::string(t.param("fieldValidation")) : "Warn";
  Collection* c = store_.find(t.type->storage_key());
  ObjectPtr old = c ? c->get(StoredObject::make_key(t.ns, t.name)) : nullptr;
  if (!old) {
    if (t.type->create_on_update && t.subresource.empty()) {
      md.erase("resourceVersion");
      auto so = create_in(t.type, t.ns, std::move(*body), ctx);
      if (!so) return error_response(so.error());
      return json_response(201, std::string((*so)->json()));
    }
    return error_response(errors::not_found(t.type->group_resource(), t.name));
  }
  if (faults_->take_conflict(t.type->resource, t.ns, t.name) ||
      faults_->take_conflict(t.type->storage_key(), t.ns, t.name)) {
    return error_response(errors::conflict_modified(t.type->group_resource(), t.name));
  }
  const std::string rv = str_field(md, "resourceVersion");
  if (!rv.empty() && rv != std::to_string(old->rv())) {
    return error_response(errors::conflict_modified(t.type->group_resource(), t.name));
  }
  const std::string uid = str_field(md, "uid");
  if (!uid.empty() && uid != old->uid()) {
    return error_response(errors::conflict(t.type->group_resource(), t.name,
                                           "Precondition failed: UID in precondition: " + uid +
                                               ", UID in object meta: " + std::string(old->uid())));
  }
  auto so = update_in(t.type, *c, old, std::move(*body), t.subresource == "status", ctx);
  if (!so) return error_response(so.error());
  Response r = json_response(200, (*so)->api_version() == t.type->api_version()
                                      ? std::string((*so)->json())
                                      : (*so)->with_api_version(t.type->api_version()));
  for (const auto& w : warnings) r.headers.emplace_back("Warning", "299 - " + errors::quote(w));
  return r;
}

Response ApiServer::do_patch(const Request& req, Target& t) {
  const std::string ct = base_content_type(req.content_type);
  if (ct == "application/apply-patch+yaml") return do_apply(req, t);
  enum { merge, json_patch, strategic } kind;
  if (ct == "application/merge-patch+json") {
    kind = merge;
  } else if (ct == "application/json-patch+json") {
    kind = json_patch;
  } else if (ct == "application/strategic-merge-patch+json" && t.type->builtin) {
    kind = strategic;
  } else {
    std::string accepted =
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml";
    if (t.type->builtin) accepted += ", application/strategic-merge-patch+json";
    return error_response(errors::unsupported_media_type(
        "the body of the request was in an unknown format - accepted media types include: " +
        accepted));
  }
  Collection* c = store_.find(t.type->storage_key());
  ObjectPtr old = c ? c->get(StoredObject::make_key(t.ns, t.name)) : nullptr;
  if (!old) return error_response(errors::not_found(t.type->group_resource(), t.name));
  boost::system::error_code ec;
  json::value patch = json::parse(req.body, ec);
  if (ec)
    return error_response(
        errors::bad_request("error decoding patch: invalid JSON: " + ec.message()));
  json::value current = old->parse();
  Result<json::value> patched = kind == merge ? apply_merge_patch(std::move(current), patch)
                                : kind == json_patch
                                    ? apply_json_patch(std::move(current), patch)
                                    : apply_strategic_merge_patch(std::move(current), patch);
  if (!patched) {
    ApiError e;
    e.code = 422;
    e.reason = "Invalid";
    e.message = patched.error().message;
    return error_response(e);
  }
  if (!patched->is_object()) {
    return error_response(errors::bad_request("the patched object is not a JSON object"));
  }
  auto& obj = patched->as_object();
  auto& md = metadata_of(obj);
  if (str_field(md, "name") != t.name ||
      (t.type->namespaced && str_field(md, "namespace") != t.ns)) {
    return error_response(
        errors::bad_request("the name or namespace of the object cannot be changed by a patch"));
  }
  if (faults_->take_conflict(t.type->resource, t.ns, t.name) ||
      faults_->take_conflict(t.type->storage_key(), t.ns, t.name)) {
    return error_response(errors::conflict_modified(t.type->group_resource(), t.name));
  }
  const std::string rv = str_field(md, "resourceVersion");
  if (!rv.empty() && rv != std::to_string(old->rv())) {
    return error_response(errors::conflict_modified(t.type->group_resource(), t.name));
  }
  if (str_field(obj, "kind") != t.type->kind ||
      str_field(obj, "apiVersion") != t.type->api_version()) {
    if (!t.type->builtin && str_field(obj, "kind") != t.type->kind) {
      return error_response(
          errors::bad_request("the kind of the object cannot be changed by a patch"));
    }
  }
  WriteContext ctx;
  ctx.dry_run = t.param("dryRun") == "All";
  ctx.user_agent = req.user_agent;
  std::vector<std::string> warnings;
  ctx.warnings = &warnings;
  ctx.field_validation =
      t.has("fieldValidation") ? std::string(t.param("fieldValidation")) : "Warn";
  auto so = update_in(t.type, *c, old, std::move(obj), t.subresource == "status", ctx);
  if (!so) return error_response(so.error());
  Response r = json_response(200, (*so)->api_version() == t.type->api_version()
                                      ? std::string((*so)->json())
                                      : (*so)->with_api_version(t.type->api_version()));
  for (const auto& w : warnings) r.headers.emplace_back("Warning", "299 - " + errors::quote(w));
  return r;
}

// ---------------------------------------------------------------------------------------
// Delete

namespace {

ApiResult<ApiServer::DeleteOptions> delete_options(const Request& req, const ApiServer::Target& t) {
  ApiServer::DeleteOptions o;
  o.propagation = std::string(t.param("propagationPolicy"));
  o.dry_run = t.param("dryRun") == "All";
  if (t.param("orphanDependents") == "true") o.propagation = "Orphan";
  if (!req.body.empty()) {
    boost::system::error_code ec;
    json::value v = json::parse(req.body, ec);
    if (ec || !v.is_object())
      return errors::bad_request("error decoding DeleteOptions: invalid JSON");
    const auto& b = v.as_object();
    if (auto p = str_field(b, "propagationPolicy"); !p.empty()) o.propagation = p;
    if (const auto* od = b.if_contains("orphanDependents"); od != nullptr && od->is_bool()) {
      if (od->as_bool()) o.propagation = "Orphan";
    }
    if (const auto* pre = b.if_contains("preconditions"); pre != nullptr && pre->is_object()) {
      o.precondition_uid = str_field(pre->as_object(), "uid");
      o.precondition_rv = str_field(pre->as_object(), "resourceVersion");
    }
    if (const auto* dr = b.if_contains("dryRun"); dr != nullptr && dr->is_array()) {
      for (const auto& d : dr->as_array()) {
        if (d.is_string() && d.as_string() == "All") o.dry_run = true;
      }
    }
  }
  if (!o.propagation.empty() && o.propagation != "Orphan" && o.propagation != "Background" &&
      o.propagation != "Foreground") {
    return errors::invalid("meta.k8s.io", "DeleteOptions", "",
                           {errors::field_not_supported(
                               "propagationPolicy", errors::quote(o.propagation),
                               {"\"Foreground\"", "\"Background\"", "\"Orphan\"", "\"nil\""})});
  }
  return o;
}

}  // namespace

ObjectPtr ApiServer::remove_now(const TypePtr& type, Collection& c, const ObjectPtr& old,
                                json::object last) {
  const bool is_crd =
      type->group == "apiextensions.k8s.io" && type->kind == "CustomResourceDefinition";
  if (is_crd) on_crd_removed(old);
  auto so = store_.remove(c, old, std::move(last));
  if (old->has_owner_refs()) {
    index_owners(type->storage_key(), old, nullptr);
    // An owner waiting for its dependents (foreground deletion) may now be done.
    json::object parsed = old->parse();
    if (const auto* refs = metadata_of(parsed).if_contains("ownerReferences");
        refs != nullptr && refs->is_array()) {
      for (const auto& r : refs->as_array()) {
        if (!r.is_object()) continue;
        const auto& ro = r.as_object();
        auto av = str_field(ro, "apiVersion");
        auto group = av.find('/') == std::string::npos ? std::string() : av.substr(0, av.find('/'));
        auto ot = registry_.find_group_kind(group, str_field(ro, "kind"));
        if (!ot) continue;
        gc_queue_.push_back(
            GcItem{GcItem::foreground, ot->storage_key(),
                   StoredObject::make_key(ot->namespaced ? old->ns() : "", str_field(ro, "name")),
                   str_field(ro, "uid")});
      }
    }
  }
  if (dependents_.contains(std::string(old->uid()))) {
    gc_queue_.push_back(GcItem{GcItem::owner_gone, "", "", std::string(old->uid())});
  }
  if (type->namespaced) {
    const Collection* nsc = store_.find("namespaces");
    ObjectPtr nso = nsc != nullptr ? nsc->get(old->ns()) : nullptr;
    if (nso && nso->terminating()) {
      gc_queue_.push_back(GcItem{GcItem::namespace_cleanup, "", std::string(old->ns()), ""});
    }
  }
  return so;
}

ApiResult<ObjectPtr> ApiServer::delete_in(const TypePtr& type, Collection& c, const ObjectPtr& old,
                                          const DeleteOptions& opts) {
  const auto gr = type->group_resource();
  if (!opts.precondition_uid.empty() && opts.precondition_uid != old->uid()) {
    return errors::conflict(gr, old->name(),
                            "Precondition failed: UID in precondition: " + opts.precondition_uid +
                                ", UID in object meta: " + std::string(old->uid()));
  }
  if (!opts.precondition_rv.empty() && opts.precondition_rv != std::to_string(old->rv())) {
    return errors::conflict(
        gr, old->name(),
        "Precondition failed: ResourceVersion in precondition: " + opts.precondition_rv +
            ", ResourceVersion in object meta: " + std::to_string(old->rv()));
  }
  const bool is_ns = type->group.empty() && type->resource == "namespaces";
  if (is_ns &&
      (old->name() == "default" || old->name() == "kube-system" || old->name() == "kube-public")) {
    return errors::forbidden(gr, old->name(), "this namespace may not be deleted");
  }
  if (opts.dry_run) return old;
  json::object obj = old->parse();
  auto& md = metadata_of(obj);
  if (is_ns) {
    if (old->terminating()) return old;
    md["deletionTimestamp"] = now_rfc3339();
    md["deletionGracePeriodSeconds"] = 0;
    auto& st = obj["status"];
    if (!st.is_object()) st = json::object();
    st.as_object()["phase"] = "Terminating";
    auto so = store_.update(c, old, std::move(obj));
    gc_queue_.push_back(GcItem{GcItem::namespace_cleanup, "", std::string(old->name()), ""});
    return so;
  }
  auto finalizers = finalizers_of(md);
  const std::string policy = opts.propagation.empty() ? "Background" : opts.propagation;
  bool added = false;
  auto add = [&](std::string_view f) {
    if (std::find(finalizers.begin(), finalizers.end(), f) == finalizers.end()) {
      finalizers.emplace_back(f);
      added = true;
    }
  };
  if (policy == "Foreground") add(kForeground);
  if (policy == "Orphan") add(kOrphan);
  if (finalizers.empty()) return remove_now(type, c, old, std::move(obj));
  if (old->terminating() && !added) return old;
  if (!old->terminating()) {
    md["deletionTimestamp"] = now_rfc3339();
    md["deletionGracePeriodSeconds"] = 0;
  }
  set_finalizers(md, finalizers);
  auto so = store_.update(c, old, std::move(obj));
  const std::string uid(old->uid());
  if (policy == "Foreground") {
    gc_queue_.push_back(
        GcItem{GcItem::foreground, type->storage_key(), std::string(old->key()), uid});
  } else if (policy == "Orphan") {
    gc_queue_.push_back(GcItem{GcItem::orphan, type->storage_key(), std::string(old->key()), uid});
  }
  return so;
}

Response ApiServer::do_delete(const Request& req, Target& t) {
  auto opts = delete_options(req, t);
  if (!opts) return error_response(opts.error());
  Collection* c = store_.find(t.type->storage_key());
  ObjectPtr old = c ? c->get(StoredObject::make_key(t.ns, t.name)) : nullptr;
  if (!old) return error_response(errors::not_found(t.type->group_resource(), t.name));
  auto so = delete_in(t.type, *c, old, *opts);
  if (!so) return error_response(so.error());
  // Gone at once (no finalizers): kube-apiserver answers with a Success Status naming it;
  // an object that stays (being finalized) is returned as it now is.
  if (!opts->dry_run && !c->get(StoredObject::make_key(t.ns, t.name))) {
    json::object details{{"name", t.name}};
    if (!t.type->group.empty()) details["group"] = t.type->group;
    details["kind"] = t.type->resource;
    details["uid"] = std::string(old->uid());
    return json_response(200, json::serialize(json::object{{"kind", "Status"},
                                                           {"apiVersion", "v1"},
                                                           {"metadata", json::object()},
                                                           {"status", "Success"},
                                                           {"details", std::move(details)}}));
  }
  return json_response(200, (*so)->api_version() == t.type->api_version()
                                ? std::string((*so)->json())
                                : (*so)->with_api_version(t.type->api_version()));
}

Response ApiServer::do_delete_collection(const Request& req, Target& t) {
  auto opts = delete_options(req, t);
  if (!opts) return error_response(opts.error());
  Collection* c = store_.find(t.type->storage_key());
  if (c == nullptr) return error_response(errors::not_found(t.type->group_resource(), ""));
  k8s::LabelSelector labels;
  if (auto ls = t.param("labelSelector"); !ls.empty()) {
    auto sel = k8s::parse_label_selector_string(ls);
    if (!sel)
      return error_response(
          errors::bad_request("unable to parse requirement: " + sel.error().message));
    labels = std::move(*sel);
  }
  FieldSelector fields;
  if (auto fs = t.param("fieldSelector"); !fs.empty()) {
    auto sel = parse_field_selector(fs);
    if (!sel) return error_response(errors::bad_request(sel.error().message));
    fields = std::move(*sel);
  }
  std::vector<ObjectPtr> victims;
  const std::string prefix = t.type->namespaced && !t.ns.empty() ? t.ns + "/" : "";
  (void)c->scan(prefix, "", 0, store_.rv(), [&](const ObjectPtr& o) {
    if (!labels.matches_everything() && !labels.matches(StoredLabels(*o))) return true;
    if (!fields.empty() && !fields.matches([&](std::string_view f) { return field_value(*o, f); }))
      return true;
    victims.push_back(o);
    return true;
  });
  std::string body = R"({"kind":)" + json::serialize(json::value(t.type->list_kind())) +
                     R"(,"apiVersion":)" + json::serialize(json::value(t.type->api_version())) +
                     R"(,"metadata":{"resourceVersion":")";
  std::string items;
  for (const auto& v : victims) {
    ObjectPtr cur = c->get(v->key());
    if (!cur) continue;
    auto so = delete_in(t.type, *c, cur, *opts);
    if (!so) continue;
    if (!items.empty()) items += ',';
    items += (*so)->json();
  }
  body += std::to_string(store_.rv()) + R"("},"items":[)" + items + "]}";
  return json_response(200, std::move(body));
}

// ---------------------------------------------------------------------------------------
// CRDs

void ApiServer::on_crd_written(const ObjectPtr& crd) {
  json::object obj = crd->parse();
  auto read = read_crd(obj);
  if (!read.errors.empty()) return;
  TypePtr storage;
  for (const auto& t : read.types) {
    if (t->storage_version) storage = t;
  }
  registry_.set_crd_types(std::string(crd->name()), read.types);
  if (!storage && !read.types.empty()) storage = read.types.front();
  if (storage) store_.ensure(storage);
}

void ApiServer::on_crd_removed(const ObjectPtr& crd) {
  const std::string name(crd->name());
  std::string storage_key;
  for (const auto& t : registry_.all()) {
    if (t->crd_name == name) storage_key = t->storage_key();
  }
  if (!storage_key.empty()) {
    if (Collection* c = store_.find(storage_key)) {
      std::vector<ObjectPtr> all;
      (void)c->scan("", "", 0, store_.rv(), [&](const ObjectPtr& o) {
        all.push_back(o);
        return true;
      });
      for (const auto& o : all) {
        if (o->has_owner_refs()) index_owners(storage_key, o, nullptr);
        store_.remove(*c, o, o->parse());
        if (dependents_.contains(std::string(o->uid()))) {
          gc_queue_.push_back(GcItem{GcItem::owner_gone, "", "", std::string(o->uid())});
        }
      }
    }
    store_.drop(storage_key);
  }
  registry_.set_crd_types(name, {});
}

// ---------------------------------------------------------------------------------------
// Garbage collection

void ApiServer::index_owners(const std::string& storage_key, const ObjectPtr& before,
                             const ObjectPtr& after) {
  auto uids = [](const ObjectPtr& o) {
    std::vector<std::string> out;
    if (!o || !o->has_owner_refs()) return out;
    json::object parsed = o->parse();
    if (const auto* refs = metadata_of(parsed).if_contains("ownerReferences");
        refs != nullptr && refs->is_array()) {
      for (const auto& r : refs->as_array()) {
        if (r.is_object()) out.push_back(str_field(r.as_object(), "uid"));
      }
    }
    return out;
  };
  if (before) {
    for (const auto& u : uids(before)) {
      auto it = dependents_.find(u);
      if (it == dependents_.end()) continue;
      it->second.erase({storage_key, std::string(before->key())});
      if (it->second.empty()) dependents_.erase(it);
    }
  }
  if (after) {
    for (const auto& u : uids(after))
      dependents_[u].insert({storage_key, std::string(after->key())});
  }
}

bool ApiServer::owner_alive(const json::object& ref, std::string_view ns, bool& resolvable) const {
  const std::string av = str_field(ref, "apiVersion");
  const std::string group =
      av.find('/') == std::string::npos ? std::string() : av.substr(0, av.find('/'));
  auto type = registry_.find_group_kind(group, str_field(ref, "kind"));
  if (!type) {
    resolvable = false;
    return false;
  }
  resolvable = true;
  const Collection* c = store_.find(type->storage_key());
  if (c == nullptr) return false;
  ObjectPtr o = c->get(StoredObject::make_key(type->namespaced ? ns : "", str_field(ref, "name")));
  return o && o->uid() == str_field(ref, "uid");
}

void ApiServer::gc_dangling(const std::string& storage_key, const std::string& key) {
  Collection* c = store_.find(storage_key);
  if (c == nullptr) return;
  ObjectPtr obj = c->get(key);
  if (!obj || obj->terminating() || !obj->has_owner_refs()) return;
  json::object parsed = obj->parse();
  auto& md = metadata_of(parsed);
  const auto* refs = md.if_contains("ownerReferences");
  if (refs == nullptr || !refs->is_array()) return;
  json::array kept;
  int alive = 0;
  int unknown = 0;
  for (const auto& r : refs->as_array()) {
    if (!r.is_object()) continue;
    bool resolvable = true;
    if (owner_alive(r.as_object(), obj->ns(), resolvable)) {
      ++alive;
      kept.push_back(r);
    } else if (!resolvable) {
      ++unknown;
      kept.push_back(r);
    }
  }
  if (alive == 0 && unknown == 0) {
    (void)delete_in(c->type(), *c, obj, DeleteOptions{});
  } else if (kept.size() != refs->as_array().size()) {
    md["ownerReferences"] = std::move(kept);
    commit_update(c->type(), *c, obj, std::move(parsed));
  }
}

ObjectPtr ApiServer::remove_finalizer(const TypePtr& type, Collection& c, const ObjectPtr& obj,
                                      std::string_view finalizer) {
  json::object parsed = obj->parse();
  auto& md = metadata_of(parsed);
  auto f = finalizers_of(md);
  auto it = std::find(f.begin(), f.end(), finalizer);
  if (it == f.end()) return obj;
  f.erase(it);
  set_finalizers(md, f);
  md.erase("resourceVersion");
  return commit_update(type, c, obj, std::move(parsed));
}

void ApiServer::gc_orphan(const GcItem& item) {
  if (auto it = dependents_.find(item.uid); it != dependents_.end()) {
    const auto deps = it->second;
    for (const auto& [sk, key] : deps) {
      Collection* c = store_.find(sk);
      ObjectPtr d = c ? c->get(key) : nullptr;
      if (!d) continue;
      json::object parsed = d->parse();
      auto& md = metadata_of(parsed);
      json::array kept;
      for (const auto& r : md["ownerReferences"].as_array()) {
        if (!r.is_object() || str_field(r.as_object(), "uid") != item.uid) kept.push_back(r);
      }
      if (kept.empty()) {
        md.erase("ownerReferences");
      } else {
        md["ownerReferences"] = std::move(kept);
      }
      md.erase("resourceVersion");
      commit_update(c->type(), *c, d, std::move(parsed));
    }
  }
  Collection* c = store_.find(item.storage_key);
  ObjectPtr owner = c ? c->get(item.key) : nullptr;
  if (owner && owner->uid() == item.uid) remove_finalizer(c->type(), *c, owner, kOrphan);
}

void ApiServer::gc_foreground(const GcItem& item) {
  Collection* c = store_.find(item.storage_key);
  ObjectPtr owner = c ? c->get(item.key) : nullptr;
  if (!owner || owner->uid() != item.uid || !owner->terminating()) return;
  {
    json::object parsed = owner->parse();
    auto f = finalizers_of(metadata_of(parsed));
    if (std::find(f.begin(), f.end(), kForeground) == f.end()) return;
  }
  bool remaining = false;
  if (auto it = dependents_.find(item.uid); it != dependents_.end()) {
    const auto deps = it->second;
    for (const auto& [sk, key] : deps) {
      Collection* dc = store_.find(sk);
      ObjectPtr d = dc ? dc->get(key) : nullptr;
      if (!d) continue;
      if (!d->terminating()) {
        DeleteOptions o;
        o.propagation = "Foreground";
        (void)delete_in(dc->type(), *dc, d, o);
      }
      if (dc->get(key)) remaining = true;
    }
  }
  if (!remaining) {
    ObjectPtr cur = c->get(item.key);
    if (cur) remove_finalizer(c->type(), *c, cur, kForeground);
  }
}

void ApiServer::gc_namespace(const std::string& ns) {
  Collection* nsc = store_.find("namespaces");
  ObjectPtr nso = nsc ? nsc->get(ns) : nullptr;
  if (!nso || !nso->terminating()) return;
  bool remaining = false;
  std::vector<Collection*> cols;
  for (const auto& [k, c] : store_.collections()) {
    if (c->type()->namespaced) cols.push_back(c.get());
  }
  for (Collection* c : cols) {
    std::vector<ObjectPtr> objs;
    (void)c->scan(ns + "/", "", 0, store_.rv(), [&](const ObjectPtr& o) {
      objs.push_back(o);
      return true;
    });
    for (const auto& o : objs) {
      if (!o->terminating()) (void)delete_in(c->type(), *c, o, DeleteOptions{});
      if (c->get(o->key())) remaining = true;
    }
  }
  if (!remaining) {
    nso = nsc->get(ns);
    if (!nso) return;
    json::object last = nso->parse();
    if (auto* spec = last.if_contains("spec"); spec != nullptr && spec->is_object()) {
      spec->as_object()["finalizers"] = json::array();
    }
    remove_now(nsc->type(), *nsc, nso, std::move(last));
  }
}

void ApiServer::run_background() {
  // Bounded so that a bug can never spin the server forever.
  for (std::size_t steps = 0; !gc_queue_.empty() && steps < 1'000'000; ++steps) {
    GcItem item = std::move(gc_queue_.front());
    gc_queue_.pop_front();
    switch (item.kind) {
      case GcItem::dangling:
        gc_dangling(item.storage_key, item.key);
        break;
      case GcItem::owner_gone:
        if (auto it = dependents_.find(item.uid); it != dependents_.end()) {
          const auto deps = it->second;
          for (const auto& [sk, key] : deps) gc_dangling(sk, key);
        }
        break;
      case GcItem::orphan:
        gc_orphan(item);
        break;
      case GcItem::foreground:
        gc_foreground(item);
        break;
      case GcItem::namespace_cleanup:
        gc_namespace(item.key);
        break;
    }
  }
}

// TokenRequest (POST serviceaccounts/<name>/token): a bearer token for the account,
// accepted from then on. Real tokens are signed JWTs; clients treat them as opaque.
Response ApiServer::do_token_request(const Request& req, Target& t) {
  const Collection* c = store_.find(t.type->storage_key());
  const auto sa = c != nullptr ? c->get(StoredObject::make_key(t.ns, t.name)) : nullptr;
  if (!sa) return error_response(errors::not_found({"", t.type->resource}, t.name));
  std::int64_t expiration = 3600;
  if (!req.body.empty()) {
    boost::system::error_code ec;
    const json::value body = json::parse(req.body, ec);
    if (ec || !body.is_object()) {
      return error_response(errors::bad_request("the TokenRequest body is not a JSON object"));
    }
    if (const auto* spec = body.as_object().if_contains("spec"); spec && spec->is_object()) {
      if (const auto* e = spec->as_object().if_contains("expirationSeconds");
          e != nullptr && e->is_number()) {
        expiration = e->to_number<std::int64_t>();
      }
    }
  }
  if (expiration < 600) {
    return error_response(errors::invalid(
        "authentication.k8s.io", "TokenRequest", t.name,
        {errors::field_invalid("spec.expirationSeconds", std::to_string(expiration),
                               "may not specify a duration less than 10 minutes")}));
  }
  const std::string token = auth_.issue_service_account_token(t.ns, t.name, std::string(sa->uid()));
  const auto expires = options_.clock.wall() + std::chrono::seconds(expiration);
  json::object out{
      {"kind", "TokenRequest"},
      {"apiVersion", "authentication.k8s.io/v1"},
      {"metadata", json::object{{"creationTimestamp", nullptr}}},
      {"spec",
       json::object{{"audiences", json::array{"https://kubernetes.default.svc.cluster.local"}},
                    {"expirationSeconds", expiration},
                    {"boundObjectRef", nullptr}}},
      {"status", json::object{{"token", token}, {"expirationTimestamp", rfc3339(expires)}}}};
  return json_response(201, json::serialize(out));
}

}  // namespace aop::sim

// Built-in kinds: the defaults kube-apiserver fills in (so an operator that compares its
// desired objects with what the server returns sees the same fields it would see on a
// real cluster) and the validation rules operators most often trip over (selectors that
// do not match templates, immutable StatefulSet fields, immutable Secrets, ...).
// This is a subset of the real rules, chosen for the kinds this project writes.
#include <algorithm>
#include <regex>

#include <boost/json.hpp>

#include "k8s/endpoint_ip.hpp"
#include "k8s/label_selector.hpp"
#include "tools/kube-sim/api_internal.hpp"

namespace aop::sim::detail {

namespace json = boost::json;

namespace {

json::object& obj_at(json::object& o, std::string_view key) {
  auto& v = o[key];
  if (!v.is_object()) v = json::object();
  return v.as_object();
}

void set_default(json::object& o, std::string_view key, json::value v) {
  auto it = o.find(key);
  if (it == o.end() || it->value().is_null()) o[key] = std::move(v);
}

void default_probe(json::value& pv) {
  if (!pv.is_object()) return;
  auto& p = pv.as_object();
  set_default(p, "timeoutSeconds", 1);
  set_default(p, "periodSeconds", 10);
  set_default(p, "successThreshold", 1);
  set_default(p, "failureThreshold", 3);
  if (auto* h = p.if_contains("httpGet"); h != nullptr && h->is_object()) {
    set_default(h->as_object(), "scheme", "HTTP");
    set_default(h->as_object(), "path", "/");
  }
}

void default_container(json::value& cv) {
  if (!cv.is_object()) return;
  auto& c = cv.as_object();
  set_default(c, "terminationMessagePath", "/dev/termination-log");
  set_default(c, "terminationMessagePolicy", "File");
  if (!c.contains("imagePullPolicy")) {
    const std::string image = str_field(c, "image");
    const auto slash = image.rfind('/');
    const std::string last = slash == std::string::npos ? image : image.substr(slash + 1);
    const bool digest = image.find('@') != std::string::npos;
    const auto colon = last.find(':');
    const bool latest =
        !digest && (colon == std::string::npos || last.substr(colon + 1) == "latest");
    c["imagePullPolicy"] = latest ? "Always" : "IfNotPresent";
  }
  set_default(c, "resources", json::object());
  if (auto* ports = c.if_contains("ports"); ports != nullptr && ports->is_array()) {
    for (auto& p : ports->as_array()) {
      if (p.is_object()) set_default(p.as_object(), "protocol", "TCP");
    }
  }
  if (auto* env = c.if_contains("env"); env != nullptr && env->is_array()) {
    for (auto& e : env->as_array()) {
      if (!e.is_object()) continue;
      auto* vf = e.as_object().if_contains("valueFrom");
      if (vf == nullptr || !vf->is_object()) continue;
      if (auto* fr = vf->as_object().if_contains("fieldRef"); fr != nullptr && fr->is_object()) {
        set_default(fr->as_object(), "apiVersion", "v1");
      }
    }
  }
  for (const char* probe : {"livenessProbe", "readinessProbe", "startupProbe"}) {
    if (auto* p = c.if_contains(probe)) default_probe(*p);
  }
}

void default_pod_spec(json::object& spec, bool pod) {
  set_default(spec, "restartPolicy", "Always");
  set_default(spec, "terminationGracePeriodSeconds", 30);
  set_default(spec, "dnsPolicy", "ClusterFirst");
  set_default(spec, "securityContext", json::object());
  set_default(spec, "schedulerName", "default-scheduler");
  if (pod) {
    set_default(spec, "enableServiceLinks", true);
    set_default(spec, "preemptionPolicy", "PreemptLowerPriority");
    set_default(spec, "priority", 0);
  }
  for (const char* list : {"containers", "initContainers"}) {
    if (auto* cs = spec.if_contains(list); cs != nullptr && cs->is_array()) {
      for (auto& c : cs->as_array()) default_container(c);
    }
  }
  if (auto* vols = spec.if_contains("volumes"); vols != nullptr && vols->is_array()) {
    for (auto& v : vols->as_array()) {
      if (!v.is_object()) continue;
      for (const char* src : {"secret", "configMap"}) {
        if (auto* s = v.as_object().if_contains(src); s != nullptr && s->is_object()) {
          set_default(s->as_object(), "defaultMode", 420);
        }
      }
    }
  }
}

void default_template(json::object& spec) {
  if (auto* t = spec.if_contains("template"); t != nullptr && t->is_object()) {
    auto& tmpl = t->as_object();
    // A pod template's metadata always carries the zero creationTimestamp (null), as Go
    // encodes an unset metav1.Time.
    auto& md = obj_at(tmpl, "metadata");
    if (!md.contains("creationTimestamp")) md["creationTimestamp"] = nullptr;
    if (auto* ps = tmpl.if_contains("spec"); ps != nullptr && ps->is_object()) {
      default_pod_spec(ps->as_object(), false);
    }
  }
}

}  // namespace

void omit_empty_fields(const ResourceType& type, json::object& obj) {
  auto drop_empty = [](json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (v != nullptr && ((v->is_object() && v->get_object().empty()) ||
                         (v->is_array() && v->get_array().empty()) || v->is_null())) {
      o.erase(key);
    }
  };
  if (auto* md = obj.if_contains("metadata"); md != nullptr && md->is_object()) {
    for (const char* k : {"labels", "annotations", "finalizers", "ownerReferences"}) {
      drop_empty(md->get_object(), k);
    }
  }
  if (type.builtin && type.group.empty() && (type.kind == "ConfigMap" || type.kind == "Secret")) {
    for (const char* k : {"data", "binaryData"}) drop_empty(obj, k);
  }
}

void default_builtin(const ResourceType& type, json::object& obj, bool create) {
  if (!type.group.empty() && type.group != "apps") return;
  const std::string& kind = type.kind;
  if (kind == "Secret") {
    set_default(obj, "type", "Opaque");
    if (auto* sd = obj.if_contains("stringData"); sd != nullptr) {
      if (sd->is_object()) {
        auto& data = obj_at(obj, "data");
        for (const auto& [k, v] : sd->as_object()) {
          if (v.is_string()) data[k] = base64_encode(v.as_string(), false);
        }
      }
      obj.erase("stringData");
    }
    return;
  }
  if (kind == "Service") {
    auto& spec = obj_at(obj, "spec");
    set_default(spec, "type", "ClusterIP");
    const std::string stype = str_field(spec, "type");
    if (stype != "ExternalName") {
      set_default(spec, "sessionAffinity", "None");
      // A headless Service without a selector may get endpoints of either family: the API
      // server makes it dual-stack.
      const auto* selector = spec.if_contains("selector");
      const bool headless_unselected =
          str_field(spec, "clusterIP") == "None" &&
          (selector == nullptr || !selector->is_object() || selector->as_object().empty());
      if (headless_unselected) {
        set_default(spec, "ipFamilyPolicy", "RequireDualStack");
        set_default(spec, "ipFamilies", json::array{"IPv4", "IPv6"});
      }
      set_default(spec, "ipFamilies", json::array{"IPv4"});
      set_default(spec, "ipFamilyPolicy", "SingleStack");
      set_default(spec, "internalTrafficPolicy", "Cluster");
    }
    if (auto* ports = spec.if_contains("ports"); ports != nullptr && ports->is_array()) {
      for (auto& p : ports->as_array()) {
        if (!p.is_object()) continue;
        auto& po = p.as_object();
        set_default(po, "protocol", "TCP");
        if (!po.contains("targetPort") && po.contains("port")) po["targetPort"] = po["port"];
      }
    }
    if (create) obj["status"] = json::object{{"loadBalancer", json::object()}};
    return;
  }
  if (kind == "Endpoints") {
    if (auto* subsets = obj.if_contains("subsets"); subsets != nullptr && subsets->is_array()) {
      for (auto& ss : subsets->as_array()) {
        if (!ss.is_object()) continue;
        auto* ports = ss.as_object().if_contains("ports");
        if (ports == nullptr || !ports->is_array()) continue;
        for (auto& p : ports->as_array()) {
          if (p.is_object()) set_default(p.as_object(), "protocol", "TCP");
        }
      }
    }
    return;
  }
  if (kind == "Pod") {
    default_pod_spec(obj_at(obj, "spec"), true);
    if (create) obj["status"] = json::object{{"phase", "Pending"}, {"qosClass", "BestEffort"}};
    return;
  }
  if (kind == "Namespace") {
    if (create) {
      obj_at(obj, "spec")["finalizers"] = json::array{"kubernetes"};
      obj["status"] = json::object{{"phase", "Active"}};
    }
    auto& labels = obj_at(metadata_of(obj), "labels");
    labels["kubernetes.io/metadata.name"] = str_field(metadata_of(obj), "name");
    return;
  }
  if (kind == "Deployment") {
    auto& spec = obj_at(obj, "spec");
    set_default(spec, "replicas", 1);
    set_default(spec, "revisionHistoryLimit", 10);
    set_default(spec, "progressDeadlineSeconds", 600);
    auto& strategy = obj_at(spec, "strategy");
    set_default(strategy, "type", "RollingUpdate");
    if (str_field(strategy, "type") == "RollingUpdate") {
      auto& ru = obj_at(strategy, "rollingUpdate");
      set_default(ru, "maxUnavailable", "25%");
      set_default(ru, "maxSurge", "25%");
    }
    default_template(spec);
    if (create) obj["status"] = json::object();
    return;
  }
  if (kind == "StatefulSet") {
    auto& spec = obj_at(obj, "spec");
    set_default(spec, "replicas", 1);
    set_default(spec, "revisionHistoryLimit", 10);
    set_default(spec, "podManagementPolicy", "OrderedReady");
    auto& strategy = obj_at(spec, "updateStrategy");
    set_default(strategy, "type", "RollingUpdate");
    if (str_field(strategy, "type") == "RollingUpdate") {
      set_default(obj_at(strategy, "rollingUpdate"), "partition", 0);
    }
    auto& retention = obj_at(spec, "persistentVolumeClaimRetentionPolicy");
    set_default(retention, "whenDeleted", "Retain");
    set_default(retention, "whenScaled", "Retain");
    if (auto* vcts = spec.if_contains("volumeClaimTemplates");
        vcts != nullptr && vcts->is_array()) {
      for (auto& v : vcts->as_array()) {
        if (!v.is_object()) continue;
        auto& pvc = v.as_object();
        set_default(pvc, "apiVersion", "v1");
        set_default(pvc, "kind", "PersistentVolumeClaim");
        set_default(obj_at(pvc, "spec"), "volumeMode", "Filesystem");
        set_default(pvc, "status", json::object{{"phase", "Pending"}});
      }
    }
    default_template(spec);
    if (create) obj["status"] = json::object{{"replicas", 0}, {"availableReplicas", 0}};
    return;
  }
  if (kind == "DaemonSet") {
    auto& spec = obj_at(obj, "spec");
    set_default(spec, "revisionHistoryLimit", 10);
    auto& strategy = obj_at(spec, "updateStrategy");
    set_default(strategy, "type", "RollingUpdate");
    if (str_field(strategy, "type") == "RollingUpdate") {
      auto& ru = obj_at(strategy, "rollingUpdate");
      set_default(ru, "maxUnavailable", 1);
      set_default(ru, "maxSurge", 0);
    }
    default_template(spec);
    if (create) {
      obj["status"] = json::object{{"currentNumberScheduled", 0},
                                   {"desiredNumberScheduled", 0},
                                   {"numberMisscheduled", 0},
                                   {"numberReady", 0}};
    }
    return;
  }
}

std::string secret_decode_error(const json::object& obj) {
  const auto* data = obj.if_contains("data");
  if (data == nullptr || !data->is_object()) return {};
  for (const auto& [k, v] : data->as_object()) {
    if (!v.is_string()) {
      return "Secret in version \"v1\" cannot be handled as a Secret: json: cannot unmarshal " +
             std::string(v.is_number() ? "number" : "value") +
             " into Go struct field Secret.data of type []uint8";
    }
    if (auto r = base64_decode(v.as_string()); !r) {
      return "Secret in version \"v1\" cannot be handled as a Secret: " + r.error().message;
    }
  }
  return {};
}

namespace {

// Go's %#v of map[string]string, as used in selector/labels messages.
std::string go_map_repr(const json::value* v) {
  std::string out = "map[string]string{";
  if (v != nullptr && v->is_object()) {
    std::vector<std::pair<std::string, std::string>> kv;
    for (const auto& [k, val] : v->as_object()) {
      kv.emplace_back(k, val.is_string() ? std::string(val.as_string()) : json::serialize(val));
    }
    std::sort(kv.begin(), kv.end());
    for (std::size_t i = 0; i < kv.size(); ++i) {
      if (i > 0) out += ", ";
      out += errors::quote(kv[i].first) + ":" + errors::quote(kv[i].second);
    }
  }
  return out + "}";
}

const json::object* object_at(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_object() ? &v->as_object() : nullptr;
}

void validate_containers(const json::object& spec, const std::string& path,
                         std::vector<StatusCause>& out) {
  const auto* cs = spec.if_contains("containers");
  if (cs == nullptr || !cs->is_array() || cs->as_array().empty()) {
    out.push_back(errors::field_required(path + ".containers"));
    return;
  }
  for (const char* list : {"containers", "initContainers"}) {
    const auto* l = spec.if_contains(list);
    if (l == nullptr || !l->is_array()) continue;
    std::vector<std::string> names;
    const auto& arr = l->as_array();
    for (std::size_t i = 0; i < arr.size(); ++i) {
      const std::string cp = path + "." + list + "[" + std::to_string(i) + "]";
      if (!arr[i].is_object()) continue;
      const auto& c = arr[i].as_object();
      const std::string name = str_field(c, "name");
      if (name.empty()) {
        out.push_back(errors::field_required(cp + ".name"));
      } else if (auto msg = validate_name(NameRule::dns_label, name); !msg.empty()) {
        out.push_back(errors::field_invalid(cp + ".name", errors::quote(name), msg));
      } else if (std::find(names.begin(), names.end(), name) != names.end()) {
        out.push_back(errors::field_duplicate(cp + ".name", errors::quote(name)));
      }
      names.push_back(name);
      if (str_field(c, "image").empty()) out.push_back(errors::field_required(cp + ".image"));
    }
  }
}

void validate_workload(const ResourceType& type, const json::object& obj, const json::object* old,
                       std::vector<StatusCause>& out) {
  const auto* spec = object_at(obj, "spec");
  if (spec == nullptr) {
    out.push_back(errors::field_required("spec"));
    return;
  }
  const auto* sel = spec->if_contains("selector");
  if (sel == nullptr || sel->is_null()) {
    out.push_back(errors::field_required("spec.selector"));
  } else {
    auto parsed = k8s::parse_label_selector(*sel);
    if (!parsed) {
      out.push_back(errors::field_invalid("spec.selector", "\"" + json::serialize(*sel) + "\"",
                                          parsed.error().message));
    } else if (parsed->matches_everything()) {
      out.push_back(errors::field_invalid("spec.selector", "\"" + json::serialize(*sel) + "\"",
                                          "empty selector is invalid for deployment"));
    } else {
      const json::value* labels = nullptr;
      if (const auto* tmpl = object_at(*spec, "template")) {
        if (const auto* md = object_at(*tmpl, "metadata")) labels = md->if_contains("labels");
      }
      const json::object* lo =
          labels != nullptr && labels->is_object() ? &labels->as_object() : nullptr;
      if (!parsed->matches(k8s::JsonLabels(lo))) {
        out.push_back(errors::field_invalid("spec.template.metadata.labels", go_map_repr(labels),
                                            "`selector` does not match template `labels`"));
      }
    }
  }
  const auto* tmpl = object_at(*spec, "template");
  const auto* pspec = tmpl != nullptr ? object_at(*tmpl, "spec") : nullptr;
  if (pspec == nullptr) {
    out.push_back(errors::field_required("spec.template.spec.containers"));
  } else {
    validate_containers(*pspec, "spec.template.spec", out);
  }
  if (type.kind == "Deployment" || type.kind == "StatefulSet") {
    if (const auto* r = spec->if_contains("replicas");
        r != nullptr && r->is_number() && r->to_number<double>() < 0) {
      out.push_back(errors::field_invalid("spec.replicas", json::serialize(*r),
                                          "must be greater than or equal to 0"));
    }
  }
  if (old == nullptr) return;
  const auto* old_spec = object_at(*old, "spec");
  if (old_spec == nullptr) return;
  if (type.kind == "StatefulSet") {
    // Only these spec fields may change after creation.
    static const std::vector<std::string> kMutable = {"replicas",
                                                      "ordinals",
                                                      "template",
                                                      "updateStrategy",
                                                      "persistentVolumeClaimRetentionPolicy",
                                                      "minReadySeconds"};
    json::object a = *spec;
    json::object b = *old_spec;
    for (const auto& k : kMutable) {
      a.erase(k);
      b.erase(k);
    }
    if (a != b) {
      out.push_back(errors::field_forbidden(
          "spec",
          "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
          "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are "
          "forbidden"));
    }
  } else {
    const auto* a = spec->if_contains("selector");
    const auto* b = old_spec->if_contains("selector");
    if (a != nullptr && b != nullptr && *a != *b) {
      out.push_back(errors::field_invalid("spec.selector", "\"" + json::serialize(*a) + "\"",
                                          "field is immutable"));
    }
  }
}

// core/v1 Endpoints: each subset lists some address, each address is an IP the API
// server accepts (k8s/endpoint_ip.hpp), each port is named when there are several, has
// a number in range and a supported protocol.
void validate_endpoints(const json::object& obj, std::vector<StatusCause>& out) {
  const auto* subsets = obj.if_contains("subsets");
  if (subsets == nullptr || !subsets->is_array()) return;
  const auto& arr = subsets->as_array();
  for (std::size_t i = 0; i < arr.size(); ++i) {
    if (!arr[i].is_object()) continue;
    const auto& ss = arr[i].as_object();
    const std::string at = "subsets[" + std::to_string(i) + "]";
    std::size_t addresses = 0;
    for (const char* list : {"addresses", "notReadyAddresses"}) {
      const auto* a = ss.if_contains(list);
      if (a == nullptr || !a->is_array()) continue;
      addresses += a->as_array().size();
      for (std::size_t j = 0; j < a->as_array().size(); ++j) {
        const auto& addr = a->as_array()[j];
        const std::string ip = addr.is_object() ? str_field(addr.as_object(), "ip") : "";
        const std::string field = at + "." + list + "[" + std::to_string(j) + "].ip";
        const auto problem = k8s::endpoint_ip_problem(ip);
        if (!problem) continue;
        if (*problem == "must be a valid IP address") {
          // kube-apiserver checks the syntax twice and reports both.
          out.push_back(errors::field_invalid(
              field, errors::quote(ip),
              "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"));
        }
        out.push_back(errors::field_invalid(field, errors::quote(ip), *problem));
      }
    }
    if (addresses == 0) {
      out.push_back(errors::field_required(at, "must specify `addresses` or `notReadyAddresses`"));
    }
    const auto* ports = ss.if_contains("ports");
    if (ports == nullptr || !ports->is_array()) continue;
    const auto& ps = ports->as_array();
    for (std::size_t j = 0; j < ps.size(); ++j) {
      if (!ps[j].is_object()) continue;
      const auto& p = ps[j].as_object();
      const std::string pat = at + ".ports[" + std::to_string(j) + "]";
      const std::string name = str_field(p, "name");
      if (name.empty() && ps.size() > 1) {
        out.push_back(errors::field_required(pat + ".name"));
      } else if (!name.empty()) {
        if (auto msg = validate_name(NameRule::dns_label, name); !msg.empty()) {
          out.push_back(errors::field_invalid(pat + ".name", errors::quote(name), msg));
        }
      }
      const auto* port = p.if_contains("port");
      const double n = port != nullptr && port->is_number() ? port->to_number<double>() : 0;
      if (n < 1 || n > 65535) {
        out.push_back(errors::field_invalid(pat + ".port",
                                            port != nullptr ? json::serialize(*port) : "0",
                                            "must be between 1 and 65535, inclusive"));
      }
      const std::string protocol = str_field(p, "protocol");
      if (protocol != "TCP" && protocol != "UDP" && protocol != "SCTP") {
        out.push_back(errors::field_not_supported(pat + ".protocol", errors::quote(protocol),
                                                  {"\"SCTP\"", "\"TCP\"", "\"UDP\""}));
      }
    }
  }
}

}  // namespace

void stamp_daemonset_template_generation(json::object& obj, const json::object* old) {
  constexpr std::string_view kKey = "deprecated.daemonset.template.generation";
  std::int64_t generation = 1;
  if (old != nullptr) {
    const json::object* old_md = object_at(*old, "metadata");
    const json::object* old_annotations =
        old_md != nullptr ? object_at(*old_md, "annotations") : nullptr;
    const auto* v = old_annotations != nullptr ? old_annotations->if_contains(kKey) : nullptr;
    if (v != nullptr && v->is_string()) {
      try {
        generation = std::stoll(std::string(v->get_string()));
      } catch (const std::exception&) {
        generation = 1;
      }
    }
    const json::object* spec = object_at(obj, "spec");
    const json::object* old_spec = object_at(*old, "spec");
    const auto* tmpl = spec != nullptr ? spec->if_contains("template") : nullptr;
    const auto* old_tmpl = old_spec != nullptr ? old_spec->if_contains("template") : nullptr;
    const bool changed = (tmpl == nullptr) != (old_tmpl == nullptr) ||
                         (tmpl != nullptr && old_tmpl != nullptr && *tmpl != *old_tmpl);
    if (changed) ++generation;
  }
  obj_at(metadata_of(obj), "annotations")[kKey] = std::to_string(generation);
}

std::vector<StatusCause> validate_builtin(const ResourceType& type, const json::object& obj,
                                          const json::object* old) {
  std::vector<StatusCause> out;
  if (!type.builtin) return out;
  const std::string& kind = type.kind;
  if ((kind == "ConfigMap" || kind == "Secret") && type.group.empty()) {
    static const std::regex kKey("^[-._a-zA-Z0-9]+$");
    for (const char* field : {"data", "binaryData"}) {
      const auto* d = obj.if_contains(field);
      if (d == nullptr || !d->is_object()) continue;
      for (const auto& [k, v] : d->as_object()) {
        const std::string key(k);
        if (key.size() > 253 || !std::regex_match(key, kKey)) {
          out.push_back(errors::field_invalid(
              std::string(field) + "[" + key + "]", errors::quote(key),
              "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
              "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
              "'[-._a-zA-Z0-9]+')"));
        }
      }
    }
    if (old != nullptr) {
      const auto* imm = old->if_contains("immutable");
      if (imm != nullptr && imm->is_bool() && imm->as_bool()) {
        for (const char* field : {"data", "binaryData"}) {
          const auto* a = obj.if_contains(field);
          const auto* b = old->if_contains(field);
          const bool same =
              (a == nullptr && b == nullptr) || (a != nullptr && b != nullptr && *a == *b);
          if (!same) {
            out.push_back(
                errors::field_forbidden(field, "field is immutable when `immutable` is set"));
          }
        }
        const auto* now = obj.if_contains("immutable");
        if (now == nullptr || !now->is_bool() || !now->as_bool()) {
          out.push_back(
              errors::field_forbidden("immutable", "field is immutable when `immutable` is set"));
        }
      }
    }
    if (kind == "Secret" && old != nullptr && str_field(obj, "type") != str_field(*old, "type")) {
      out.push_back(errors::field_invalid("type", errors::quote(str_field(obj, "type")),
                                          "field is immutable"));
    }
    return out;
  }
  if (type.group == "apps") {
    validate_workload(type, obj, old, out);
    return out;
  }
  if (kind == "Endpoints" && type.group.empty()) {
    validate_endpoints(obj, out);
    return out;
  }
  if (kind == "Pod" && type.group.empty()) {
    const auto* spec = object_at(obj, "spec");
    if (spec == nullptr) {
      out.push_back(errors::field_required("spec.containers"));
    } else {
      validate_containers(*spec, "spec", out);
    }
    return out;
  }
  if (kind == "Service" && type.group.empty()) {
    const auto* spec = object_at(obj, "spec");
    if (spec == nullptr) return out;
    const std::string stype = str_field(*spec, "type");
    const std::string cip = str_field(*spec, "clusterIP");
    const auto* ports = spec->if_contains("ports");
    if (stype != "ExternalName" && cip != "None" &&
        (ports == nullptr || !ports->is_array() || ports->as_array().empty())) {
      out.push_back(errors::field_required("spec.ports"));
    }
    if (ports != nullptr && ports->is_array()) {
      const auto& arr = ports->as_array();
      for (std::size_t i = 0; i < arr.size(); ++i) {
        if (!arr[i].is_object()) continue;
        const auto* p = arr[i].as_object().if_contains("port");
        if (p == nullptr || !p->is_number() || p->to_number<double>() < 1 ||
            p->to_number<double>() > 65535) {
          out.push_back(errors::field_invalid("spec.ports[" + std::to_string(i) + "].port",
                                              p != nullptr ? json::serialize(*p) : "0",
                                              "must be between 1 and 65535, inclusive"));
        }
        if (arr.size() > 1 && str_field(arr[i].as_object(), "name").empty()) {
          out.push_back(errors::field_required("spec.ports[" + std::to_string(i) + "].name"));
        }
      }
    }
    if (old != nullptr) {
      if (const auto* os = object_at(*old, "spec")) {
        const std::string old_ip = str_field(*os, "clusterIP");
        if (!old_ip.empty() && !cip.empty() && old_ip != cip) {
          out.push_back(errors::field_invalid("spec.clusterIPs[0]",
                                              "[]string{" + errors::quote(cip) + "}",
                                              "may not change once set"));
        }
      }
    }
    return out;
  }
  return out;
}

}  // namespace aop::sim::detail

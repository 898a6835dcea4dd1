// Secret/ConfigMap references ("assets"): collection with upstream's emptiness rules,
// namespace attribution, the resolve-assets stage (pipeline.hpp) and the assets Secret's
// data.
//
// Upstream collects by reflection over the Go structs, so a selector held by value is
// seen only when both its name and key are set, while one held by pointer (or as a list
// element) is seen whenever present. The walk below reproduces that per field.
#include <optional>
#include <set>
#include <tuple>

#include "reconcile/agent/pipeline.hpp"
#include "reconcile/agent/sanitize.hpp"

namespace aop::agent {
namespace {

// A field path, written out only when a reference is found there: most of the blocks a
// walk visits hold none, and building every path cost more than the rest of the walk.
class Path {
 public:
  Path(const char* base) : base_(base) {}  // NOLINT(google-explicit-constructor)
  Path(const Path& parent, std::string_view member) : parent_(&parent), part_(member) {}
  Path(const Path& parent, std::size_t index) : parent_(&parent), index_(index) {}

  std::string str() const {
    std::string out;
    append_to(out);
    return out;
  }

 private:
  void append_to(std::string& out) const {
    if (parent_ == nullptr) {
      out += base_;
      return;
    }
    parent_->append_to(out);
    if (index_) {
      out += '[';
      out += std::to_string(*index_);
      out += ']';
    } else {
      out += part_;
    }
  }

  const Path* parent_ = nullptr;
  std::string_view base_;
  std::string_view part_;
  std::optional<std::size_t> index_;
};

class Collector {
 public:
  Collector(std::vector<AssetRef>& out, bool every_occurrence)
      : out_(out), every_occurrence_(every_occurrence) {}

  void owner(Kind kind, const ObjectMeta& m) {
    kind_ = kind;
    owner_ = {m.ns, m.name};
  }

  // Pointer-held selector: collected whenever present.
  void ptr(AssetKind kind, const std::optional<SecretKeySelector>& sel, const Path& field) {
    if (sel) add(kind, *sel, field);
  }
  // Value-held selector: collected only when name and key are both set.
  void val(const SecretKeySelector& sel, const Path& field) {
    if (!sel.name.empty() && !sel.key.empty()) add(AssetKind::secret, sel, field);
  }
  void list_elem(AssetKind kind, const SecretKeySelector& sel, const Path& field) {
    add(kind, sel, field);
  }

  void soc(const SecretOrConfigMap& s, const Path& field) {
    ptr(AssetKind::secret, s.secret, {field, ".secret"});
    ptr(AssetKind::config_map, s.config_map, {field, ".configMap"});
  }
  void tls(const std::optional<TLSConfig>& t, const Path& field) {
    if (!t) return;
    soc(t->ca, {field, ".ca"});
    soc(t->cert, {field, ".cert"});
    ptr(AssetKind::secret, t->key_secret, {field, ".keySecret"});
  }
  void basic_auth(const std::optional<BasicAuth>& b, const Path& field) {
    if (!b) return;
    val(b->username, {field, ".username"});
    val(b->password, {field, ".password"});
  }
  void oauth2(const std::optional<OAuth2>& o, const Path& field) {
    if (!o) return;
    soc(o->client_id, {field, ".clientId"});
    val(o->client_secret, {field, ".clientSecret"});
  }
  void authorization(const std::optional<Authorization>& a, const Path& field) {
    if (a) ptr(AssetKind::secret, a->credentials, {field, ".credentials"});
  }
  void remote_writes(const std::vector<RemoteWriteSpec>& list, const Path& field) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto& rw = list[i];
      const Path at(field, i);
      basic_auth(rw.basic_auth, {at, ".basicAuth"});
      oauth2(rw.oauth2, {at, ".oauth2"});
      if (rw.sigv4) {
        ptr(AssetKind::secret, rw.sigv4->access_key, {at, ".sigv4.accessKey"});
        ptr(AssetKind::secret, rw.sigv4->secret_key, {at, ".sigv4.secretKey"});
      }
      tls(rw.tls_config, {at, ".tlsConfig"});
    }
  }
  void logs_clients(const std::vector<LogsClientSpec>& list, const Path& field) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto& c = list[i];
      const Path at(field, i);
      basic_auth(c.basic_auth, {at, ".basicAuth"});
      oauth2(c.oauth2, {at, ".oauth2"});
      tls(c.tls_config, {at, ".tlsConfig"});
    }
  }
  void endpoints(const std::vector<Endpoint>& list, const Path& field) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto& e = list[i];
      const Path at(field, i);
      tls(e.tls_config, {at, ".tlsConfig"});
      val(e.bearer_token_secret, {at, ".bearerTokenSecret"});
      basic_auth(e.basic_auth, {at, ".basicAuth"});
      oauth2(e.oauth2, {at, ".oauth2"});
      authorization(e.authorization, {at, ".authorization"});
    }
  }
  // `env[].valueFrom.secretKeyRef/configMapKeyRef` of verbatim containers (pointers).
  void containers(const boost::json::array& list, const Path& field) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_object()) continue;
      const auto* env = list[i].get_object().if_contains("env");
      if (env == nullptr || !env->is_array()) continue;
      const auto& envs = env->get_array();
      const Path container(field, i);
      const Path env_field(container, ".env");
      for (std::size_t k = 0; k < envs.size(); ++k) {
        if (!envs[k].is_object()) continue;
        const auto* from = envs[k].get_object().if_contains("valueFrom");
        if (from == nullptr || !from->is_object()) continue;
        const Path item(env_field, k);
        const Path at(item, ".valueFrom");
        for (const auto& [key, kind, part] :
             {std::tuple{"secretKeyRef", AssetKind::secret, ".secretKeyRef"},
              std::tuple{"configMapKeyRef", AssetKind::config_map, ".configMapKeyRef"}}) {
          const auto* ref = from->get_object().if_contains(key);
          if (ref == nullptr || !ref->is_object()) continue;
          SecretKeySelector sel;
          const auto& r = ref->get_object();
          if (const auto* n = r.if_contains("name"); n != nullptr && n->is_string()) {
            sel.name = std::string(n->get_string());
          }
          if (const auto* k2 = r.if_contains("key"); k2 != nullptr && k2->is_string()) {
            sel.key = std::string(k2->get_string());
          }
          add(kind, sel, {at, part});
        }
      }
    }
  }

 private:
  void add(AssetKind kind, const SecretKeySelector& sel, const Path& field) {
    AssetRef ref{kind, owner_.ns, sel.name, sel.key, kind_, owner_, {}};
    if (every_occurrence_ || seen_.insert(ref.asset_key()).second) {
      ref.field = field.str();
      out_.push_back(std::move(ref));
    }
  }

  std::vector<AssetRef>& out_;
  bool every_occurrence_;
  std::set<std::string> seen_;
  Kind kind_ = Kind::grafana_agent;
  k8s::ObjectKey owner_;
};

}  // namespace

std::string AssetRef::asset_key() const {
  return (kind == AssetKind::secret ? "/secrets/" : "/configMaps/") + ns + "/" + name + "/" + key;
}

std::string secret_asset_key(std::string_view ns, const SecretKeySelector& sel) {
  return "/secrets/" + std::string(ns) + "/" + sel.name + "/" + sel.key;
}

std::string config_map_asset_key(std::string_view ns, const ConfigMapKeySelector& sel) {
  return "/configMaps/" + std::string(ns) + "/" + sel.name + "/" + sel.key;
}

std::vector<AssetRef> collect_asset_refs(const Hierarchy& h, bool every_occurrence) {
  std::vector<AssetRef> out;
  Collector c(out, every_occurrence);
  const auto& spec = h.agent.spec;
  c.owner(Kind::grafana_agent, h.agent.metadata);
  if (spec.api_server) {
    c.basic_auth(spec.api_server->basic_auth, "spec.apiServer.basicAuth");
    c.tls(spec.api_server->tls_config, "spec.apiServer.tlsConfig");
    c.authorization(spec.api_server->authorization, "spec.apiServer.authorization");
  }
  c.containers(spec.containers, "spec.containers");
  c.containers(spec.init_containers, "spec.initContainers");
  c.remote_writes(spec.metrics.remote_write, "spec.metrics.remoteWrite");
  c.logs_clients(spec.logs.clients, "spec.logs.clients");

  for (const auto& m : h.metrics) {
    c.owner(Kind::metrics_instance, m.instance.metadata);
    c.remote_writes(m.instance.spec.remote_write, "spec.remoteWrite");
    c.ptr(AssetKind::secret, m.instance.spec.additional_scrape_configs,
          "spec.additionalScrapeConfigs");
    for (const auto& sm : m.service_monitors) {
      c.owner(Kind::service_monitor, sm->metadata);
      c.endpoints(sm->spec.endpoints, "spec.endpoints");
    }
    for (const auto& pm : m.pod_monitors) {
      c.owner(Kind::pod_monitor, pm->metadata);
      c.endpoints(pm->spec.pod_metrics_endpoints, "spec.podMetricsEndpoints");
    }
    for (const auto& p : m.probes) {
      c.owner(Kind::probe, p->metadata);
      c.tls(p->spec.tls_config, "spec.tlsConfig");
      c.val(p->spec.bearer_token_secret, "spec.bearerTokenSecret");
      c.basic_auth(p->spec.basic_auth, "spec.basicAuth");
      c.oauth2(p->spec.oauth2, "spec.oauth2");
      c.authorization(p->spec.authorization, "spec.authorization");
    }
  }
  for (const auto& l : h.logs) {
    c.owner(Kind::logs_instance, l.instance.metadata);
    c.logs_clients(l.instance.spec.clients, "spec.clients");
    c.ptr(AssetKind::secret, l.instance.spec.additional_scrape_configs,
          "spec.additionalScrapeConfigs");
  }
  for (const auto& in : h.integrations) {
    c.owner(Kind::integration, in.metadata);
    const Path secrets("spec.secrets");
    for (std::size_t i = 0; i < in.spec.secrets.size(); ++i) {
      c.list_elem(AssetKind::secret, in.spec.secrets[i], {secrets, i});
    }
    const Path config_maps("spec.configMaps");
    for (std::size_t i = 0; i < in.spec.config_maps.size(); ++i) {
      c.list_elem(AssetKind::config_map, in.spec.config_maps[i], {config_maps, i});
    }
  }
  return out;
}

std::vector<runtime::ObjectDependency> asset_dependencies(const std::vector<AssetRef>& refs) {
  std::set<runtime::ObjectDependency> deps;
  for (const auto& ref : refs) {
    deps.insert(runtime::ObjectDependency{
        runtime::GroupKind::of(
            gvk(ref.kind == AssetKind::secret ? Kind::secret : Kind::config_map)),
        {ref.ns, ref.name}});
  }
  return {deps.begin(), deps.end()};
}

namespace {

Result<AssetStore> lookup_assets(const std::vector<AssetRef>& refs, const AssetSource& source) {
  AssetStore store;
  // One lookup per object, however many of its keys are referenced.
  std::map<std::pair<std::string, std::string>, std::optional<SecretData>> secrets;
  std::map<std::pair<std::string, std::string>, std::optional<ConfigMapData>> config_maps;
  for (const auto& ref : refs) {
    const auto id = std::pair{ref.ns, ref.name};
    const std::string where = " (referenced by " + std::string(kind_name(ref.owner_kind)) + " " +
                              ref.owner.str() + " at " + ref.field + ")";
    if (ref.kind == AssetKind::secret) {
      auto it = secrets.find(id);
      if (it == secrets.end()) {
        auto got = source.secret(ref.ns, ref.name);
        if (!got) {
          return make_error("reading Secret " + ref.ns + "/" + ref.name + where + ": " +
                            got.error().message);
        }
        it = secrets.emplace(id, std::move(*got)).first;
      }
      if (!it->second) continue;  // an absent object stores nothing, as upstream
      const auto value = it->second->data.find(ref.key);
      if (value == it->second->data.end()) {
        return make_error("no key " + ref.key + " in Secret " + ref.name + " (namespace " + ref.ns +
                          ")" + where);
      }
      store.values[ref.asset_key()] = value->second;
    } else {
      auto it = config_maps.find(id);
      if (it == config_maps.end()) {
        auto got = source.config_map(ref.ns, ref.name);
        if (!got) {
          return make_error("reading ConfigMap " + ref.ns + "/" + ref.name + where + ": " +
                            got.error().message);
        }
        it = config_maps.emplace(id, std::move(*got)).first;
      }
      if (!it->second) continue;
      if (const auto v = it->second->data.find(ref.key); v != it->second->data.end()) {
        store.values[ref.asset_key()] = v->second;
      } else if (const auto b = it->second->binary_data.find(ref.key);
                 b != it->second->binary_data.end()) {
        store.values[ref.asset_key()] = b->second;
      } else {
        return make_error("no key " + ref.key + " in ConfigMap " + ref.name + " (namespace " +
                          ref.ns + ")" + where);
      }
    }
  }
  return store;
}

}  // namespace

Outcome<AssetStore> resolve_assets(const Hierarchy& hierarchy, const AssetSource& source) {
  return resolve_assets(hierarchy, collect_asset_refs(hierarchy), source);
}

Outcome<AssetStore> resolve_assets(const Hierarchy& hierarchy, const std::vector<AssetRef>& refs,
                                   const AssetSource& source) {
  Outcome<AssetStore> out;
  auto store = lookup_assets(refs, source);
  if (!store) {
    out.failure = StageFailure{Stage::resolve_assets, runtime::Errc::asset_resolution_failed,
                               store.error().message};
    return out;
  }
  out.value = std::move(*store);
  (void)asset_secret_data(out.value, hierarchy.agent, &out.problems);
  return out;
}

std::map<std::string, std::string> asset_secret_data(const AssetStore& store,
                                                     const GrafanaAgent& agent,
                                                     std::vector<Problem>* problems) {
  std::map<std::string, std::string> data;
  std::map<std::string, std::string> origin;  // data key → asset key that set it
  for (const auto& [key, value] : store.values) {
    const std::string dk = sanitize_label_name(key);
    const auto prev = origin.find(dk);
    if (prev != origin.end() && problems != nullptr) {
      std::string message = "asset keys ";
      message += prev->second;
      message += " and ";
      message += key;
      message += " both map to data key ";
      message += dk;
      message += " of Secret ";
      message += agent.metadata.name;
      message += "-secrets; ";
      message += key;
      message += " is used (rename one of the referenced objects or keys)";
      problems->push_back(make_problem(Kind::grafana_agent,
                                       {agent.metadata.ns, agent.metadata.name}, "",
                                       std::move(message), Severity::warning));
    }
    origin[dk] = key;
    data[dk] = value;
  }
  return data;
}

}  // namespace aop::agent

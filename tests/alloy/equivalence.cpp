// Equivalence test support; see equivalence.hpp.
#include "tests/alloy/equivalence.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "reconcile/alloy/duration.hpp"

namespace aop::alloy::test {

using boost::json::object;
using boost::json::value;

Graph::Graph(const std::vector<check::SourceFile>& files, const std::string& ns,
             const std::string& name) {
  const auto violations = check::check_config(files, ns, name);
  EXPECT_TRUE(violations.empty()) << check::to_string(violations);
  files_.reserve(files.size());
  for (const auto& f : files) {
    std::vector<check::Violation> v;
    files_.push_back(check::parse_file(f, v));
    EXPECT_TRUE(v.empty()) << check::to_string(v);
  }
  for (const auto& f : files_) {
    for (const auto& b : f.blocks) {
      if (b.label) components_[b.name + "." + *b.label] = &b;
    }
  }
}

const check::Block* Graph::at(const std::string& reference) const {
  const auto last = reference.rfind('.');
  if (last == std::string::npos) return nullptr;
  const auto it = components_.find(reference.substr(0, last));
  return it == components_.end() ? nullptr : it->second;
}

const check::Block* Graph::component(std::string_view name, const std::string& label) const {
  const auto it = components_.find(std::string(name) + "." + label);
  return it == components_.end() ? nullptr : it->second;
}

std::vector<const check::Block*> Graph::all(std::string_view name) const {
  std::vector<const check::Block*> out;
  for (const auto& f : files_) {
    for (const auto& b : f.blocks) {
      if (b.name == name) out.push_back(&b);
    }
  }
  return out;
}

namespace {

void collect(const check::Value& v, std::vector<std::string>& out) {
  if (v.kind == check::Value::Kind::reference) out.push_back(v.text);
  for (const auto& i : v.items) collect(i, out);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

std::vector<std::string> references(const check::Value& v) {
  std::vector<std::string> out;
  collect(v, out);
  return out;
}

std::string text(const value& v) {
  if (v.is_string()) return std::string(v.get_string());
  return boost::json::serialize(v);
}

void expect_same_value(const value& want, const check::Value& got, const std::string& where) {
  using K = check::Value::Kind;
  if (want.is_string()) {
    EXPECT_EQ(got.kind, K::string) << where;
    EXPECT_EQ(got.text, want.get_string()) << where;
  } else if (want.is_bool()) {
    EXPECT_EQ(got.kind, K::boolean) << where;
    EXPECT_EQ(got.boolean, want.get_bool()) << where;
  } else if (want.is_number()) {
    // A number read by a string field (YAML 1.1 scalars of additional configs) keeps its
    // value.
    const double n = want.to_number<double>();
    if (got.kind == K::string) {
      EXPECT_EQ(std::strtod(got.text.c_str(), nullptr), n) << where << ": " << got.text;
    } else {
      EXPECT_EQ(got.kind, K::number) << where;
      EXPECT_EQ(got.number, n) << where;
    }
  } else if (want.is_array()) {
    ASSERT_EQ(got.kind, K::list) << where;
    const auto& a = want.get_array();
    ASSERT_EQ(got.items.size(), a.size()) << where;
    for (std::size_t i = 0; i < a.size(); ++i) {
      expect_same_value(a[i], got.items[i], where + "[" + std::to_string(i) + "]");
    }
  } else if (want.is_object()) {
    ASSERT_EQ(got.kind, K::object) << where;
    const auto& o = want.get_object();
    ASSERT_EQ(got.keys.size(), o.size()) << where;
    for (const auto& [k, v] : o) {
      const auto it = std::find(got.keys.begin(), got.keys.end(), std::string(k));
      ASSERT_NE(it, got.keys.end()) << where << ": " << k;
      expect_same_value(v, got.items[static_cast<std::size_t>(it - got.keys.begin())],
                        where + "." + std::string(k));
    }
  } else {
    ADD_FAILURE() << where << ": the static tree holds null";
  }
}

void expect_fields(const object& want, const check::Block& got, std::initializer_list<Key> keys,
                   const std::string& where, std::initializer_list<std::string_view> nested,
                   std::size_t extra) {
  std::size_t attributes = 0;
  for (const auto& [k, v] : want) {
    if (std::find(nested.begin(), nested.end(), k) != nested.end()) continue;
    const std::string_view name = k;
    const auto* key =
        std::find_if(keys.begin(), keys.end(), [&](const Key& x) { return x.from == name; });
    if (key == keys.end()) {
      ADD_FAILURE() << where << ": static key " << k << " is not in the mapping table";
      continue;
    }
    const check::Attribute* a = got.attribute(key->to);
    if (a == nullptr) {
      ADD_FAILURE() << where << ": " << k << " → " << key->to << " is missing";
      continue;
    }
    ++attributes;
    expect_same_value(v, a->value, where + "." + std::string(key->to));
  }
  EXPECT_EQ(got.attributes.size(), attributes + extra)
      << where << ": attributes the static input lacks";
}

namespace {

void expect_tls(const object& want, const check::Block& got, const std::string& where) {
  expect_fields(want, got,
                {{"ca", "ca_pem"},
                 {"ca_file", "ca_file"},
                 {"cert", "cert_pem"},
                 {"cert_file", "cert_file"},
                 {"key", "key_pem"},
                 {"key_file", "key_file"},
                 {"server_name", "server_name"},
                 {"insecure_skip_verify", "insecure_skip_verify"},
                 {"min_version", "min_version"}},
                where);
  EXPECT_TRUE(got.blocks.empty()) << where;
}

void expect_client_block(std::string_view name, const object& want, const check::Block& got,
                         const std::string& where) {
  if (name == "tls_config") {
    expect_tls(want, got, where);
  } else if (name == "basic_auth") {
    expect_fields(
        want, got,
        {{"username", "username"}, {"password", "password"}, {"password_file", "password_file"}},
        where);
  } else if (name == "authorization") {
    expect_fields(want, got,
                  {{"type", "type"},
                   {"credentials", "credentials"},
                   {"credentials_file", "credentials_file"}},
                  where);
  } else if (name == "sigv4") {
    expect_fields(want, got,
                  {{"region", "region"},
                   {"access_key", "access_key"},
                   {"secret_key", "secret_key"},
                   {"profile", "profile"},
                   {"role_arn", "role_arn"}},
                  where);
  } else if (name == "oauth2") {
    expect_fields(want, got,
                  {{"client_id", "client_id"},
                   {"client_secret", "client_secret"},
                   {"client_secret_file", "client_secret_file"},
                   {"scopes", "scopes"},
                   {"token_url", "token_url"},
                   {"endpoint_params", "endpoint_params"},
                   {"proxy_url", "proxy_url"}},
                  where, {"tls_config"});
    expect_client_blocks(want, got, {"tls_config"}, where);
  } else {
    ADD_FAILURE() << where << ": no mapping for client block " << name;
  }
}

}  // namespace

void expect_client_blocks(const object& want, const check::Block& got,
                          std::initializer_list<std::string_view> names, const std::string& where) {
  for (const auto name : names) {
    const auto children = got.children(name);
    const value* w = want.if_contains(name);
    const std::string at = where + "." + std::string(name);
    if (w == nullptr) {
      EXPECT_TRUE(children.empty()) << at << ": not in the static input";
      continue;
    }
    ASSERT_EQ(children.size(), 1U) << at;
    ASSERT_TRUE(w->is_object()) << at;
    expect_client_block(name, w->get_object(), *children[0], at);
  }
}

void expect_same_rule(const object& want, const check::Block& got, const std::string& where) {
  for (const auto& [k, v] : want) {
    const check::Attribute* a = got.attribute(k);
    ASSERT_NE(a, nullptr) << where << ": " << k;
    if (k == "action") {
      EXPECT_EQ(a->value.text, lower(text(v))) << where;
    } else {
      expect_same_value(v, a->value, where + "." + std::string(k));
    }
  }
  EXPECT_EQ(got.attributes.size(), want.size()) << where;
  EXPECT_TRUE(got.blocks.empty()) << where;
}

void expect_same_rules(const value* want, const std::vector<const check::Block*>& got,
                       const std::string& where) {
  const std::size_t n = want != nullptr ? want->get_array().size() : 0;
  ASSERT_EQ(got.size(), n) << where;
  for (std::size_t i = 0; i < n; ++i) {
    expect_same_rule(want->get_array()[i].get_object(), *got[i],
                     where + " rule " + std::to_string(i));
  }
}

void expect_same_discovery(const object& want, const check::Block& got, bool node_local,
                           const std::string& where) {
  ASSERT_EQ(got.name, "discovery.kubernetes") << where;
  expect_fields(want, got,
                {{"role", "role"},
                 {"api_server", "api_server"},
                 {"kubeconfig_file", "kubeconfig_file"},
                 {"bearer_token", "bearer_token"},
                 {"bearer_token_file", "bearer_token_file"},
                 {"proxy_url", "proxy_url"},
                 {"follow_redirects", "follow_redirects"},
                 {"enable_http2", "enable_http2"}},
                where,
                {"namespaces", "selectors", "attach_metadata", "basic_auth", "authorization",
                 "oauth2", "tls_config"});
  const auto namespaces = got.children("namespaces");
  if (const value* ns = want.if_contains("namespaces")) {
    ASSERT_EQ(namespaces.size(), 1U) << where;
    expect_fields(ns->get_object(), *namespaces[0],
                  {{"names", "names"}, {"own_namespace", "own_namespace"}}, where + ".namespaces");
  } else {
    EXPECT_TRUE(namespaces.empty()) << where;
  }
  const auto attach = got.children("attach_metadata");
  if (const value* am = want.if_contains("attach_metadata")) {
    ASSERT_EQ(attach.size(), 1U) << where;
    expect_fields(am->get_object(), *attach[0], {{"node", "node"}, {"namespace", "namespace"}},
                  where + ".attach_metadata");
  } else {
    EXPECT_TRUE(attach.empty()) << where;
  }
  const auto selectors = got.children("selectors");
  std::size_t static_selectors = 0;
  bool pod_selector = false;
  if (const value* sel = want.if_contains("selectors")) {
    const auto& a = sel->get_array();
    static_selectors = a.size();
    ASSERT_GE(selectors.size(), a.size()) << where;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const object& s = a[i].get_object();
      pod_selector = pod_selector || (s.contains("role") && text(s.at("role")) == "pod");
      expect_fields(s, *selectors[i], {{"role", "role"}, {"label", "label"}, {"field", "field"}},
                    where + ".selectors[" + std::to_string(i) + "]");
    }
  }
  // Logs discovery watches this node's pods only: promtail found no files for the pods of
  // other nodes anyway.
  const bool adds = node_local && text(want.at("role")) == "pod" && !pod_selector;
  ASSERT_EQ(selectors.size(), static_selectors + (adds ? 1 : 0)) << where;
  if (adds) {
    const check::Block& s = *selectors.back();
    ASSERT_EQ(s.attributes.size(), 2U) << where;
    EXPECT_EQ(s.attribute("role")->value.text, "pod") << where;
    const check::Value& field = s.attribute("field")->value;
    ASSERT_EQ(field.kind, check::Value::Kind::concat) << where;
    ASSERT_EQ(field.items.size(), 2U) << where;
    EXPECT_EQ(field.items[0].text, "spec.nodeName=") << where;
    EXPECT_EQ(field.items[1].kind, check::Value::Kind::call) << where;
    EXPECT_EQ(field.items[1].text, "sys.env") << where;
    ASSERT_EQ(field.items[1].items.size(), 1U) << where;
    EXPECT_EQ(field.items[1].items[0].text, "NODE_NAME") << where;
  }
  expect_client_blocks(want, got, {"basic_auth", "authorization", "oauth2", "tls_config"}, where);
}

std::size_t expect_same_targets(const object& job, const check::Value& targets, const Graph& g,
                                bool node_local, const std::string& where) {
  // The sources in static order: discovery entries first, then the inline list.
  std::vector<const check::Value*> sources;
  if (targets.kind == check::Value::Kind::call) {
    EXPECT_EQ(targets.text, "array.concat") << where;
    for (const auto& i : targets.items) sources.push_back(&i);
  } else {
    sources.push_back(&targets);
  }
  const value* sd = job.if_contains("kubernetes_sd_configs");
  const std::size_t sds = sd != nullptr ? sd->get_array().size() : 0;
  const value* sc = job.if_contains("static_configs");
  const bool inline_list = sc != nullptr || sds == 0;
  EXPECT_EQ(sources.size(), sds + (inline_list ? 1 : 0)) << where;
  if (sources.size() != sds + (inline_list ? 1 : 0)) return 0;
  for (std::size_t i = 0; i < sds; ++i) {
    const std::string at = where + ".kubernetes_sd_configs[" + std::to_string(i) + "]";
    EXPECT_EQ(sources[i]->kind, check::Value::Kind::reference) << at;
    const check::Block* d = g.at(sources[i]->text);
    if (d == nullptr) {
      ADD_FAILURE() << at << ": " << sources[i]->text << " is not declared";
      continue;
    }
    EXPECT_EQ(sources[i]->text.substr(sources[i]->text.rfind('.')), ".targets") << at;
    expect_same_discovery(sd->get_array()[i].get_object(), *d, node_local, at);
  }
  if (inline_list) {
    // One object per target: the group's labels, and its address as __address__.
    boost::json::array want;
    if (sc != nullptr) {
      for (const auto& group : sc->get_array()) {
        const object& go = group.get_object();
        const value* ts = go.if_contains("targets");
        if (ts == nullptr) continue;
        for (const auto& t : ts->get_array()) {
          object entry;
          if (const value* l = go.if_contains("labels")) {
            for (const auto& [k, v] : l->get_object()) entry[k] = v;
          }
          entry["__address__"] = t;
          want.push_back(std::move(entry));
        }
      }
    }
    expect_same_value(want, *sources.back(), where + ".static_configs");
  }
  return sources.size();
}

void expect_same_duration(const value& prometheus, const check::Value& go,
                          const std::string& where) {
  const auto ms = parse_prometheus_duration(text(prometheus));
  ASSERT_TRUE(ms.has_value()) << where << ": " << text(prometheus);
  ASSERT_EQ(go.kind, check::Value::Kind::string) << where;
  const auto ns = check::parse_go_duration(go.text);
  ASSERT_TRUE(ns.has_value()) << where << ": " << go.text;
  EXPECT_EQ(*ns, static_cast<double>(*ms) * 1e6)
      << where << ": " << text(prometheus) << " vs " << go.text;
}

std::size_t expect_same_endpoint(const object& want, const check::Block& got,
                                 const std::string& where) {
  EXPECT_EQ(got.name, "endpoint") << where;
  expect_fields(
      want, got,
      {{"url", "url"}, {"name", "name"}, {"headers", "headers"}, {"proxy_url", "proxy_url"}}, where,
      {"remote_timeout", "basic_auth", "authorization", "oauth2", "sigv4", "tls_config",
       "queue_config", "metadata_config", "write_relabel_configs"},
      want.contains("remote_timeout") ? 1 : 0);
  if (const value* t = want.if_contains("remote_timeout")) {
    const check::Attribute* a = got.attribute("remote_timeout");
    if (a == nullptr) {
      ADD_FAILURE() << where << ": remote_timeout is missing";
    } else {
      expect_same_duration(*t, a->value, where + ".remote_timeout");
    }
  }
  expect_client_blocks(want, got, {"basic_auth", "authorization", "oauth2", "sigv4", "tls_config"},
                       where);
  const auto queues = got.children("queue_config");
  if (const value* q = want.if_contains("queue_config")) {
    EXPECT_EQ(queues.size(), 1U) << where;
    if (queues.size() == 1) {
      const object& qo = q->get_object();
      const check::Block& qb = *queues[0];
      std::size_t attributes = 0;
      for (const auto& [k, v] : qo) {
        const std::string at = where + ".queue_config." + std::string(k);
        // No Alloy argument: retries of recoverable errors are unbounded there.
        if (k == "max_retries") continue;
        // The CRD's name and Prometheus' name of the same switch.
        const std::string_view to = k == "retry_on_rate_limit" ? "retry_on_http_429" : k;
        const check::Attribute* a = qb.attribute(to);
        if (a == nullptr) {
          ADD_FAILURE() << at << " is missing";
          continue;
        }
        ++attributes;
        if (k == "batch_send_deadline" || k == "min_backoff" || k == "max_backoff") {
          expect_same_duration(v, a->value, at);
        } else {
          expect_same_value(v, a->value, at);
        }
      }
      EXPECT_EQ(qb.attributes.size(), attributes) << where << ".queue_config";
    }
  } else {
    EXPECT_TRUE(queues.empty()) << where;
  }
  const auto metadata = got.children("metadata_config");
  if (const value* m = want.if_contains("metadata_config")) {
    EXPECT_EQ(metadata.size(), 1U) << where;
    if (metadata.size() == 1) {
      const object& mo = m->get_object();
      expect_fields(mo, *metadata[0], {{"send", "send"}}, where + ".metadata_config",
                    {"send_interval"}, mo.contains("send_interval") ? 1 : 0);
      if (const value* si = mo.if_contains("send_interval")) {
        if (const check::Attribute* a = metadata[0]->attribute("send_interval")) {
          expect_same_duration(*si, a->value, where + ".metadata_config.send_interval");
        }
      }
    }
  } else {
    EXPECT_TRUE(metadata.empty()) << where;
  }
  const value* rules = want.if_contains("write_relabel_configs");
  expect_same_rules(rules, got.children("write_relabel_config"), where + " write");
  return rules != nullptr ? rules->get_array().size() : 0;
}

}  // namespace aop::alloy::test

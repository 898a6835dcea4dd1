// The metrics fragments (fragments.hpp): a MetricsInstance's own fields with its
// remote_write, one scrape config per ServiceMonitor endpoint, PodMonitor endpoint and
// Probe, relabel rules in upstream's exact order, and the agent's metrics.global block.
#include "k8s/yaml.hpp"
#include "reconcile/agent/config_common.hpp"
#include "reconcile/agent/sanitize.hpp"

namespace aop::agent {
namespace detail {
namespace {

constexpr std::string_view kServiceLabel = "__meta_kubernetes_service_label_";
constexpr std::string_view kServiceLabelPresent = "__meta_kubernetes_service_labelpresent_";
constexpr std::string_view kIngressLabel = "__meta_kubernetes_ingress_label_";
constexpr std::string_view kIngressLabelPresent = "__meta_kubernetes_ingress_labelpresent_";

object job_name_rule() {
  return object({{"source_labels", array{"job"}}, {"target_label", "__tmp_prometheus_job_name"}});
}

object filter_running_rule() {
  return object({{"source_labels", array{"__meta_kubernetes_pod_phase"}},
                 {"regex", "(Failed|Succeeded)"},
                 {"action", "drop"}});
}

bool filter_running(const RenderContext& ctx, const Endpoint& e) {
  return e.filter_running.value_or(ctx.fixed());
}

// The endpoint's port filter (port name, else target port).
void port_rule(const Endpoint& e, std::string_view port_label, array& out) {
  if (!e.port.empty()) {
    out.emplace_back(
        object({{"source_labels", array{port_label}}, {"regex", e.port}, {"action", "keep"}}));
  } else if (e.target_port && e.target_port->is_string) {
    if (!e.target_port->string_value.empty()) {
      out.emplace_back(
          object({{"source_labels", array{"__meta_kubernetes_pod_container_port_name"}},
                  {"regex", e.target_port->string_value},
                  {"action", "keep"}}));
    }
  } else if (e.target_port && e.target_port->int_value != 0) {
    out.emplace_back(
        object({{"source_labels", array{"__meta_kubernetes_pod_container_port_number"}},
                {"regex", std::to_string(e.target_port->int_value)},
                {"action", "keep"}}));
  }
}

// An int-or-string port as upstream prints it.
std::string int_or_string(const std::optional<IntOrString>& p) {
  if (!p) return {};
  if (p->is_string) return p->string_value;
  if (p->int_value != 0) return std::to_string(p->int_value);
  return {};
}

void endpoint_label_rule(const Endpoint& e, array& out) {
  if (!e.port.empty()) {
    out.emplace_back(object({{"target_label", "endpoint"}, {"replacement", e.port}}));
  } else if (const auto tp = int_or_string(e.target_port); !tp.empty()) {
    out.emplace_back(object({{"target_label", "endpoint"}, {"replacement", tp}}));
  }
}

// The target metadata rules: namespace, service, pod, container.
void target_meta_rules(array& out) {
  out.emplace_back(object(
      {{"source_labels", array{"__meta_kubernetes_namespace"}}, {"target_label", "namespace"}}));
  out.emplace_back(object(
      {{"source_labels", array{"__meta_kubernetes_service_name"}}, {"target_label", "service"}}));
  out.emplace_back(
      object({{"source_labels", array{"__meta_kubernetes_pod_name"}}, {"target_label", "pod"}}));
  out.emplace_back(object({{"source_labels", array{"__meta_kubernetes_pod_container_name"}},
                           {"target_label", "container"}}));
}

void label_copy_rule(std::string_view prefix, const std::string& label, array& out) {
  out.emplace_back(
      object({{"source_labels", array{std::string(prefix) + sanitize_label_name(label)}},
              {"target_label", sanitize_label_name(label)},
              {"regex", "(.+)"},
              {"replacement", "$1"}}));
}

void enforced_namespace_rule(const std::string& label, const std::string& ns, array& out) {
  if (!label.empty()) out.emplace_back(object({{"target_label", label}, {"replacement", ns}}));
}

// The hashmod and keep rules that give each shard its part of the targets, hashed on
// `source` (the target address; a Probe's target is its `__param_target`).
void shard_rules(std::int64_t shards, array& out, std::string_view source = "__address__") {
  out.emplace_back(object({{"source_labels", array{value(source)}},
                           {"target_label", "__tmp_hash"},
                           {"modulus", static_cast<double>(shards)},
                           {"action", "hashmod"}}));
  out.emplace_back(
      object({{"source_labels", array{"__tmp_hash"}}, {"regex", "$(SHARD)"}, {"action", "keep"}}));
}

std::int64_t shard_count(const GrafanaAgent& agent) {
  const auto s = agent.spec.metrics.shards.value_or(1);
  return s > 1 ? s : 1;
}

// A sample or target limit: upstream prefers the user's over the enforced one;
// Compat::fixed picks the lower of the two as documented upstream.
double limit(const RenderContext& ctx, std::uint64_t user,
             const std::optional<std::uint64_t>& enf) {
  if (!enf) return static_cast<double>(user);
  if (ctx.fixed() && (*enf == 0 || (user > 0 && user < *enf))) return static_cast<double>(user);
  return static_cast<double>(*enf);
}

void limits(const RenderContext& ctx, std::uint64_t sample_limit, std::uint64_t target_limit,
            object& o) {
  const auto& m = ctx.agent().spec.metrics;
  if (sample_limit > 0 || m.enforced_sample_limit) {
    o["sample_limit"] = limit(ctx, sample_limit, m.enforced_sample_limit);
  }
  if (target_limit > 0 || m.enforced_target_limit) {
    o["target_limit"] = limit(ctx, target_limit, m.enforced_target_limit);
  }
}

// Label limits: the Prometheus Operator renders them, upstream does not.
void label_limits(const RenderContext& ctx, const LabelLimits& l, object& o) {
  if (!ctx.fixed()) return;
  set_nz(o, "label_limit", static_cast<double>(l.label));
  set_nz(o, "label_name_length_limit", static_cast<double>(l.name_length));
  set_nz(o, "label_value_length_limit", static_cast<double>(l.value_length));
}

object authorization_block(RenderContext& ctx, std::string_view ns, const Authorization& a) {
  object o;
  set_ne(o, "type", a.type.empty() ? "Bearer" : a.type);
  if (a.credentials) o["credentials"] = ctx.secret_value(ns, a.credentials);
  return o;
}

void honor(const RenderContext& ctx, const Endpoint& e, object& o) {
  const auto& m = ctx.agent().spec.metrics;
  o["honor_labels"] = e.honor_labels && !m.override_honor_labels;
  if (e.honor_timestamps || m.override_honor_timestamps) {
    o["honor_timestamps"] = e.honor_timestamps.value_or(false) && !m.override_honor_timestamps;
  }
}

// Keys shared by ServiceMonitor and PodMonitor endpoints.
void endpoint_common(RenderContext& ctx, const std::string& mns, const Endpoint& e, object& o) {
  set_ne(o, "scrape_interval", e.interval);
  set_ne(o, "scrape_timeout", e.scrape_timeout);
  set_ne(o, "metrics_path", e.path);
  if (e.proxy_url) set_ne(o, "proxy_url", *e.proxy_url);
  set_ne(o, "scheme", e.scheme);
  if (e.params && !e.params->empty()) {
    object p;
    for (const auto& [k, v] : *e.params) p[k] = string_array(v);
    o["params"] = std::move(p);
  }
  if (e.enable_http2 && !*e.enable_http2) o["enable_http2"] = false;
  if (!e.bearer_token_secret.name.empty()) {
    o["bearer_token"] = ctx.secret_value(mns, e.bearer_token_secret);
  }
  if (e.basic_auth) {
    o["basic_auth"] = object{{"username", ctx.secret_value(mns, e.basic_auth->username)},
                             {"password", ctx.secret_value(mns, e.basic_auth->password)}};
  }
  if (ctx.fixed()) {
    if (e.authorization) o["authorization"] = authorization_block(ctx, mns, *e.authorization);
    if (e.oauth2) o["oauth2"] = oauth2_block(ctx, mns, *e.oauth2);
    if (e.follow_redirects) o["follow_redirects"] = *e.follow_redirects;
  }
}

void metric_relabels(const RenderContext& ctx, const Endpoint& e, object& o) {
  if (!e.metric_relabelings) return;
  const std::string& enforced = ctx.agent().spec.metrics.enforced_namespace_label;
  array a;
  for (const auto& r : *e.metric_relabelings) {
    if (!enforced.empty() && r.target_label == enforced) continue;
    a.emplace_back(relabel(r));
  }
  set_ne_list(o, "metric_relabel_configs", std::move(a));
}

// The scrape config of one ServiceMonitor endpoint, rules in upstream's order.
object service_monitor_config(RenderContext& ctx, const ServiceMonitor& sm, std::size_t i) {
  const auto& m = ctx.agent().spec.metrics;
  const auto& e = sm.spec.endpoints[i];
  const std::string& mns = sm.metadata.ns;
  object o;
  o["job_name"] = "serviceMonitor/" + mns + "/" + sm.metadata.name + "/" + std::to_string(i);
  honor(ctx, e, o);
  o["kubernetes_sd_configs"] = array{
      sd_config(ctx, "endpoints",
                sd_namespaces(sm.spec.namespace_selector, mns, m.ignore_namespace_selectors))};
  endpoint_common(ctx, mns, e, o);
  if (e.tls_config) o["tls_config"] = tls_full(ctx, mns, *e.tls_config);
  set_ne(o, "bearer_token_file", e.bearer_token_file);

  array r;
  r.emplace_back(job_name_rule());
  selector_rules(sm.spec.selector, kServiceLabel, kServiceLabelPresent, r);
  port_rule(e, "__meta_kubernetes_endpoint_port_name", r);
  for (const auto* kind : {"Node", "Pod"}) {
    r.emplace_back(
        object({{"source_labels", array{"__meta_kubernetes_endpoint_address_target_kind",
                                        "__meta_kubernetes_endpoint_address_target_name"}},
                {"separator", ";"},
                {"regex", std::string(kind) + ";(.*)"},
                {"replacement", "$1"},
                {"target_label", std::string_view(kind) == "Node" ? "node" : "pod"}}));
  }
  target_meta_rules(r);
  if (filter_running(ctx, e)) r.emplace_back(filter_running_rule());
  for (const auto& l : sm.spec.target_labels) label_copy_rule(kServiceLabel, l, r);
  for (const auto& l : sm.spec.pod_target_labels) label_copy_rule(kPodLabel, l, r);
  r.emplace_back(object({{"source_labels", array{"__meta_kubernetes_service_name"}},
                         {"target_label", "job"},
                         {"replacement", "$1"}}));
  if (!sm.spec.job_label.empty()) {
    r.emplace_back(object({{"source_labels", array{std::string(kServiceLabel) +
                                                   sanitize_label_name(sm.spec.job_label)}},
                           {"target_label", "job"},
                           {"regex", "(.+)"},
                           {"replacement", "$1"}}));
  }
  endpoint_label_rule(e, r);
  for (const auto& rc : e.relabelings) r.emplace_back(relabel(rc));
  enforced_namespace_rule(m.enforced_namespace_label, mns, r);
  shard_rules(shard_count(ctx.agent()), r);
  o["relabel_configs"] = std::move(r);

  metric_relabels(ctx, e, o);
  limits(ctx, sm.spec.sample_limit, sm.spec.target_limit, o);
  label_limits(ctx, sm.spec.label_limits, o);
  return o;
}

// The scrape config of one PodMonitor endpoint, rules in upstream's order.
object pod_monitor_config(RenderContext& ctx, const PodMonitor& pm, std::size_t i) {
  const auto& m = ctx.agent().spec.metrics;
  const auto& e = pm.spec.pod_metrics_endpoints[i];
  const std::string& mns = pm.metadata.ns;
  object o;
  o["job_name"] = "podMonitor/" + mns + "/" + pm.metadata.name + "/" + std::to_string(i);
  honor(ctx, e, o);
  o["kubernetes_sd_configs"] = array{sd_config(
      ctx, "pod", sd_namespaces(pm.spec.namespace_selector, mns, m.ignore_namespace_selectors))};
  endpoint_common(ctx, mns, e, o);
  if (e.tls_config) o["tls_config"] = tls_safe(ctx, mns, *e.tls_config);

  array r;
  r.emplace_back(job_name_rule());
  if (filter_running(ctx, e)) r.emplace_back(filter_running_rule());
  selector_rules(pm.spec.selector, kPodLabel, kPodLabelPresent, r);
  port_rule(e, "__meta_kubernetes_pod_container_port_name", r);
  target_meta_rules(r);
  for (const auto& l : pm.spec.pod_target_labels) label_copy_rule(kPodLabel, l, r);
  r.emplace_back(object({{"target_label", "job"}, {"replacement", mns + "/" + pm.metadata.name}}));
  if (!pm.spec.job_label.empty()) {
    r.emplace_back(object(
        {{"source_labels", array{std::string(kPodLabel) + sanitize_label_name(pm.spec.job_label)}},
         {"target_label", "job"},
         {"regex", "(.+)"},
         {"replacement", "$1"}}));
  }
  endpoint_label_rule(e, r);
  for (const auto& rc : e.relabelings) r.emplace_back(relabel(rc));
  enforced_namespace_rule(m.enforced_namespace_label, mns, r);
  shard_rules(shard_count(ctx.agent()), r);
  o["relabel_configs"] = std::move(r);

  metric_relabels(ctx, e, o);
  limits(ctx, pm.spec.sample_limit, pm.spec.target_limit, o);
  label_limits(ctx, pm.spec.label_limits, o);
  return o;
}

// The scrape config of one Probe (static targets or Ingresses).
object probe_config(RenderContext& ctx, const Probe& p) {
  const auto& m = ctx.agent().spec.metrics;
  const auto& s = p.spec;
  const std::string& ns = p.metadata.ns;
  object o;
  o["job_name"] = "probe/" + ns + "/" + p.metadata.name;
  o["honor_timestamps"] = !m.override_honor_timestamps;
  o["metrics_path"] = s.prober_path.empty() ? std::string("/probe") : s.prober_path;
  set_ne(o, "scrape_interval", s.interval);
  set_ne(o, "scrape_timeout", s.scrape_timeout);
  set_ne(o, "scheme", s.prober_scheme);
  o["params"] = object{{"module", array{s.module}}};
  if (s.tls_config) o["tls_config"] = tls_safe(ctx, ns, *s.tls_config);
  if (!s.bearer_token_secret.name.empty()) {
    o["bearer_token"] = ctx.secret_value(ns, s.bearer_token_secret);
  }
  if (s.basic_auth) {
    o["basic_auth"] = object{{"username", ctx.secret_value(ns, s.basic_auth->username)},
                             {"password", ctx.secret_value(ns, s.basic_auth->password)}};
  }

  array r;
  r.emplace_back(job_name_rule());
  if (!s.job_name.empty()) {
    r.emplace_back(object({{"target_label", "job"}, {"replacement", s.job_name}}));
  }
  if (s.static_config) {
    object sc;
    if (s.static_config->targets) sc["targets"] = string_array(*s.static_config->targets);
    object labels = string_object(s.static_config->labels);
    labels["namespace"] = ns;
    sc["labels"] = std::move(labels);
    o["static_configs"] = array{std::move(sc)};

    r.emplace_back(
        object({{"source_labels", array{"__address__"}}, {"target_label", "__param_target"}}));
    r.emplace_back(
        object({{"source_labels", array{"__param_target"}}, {"target_label", "instance"}}));
    r.emplace_back(object({{"target_label", "__address__"}, {"replacement", s.prober_url}}));
    for (const auto& rc : s.static_config->relabeling_configs) r.emplace_back(relabel(rc));
  } else {
    const auto& in = *s.ingress;
    o["kubernetes_sd_configs"] = array{sd_config(
        ctx, "ingress", sd_namespaces(in.namespace_selector, ns, m.ignore_namespace_selectors))};
    selector_rules(in.selector, kIngressLabel, kIngressLabelPresent, r);
    r.emplace_back(
        object({{"source_labels", array{"__meta_kubernetes_ingress_scheme", "__address__",
                                        "__meta_kubernetes_ingress_path"}},
                {"separator", ";"},
                {"regex", "(.+);(.+);(.+)"},
                {"target_label", "__param_target"},
                {"replacement", "$1://$2$3"},
                {"action", "replace"}}));
    r.emplace_back(object(
        {{"source_labels", array{"__meta_kubernetes_namespace"}}, {"target_label", "namespace"}}));
    r.emplace_back(object(
        {{"source_labels", array{"__meta_kubernetes_ingress_name"}}, {"target_label", "ingress"}}));
    r.emplace_back(
        object({{"source_labels", array{"__param_target"}}, {"target_label", "instance"}}));
    r.emplace_back(object({{"target_label", "__address__"}, {"replacement", s.prober_url}}));
    for (const auto& rc : in.relabeling_configs) r.emplace_back(relabel(rc));
  }
  enforced_namespace_rule(m.enforced_namespace_label, ns, r);
  // Upstream does not shard probes (every shard probes every target); the Prometheus
  // Operator shards them on the probed target.
  if (ctx.fixed()) shard_rules(shard_count(ctx.agent()), r, "__param_target");
  o["relabel_configs"] = std::move(r);

  if (ctx.fixed()) {
    set_ne(o, "proxy_url", s.prober_proxy_url);
    if (s.authorization) o["authorization"] = authorization_block(ctx, ns, *s.authorization);
    if (s.oauth2) o["oauth2"] = oauth2_block(ctx, ns, *s.oauth2);
    label_limits(ctx, s.label_limits, o);
    set_ne_list(o, "metric_relabel_configs", relabels(s.metric_relabelings));
    if (s.sample_limit > 0 || m.enforced_sample_limit) {
      o["sample_limit"] = limit(ctx, s.sample_limit, m.enforced_sample_limit);
    }
    if (s.target_limit > 0 || m.enforced_target_limit) {
      o["target_limit"] = limit(ctx, s.target_limit, m.enforced_target_limit);
    }
  }
  return o;
}

}  // namespace

array service_monitor_scrape_configs(RenderContext& ctx, const ServiceMonitor& sm) {
  array out;
  out.reserve(sm.spec.endpoints.size());
  for (std::size_t i = 0; i < sm.spec.endpoints.size(); ++i) {
    out.emplace_back(service_monitor_config(ctx, sm, i));
  }
  return out;
}

array pod_monitor_scrape_configs(RenderContext& ctx, const PodMonitor& pm) {
  array out;
  out.reserve(pm.spec.pod_metrics_endpoints.size());
  for (std::size_t i = 0; i < pm.spec.pod_metrics_endpoints.size(); ++i) {
    out.emplace_back(pod_monitor_config(ctx, pm, i));
  }
  return out;
}

array probe_scrape_configs(RenderContext& ctx, const Probe& p) {
  array out;
  // The validate stage leaves a Probe without targets out; this guards the renderer.
  if (!p.spec.static_config && !p.spec.ingress) {
    ctx.fail("Probe " + p.metadata.ns + "/" + p.metadata.name + " has no targets");
    return out;
  }
  out.emplace_back(probe_config(ctx, p));
  return out;
}

object metrics_instance_fields(RenderContext& ctx, const MetricsInstance& mi) {
  const std::string& ins = mi.metadata.ns;
  object o;
  o["name"] = ins + "/" + mi.metadata.name;
  set_ne(o, "wal_truncate_frequency", mi.spec.wal_truncate_frequency);
  set_ne(o, "min_wal_time", mi.spec.min_wal_time);
  set_ne(o, "max_wal_time", mi.spec.max_wal_time);
  set_ne(o, "remote_flush_deadline", mi.spec.remote_flush_deadline);
  if (mi.spec.write_stale_on_shutdown.value_or(false)) o["write_stale_on_shutdown"] = true;
  array rws;
  for (std::size_t i = 0; i < mi.spec.remote_write.size(); ++i) {
    const auto& rw = mi.spec.remote_write[i];
    warn_dropped_client_id(ctx, Kind::metrics_instance, mi.metadata,
                           "spec.remoteWrite[" + std::to_string(i) + "].oauth2", rw.oauth2);
    rws.emplace_back(remote_write(ctx, ins, rw));
  }
  set_ne_list(o, "remote_write", std::move(rws));
  return o;
}

object metrics_global(RenderContext& ctx, bool with_replica) {
  const auto& agent = ctx.agent();
  const auto& m = agent.spec.metrics;
  object g;
  set_ne_map(g, "external_labels",
             external_labels(agent, m.metrics_external_label_name, m.external_labels,
                             with_replica ? &m.replica_external_label_name : nullptr));
  set_ne(g, "scrape_interval", m.scrape_interval);
  set_ne(g, "scrape_timeout", m.scrape_timeout);
  array rws;
  for (std::size_t i = 0; i < m.remote_write.size(); ++i) {
    warn_dropped_client_id(ctx, Kind::grafana_agent, agent.metadata,
                           "spec.metrics.remoteWrite[" + std::to_string(i) + "].oauth2",
                           m.remote_write[i].oauth2);
    rws.emplace_back(remote_write(ctx, agent.metadata.ns, m.remote_write[i]));
  }
  set_ne_list(g, "remote_write", std::move(rws));
  return g;
}

}  // namespace detail

}  // namespace aop::agent

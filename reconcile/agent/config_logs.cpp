// The logs fragments (fragments.hpp): a LogsInstance's own fields with its clients, and
// one scrape config per PodLogs, pipeline stages included.
#include <boost/json/parse.hpp>

#include "k8s/yaml.hpp"
#include "reconcile/agent/config_common.hpp"
#include "reconcile/agent/decode.hpp"
#include "reconcile/agent/sanitize.hpp"

namespace aop::agent {
namespace detail {
namespace {

// One logs client entry; Secrets resolved in `ns`.
object logs_client(RenderContext& ctx, std::string_view ns, const LogsClientSpec& c) {
  const auto& agent = ctx.agent();
  object o;
  o["url"] = c.url;
  if (c.tls_config) o["tls_config"] = tls_full(ctx, ns, *c.tls_config);
  set_ne(o, "proxy_url", c.proxy_url);
  set_ne(o, "tenant_id", c.tenant_id);
  set_ne(o, "timeout", c.timeout);
  set_ne(o, "batchwait", c.batch_wait);
  set_nz(o, "batchsize", static_cast<double>(c.batch_size));
  if (c.basic_auth) {
    o["basic_auth"] = object{{"username", ctx.secret_value(ns, c.basic_auth->username)},
                             {"password", ctx.secret_value(ns, c.basic_auth->password)}};
  }
  if (c.oauth2) o["oauth2"] = oauth2_block(ctx, ns, *c.oauth2);
  set_ne(o, "bearer_token", c.bearer_token);
  set_ne(o, "bearer_token_file", c.bearer_token_file);
  if (c.backoff_config) {
    object b;
    set_ne(b, "min_period", c.backoff_config->min_period);
    set_ne(b, "max_period", c.backoff_config->max_period);
    set_nz(b, "max_retries", static_cast<double>(c.backoff_config->max_retries));
    o["backoff_config"] = std::move(b);
  }
  set_ne_map(
      o, "external_labels",
      external_labels(agent, agent.spec.logs.logs_external_label_name, c.external_labels, nullptr));
  return o;
}

std::string metric_type(const std::string& t) {
  std::string lower;
  for (const char c : t)
    lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (lower == "counter") return "Counter";
  if (lower == "gauge") return "Gauge";
  if (lower == "histogram") return "Histogram";
  return t;
}

object stage(RenderContext& ctx, const PipelineStageSpec& s, const std::string& where);

array stages(RenderContext& ctx, const std::vector<PipelineStageSpec>& list,
             const std::string& where) {
  array a;
  for (std::size_t i = 0; i < list.size(); ++i) {
    a.emplace_back(stage(ctx, list[i], where + "[" + std::to_string(i) + "]"));
  }
  return a;
}

// One pipeline stage; `where` is the stage's path for error messages.
object stage(RenderContext& ctx, const PipelineStageSpec& s, const std::string& where) {
  object o;
  if (s.docker) o["docker"] = object();
  if (s.cri) o["cri"] = object();
  if (s.regex) {
    object r{{"expression", s.regex->expression}};
    set_ne(r, "source", s.regex->source);
    o["regex"] = std::move(r);
  }
  if (s.json) {
    object j;
    if (s.json->expressions) j["expressions"] = string_object(*s.json->expressions);
    set_ne(j, "source", s.json->source);
    o["json"] = std::move(j);
  }
  if (s.replace) {
    object r{{"expression", s.replace->expression}};
    set_ne(r, "source", s.replace->source);
    set_ne(r, "replace", s.replace->replace);
    o["replace"] = std::move(r);
  }
  if (s.templ) {
    o["template"] = object{{"source", s.templ->source}, {"template", s.templ->templ}};
  }
  if (s.pack) {
    object p;
    set_ne_list(p, "labels", string_array(s.pack->labels));
    set_true(p, "ingest_timestamp", s.pack->ingest_timestamp);
    o["pack"] = std::move(p);
  }
  if (s.timestamp) {
    object t{{"source", s.timestamp->source}, {"format", s.timestamp->format}};
    set_ne_list(t, "fallback_formats", string_array(s.timestamp->fallback_formats));
    set_ne(t, "location", s.timestamp->location);
    set_ne(t, "action_on_failure", s.timestamp->action_on_failure);
    o["timestamp"] = std::move(t);
  }
  if (s.output_source) o["output"] = object{{"source", *s.output_source}};
  set_ne_list(o, "labeldrop", string_array(s.label_drop));
  set_ne_list(o, "labelallow", string_array(s.label_allow));
  set_ne_map(o, "labels", string_object(s.labels));
  if (s.limit) {
    object l;
    set_nz(l, "rate", static_cast<double>(s.limit->rate));
    set_nz(l, "burst", static_cast<double>(s.limit->burst));
    l["drop"] = s.limit->drop;
    o["limit"] = std::move(l);
  }
  if (!s.metrics.empty()) {
    object metrics;
    for (const auto& [name, m] : s.metrics) {
      object mo;
      set_ne(mo, "type", metric_type(m.type));
      set_ne(mo, "description", m.description);
      set_ne(mo, "prefix", m.prefix);
      set_ne(mo, "source", m.source);
      set_ne(mo, "max_idle_duration", m.max_idle_duration);
      object cfg;
      set_true(cfg, "match_all", m.match_all.value_or(false));
      set_true(cfg, "count_entry_bytes", m.count_entry_bytes.value_or(false));
      set_ne(cfg, "value", m.value);
      cfg["action"] = m.action;
      array buckets;
      for (std::size_t i = 0; i < m.buckets.size(); ++i) {
        boost::system::error_code ec;
        const value n = boost::json::parse(m.buckets[i], ec);
        if (ec || !n.is_number()) {
          std::string message = where + ".metrics." + name + ".buckets[";
          message += std::to_string(i);
          message += "]: bucket \"";
          message += m.buckets[i];
          message += "\" is not a number";
          ctx.fail(std::move(message));
          continue;
        }
        buckets.emplace_back(n.to_number<double>());
      }
      set_ne_list(cfg, "buckets", std::move(buckets));
      mo["config"] = std::move(cfg);
      metrics[name] = std::move(mo);
    }
    o["metrics"] = std::move(metrics);
  }
  if (s.multiline) {
    object m{{"firstline", s.multiline->first_line}};
    set_ne(m, "max_wait_time", s.multiline->max_wait_time);
    set_nz(m, "max_lines", static_cast<double>(s.multiline->max_lines));
    o["multiline"] = std::move(m);
  }
  if (s.tenant) {
    object t;
    set_ne(t, "label", s.tenant->label);
    set_ne(t, "source", s.tenant->source);
    set_ne(t, "value", s.tenant->value);
    o["tenant"] = std::move(t);
  }
  if (s.match) {
    const auto& m = *s.match;
    object mo{{"selector", m.selector}};
    set_ne(mo, "pipeline_name", m.pipeline_name);
    set_ne(mo, "action", m.action);
    set_ne(mo, "drop_counter_reason", m.drop_counter_reason);
    if (!m.stages.empty()) {
      const std::string at = where + ".match.stages";
      auto parsed = k8s::yaml::parse(m.stages);
      if (!parsed) {
        ctx.fail(at + ": not valid YAML: " + parsed.error().message);
      } else if (parsed->is_null()) {
        mo["stages"] = array();
      } else {
        auto nested = decode_pipeline_stages(*parsed, at);
        if (!nested) {
          ctx.fail(nested.error().message);
        } else {
          mo["stages"] = stages(ctx, *nested, at);
        }
      }
    }
    o["match"] = std::move(mo);
  }
  if (s.drop) {
    object d;
    set_ne(d, "source", s.drop->source);
    set_ne(d, "expression", s.drop->expression);
    set_ne(d, "value", s.drop->value);
    set_ne(d, "older_than", s.drop->older_than);
    set_ne(d, "longer_than", s.drop->longer_than);
    set_ne(d, "drop_counter_reason", s.drop->drop_counter_reason);
    o["drop"] = std::move(d);
  }
  return o;
}

// The scrape config of one PodLogs, relabel rules in upstream's order.
object pod_logs_config(RenderContext& ctx, const PodLogs& pl) {
  const auto& logs = ctx.agent().spec.logs;
  const std::string& ns = pl.metadata.ns;
  const std::string where = "PodLogs " + ns + "/" + pl.metadata.name + ": spec.pipelineStages";
  object o;
  o["job_name"] = "podLogs/" + ns + "/" + pl.metadata.name;
  o["kubernetes_sd_configs"] = array{sd_config(
      ctx, "pod", sd_namespaces(pl.spec.namespace_selector, ns, logs.ignore_namespace_selectors))};
  set_ne_list(o, "pipeline_stages", stages(ctx, pl.spec.pipeline_stages, where));

  array r;
  r.emplace_back(
      object({{"source_labels", array{"job"}}, {"target_label", "__tmp_prometheus_job_name"}}));
  selector_rules(pl.spec.selector, kPodLabel, kPodLabelPresent, r);
  r.emplace_back(object(
      {{"source_labels", array{"__meta_kubernetes_namespace"}}, {"target_label", "namespace"}}));
  r.emplace_back(object(
      {{"source_labels", array{"__meta_kubernetes_service_name"}}, {"target_label", "service"}}));
  r.emplace_back(
      object({{"source_labels", array{"__meta_kubernetes_pod_name"}}, {"target_label", "pod"}}));
  r.emplace_back(object({{"source_labels", array{"__meta_kubernetes_pod_container_name"}},
                         {"target_label", "container"}}));
  for (const auto& l : pl.spec.pod_target_labels) {
    r.emplace_back(
        object({{"source_labels", array{std::string(kPodLabel) + sanitize_label_name(l)}},
                {"target_label", sanitize_label_name(l)},
                {"regex", "(.+)"},
                {"replacement", "$1"}}));
  }
  r.emplace_back(object({{"target_label", "job"}, {"replacement", ns + "/" + pl.metadata.name}}));
  if (!pl.spec.job_label.empty()) {
    r.emplace_back(object(
        {{"source_labels", array{std::string(kPodLabel) + sanitize_label_name(pl.spec.job_label)}},
         {"target_label", "job"},
         {"regex", "(.+)"},
         {"replacement", "$1"}}));
  }
  r.emplace_back(object({{"source_labels", array{"__meta_kubernetes_pod_uid",
                                                 "__meta_kubernetes_pod_container_name"}},
                         {"target_label", "__path__"},
                         {"separator", "/"},
                         {"replacement", "/var/log/pods/*$1/*.log"}}));
  for (const auto& rc : pl.spec.relabelings) r.emplace_back(relabel(rc));
  if (!logs.enforced_namespace_label.empty()) {
    r.emplace_back(object({{"target_label", logs.enforced_namespace_label}, {"replacement", ns}}));
  }
  o["relabel_configs"] = std::move(r);
  return o;
}

}  // namespace

array pod_logs_scrape_configs(RenderContext& ctx, const PodLogs& pl) {
  array out;
  out.emplace_back(pod_logs_config(ctx, pl));
  return out;
}

object logs_instance_fields(RenderContext& ctx, const LogsInstance& li) {
  const std::string& ins = li.metadata.ns;
  object o;
  o["name"] = ins + "/" + li.metadata.name;
  array clients;
  if (!li.spec.clients.empty()) {
    for (std::size_t i = 0; i < li.spec.clients.size(); ++i) {
      const auto& c = li.spec.clients[i];
      warn_dropped_client_id(ctx, Kind::logs_instance, li.metadata,
                             "spec.clients[" + std::to_string(i) + "].oauth2", c.oauth2);
      clients.emplace_back(logs_client(ctx, ins, c));
    }
  } else {
    const auto& agent = ctx.agent();
    for (std::size_t i = 0; i < agent.spec.logs.clients.size(); ++i) {
      const auto& c = agent.spec.logs.clients[i];
      warn_dropped_client_id(ctx, Kind::grafana_agent, agent.metadata,
                             "spec.logs.clients[" + std::to_string(i) + "].oauth2", c.oauth2);
      clients.emplace_back(logs_client(ctx, agent.metadata.ns, c));
    }
  }
  set_ne_list(o, "clients", std::move(clients));
  return o;
}

object logs_instance_trailing(const LogsInstance& li) {
  object o;
  if (li.spec.target_sync_period) {
    object t;
    set_ne(t, "sync_period", *li.spec.target_sync_period);
    o["target_config"] = std::move(t);
  }
  return o;
}

}  // namespace detail

}  // namespace aop::agent

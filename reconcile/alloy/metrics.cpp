// Translation of the static metrics tree into Alloy components; see metrics.hpp.
//
// Each scrape job is a member: a violation Alloy would reject skips that job only
// (class A), a key Alloy cannot express fails the whole render (class B). Remote writes,
// WAL settings and the logging block belong to the root or an instance, so their
// violations are class B. A job is validated completely before any label is taken, so a
// skipped job never shifts the labels of the others.
#include "reconcile/alloy/metrics.hpp"

#include <algorithm>
#include <set>

#include <boost/json.hpp>

#include "reconcile/alloy/duration.hpp"
#include "reconcile/alloy/translator.hpp"

namespace aop::alloy {

namespace {

using boost::json::array;
using boost::json::object;
using boost::json::value;
using namespace detail;

// A scrape job validated and converted, before labels are assigned.
struct Job {
  std::string name;
  TargetSources targets;
  std::vector<Block> rules;
  std::vector<std::pair<std::string, Expr>> scrape_attrs;  // from job_name on
  std::vector<Block> scrape_blocks;
  std::vector<Block> metric_rules;
};

class MetricsTranslator : Translator {
 public:
  explicit MetricsTranslator(const MetricsRoot& root)
      : Translator(root.ns, root.name, root.integer_numbers), root_(root) {}

  AlloyConfig run(const value& tree) {
    return translate_section(
        tree, "metrics",
        [&](const object& metrics, std::vector<File>& files, std::vector<File>& jobs) {
          const value* global = metrics.if_contains("global");
          global_ = global && global->is_object() ? global->get_object() : object{};
          global_interval_ = global_duration(global_, "scrape_interval", kDefaultInterval);
          global_timeout_ = global_duration(global_, "scrape_timeout", kDefaultTimeout);
          for (const object* c : instances_of(metrics)) instance(*c, files, jobs);
        });
  }

 private:
  // One MetricsInstance: its remote write file, then its jobs.
  void instance(const object& c, std::vector<File>& files, std::vector<File>& jobs) {
    const auto [ins, iname] = instance_name(c);
    const std::string full = ins + "/" + iname;
    const Owner owner{"MetricsInstance", ins, iname, "spec"};
    const std::string mi = labels_.label("mi", ins + "_" + iname, "MetricsInstance/" + full);
    files.push_back({mi + ".alloy", {remote_write(c, global_, mi, owner, root_.replica_label)}});

    std::set<std::string> job_names;
    std::size_t additional = 0;
    const value* list = c.if_contains("scrape_configs");
    if (list == nullptr || !list->is_array()) return;
    for (const auto& jv : list->get_array()) {
      const std::string job_name =
          jv.is_object() ? text_of(jv.get_object(), "job_name").value_or("") : "";
      Owner member = member_of(job_name, ins, iname, additional);
      Sink s;
      std::optional<Job> job = translate_job(jv, member.field, member.kind != "MetricsInstance", s);
      if (job && !job->name.empty() && !job_names.insert(job->name).second) {
        s.reject(member.field,
                 "job_name \"" + job->name + "\" is used by an earlier job of this instance");
      }
      member_findings(member, s);
      if (job && s.clean()) jobs.push_back(assemble(std::move(*job), full, mi));
    }
  }

  // The member a job comes from, by its generated job name; anything else is an entry
  // of the instance's additional scrape configs.
  static Owner member_of(const std::string& job, const std::string& ins, const std::string& iname,
                         std::size_t& additional) {
    std::vector<std::string> parts;
    for (std::size_t start = 0;;) {
      const auto slash = job.find('/', start);
      parts.push_back(job.substr(start, slash == std::string::npos ? slash : slash - start));
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
    if (parts.size() == 4 && parts[0] == "serviceMonitor") {
      return {"ServiceMonitor", parts[1], parts[2], "spec.endpoints[" + parts[3] + "]"};
    }
    if (parts.size() == 4 && parts[0] == "podMonitor") {
      return {"PodMonitor", parts[1], parts[2], "spec.podMetricsEndpoints[" + parts[3] + "]"};
    }
    if (parts.size() == 3 && parts[0] == "probe") return {"Probe", parts[1], parts[2], "spec"};
    return {"MetricsInstance", ins, iname,
            "spec.additionalScrapeConfigs[" + std::to_string(additional++) + "]"};
  }

  // ---- Scrape jobs ------------------------------------------------------------------------

  // `generated`: a ServiceMonitor, PodMonitor or Probe job, whose discovery settings come
  // from the GrafanaAgent's spec.apiServer (their violations belong to the root).
  std::optional<Job> translate_job(const value& jv, const std::string& path, bool generated,
                                   Sink& s) {
    static const std::set<std::string, std::less<>> kKeys = {"job_name",
                                                             "honor_labels",
                                                             "honor_timestamps",
                                                             "params",
                                                             "scrape_interval",
                                                             "scrape_timeout",
                                                             "metrics_path",
                                                             "scheme",
                                                             "sample_limit",
                                                             "target_limit",
                                                             "label_limit",
                                                             "label_name_length_limit",
                                                             "label_value_length_limit",
                                                             "body_size_limit",
                                                             "basic_auth",
                                                             "authorization",
                                                             "oauth2",
                                                             "bearer_token",
                                                             "bearer_token_file",
                                                             "tls_config",
                                                             "proxy_url",
                                                             "no_proxy",
                                                             "proxy_from_environment",
                                                             "follow_redirects",
                                                             "enable_http2",
                                                             "relabel_configs",
                                                             "metric_relabel_configs",
                                                             "kubernetes_sd_configs",
                                                             "static_configs"};
    const object* o = as_object(jv, path, s);
    if (o == nullptr) return std::nullopt;
    for (const auto& kv : *o) {
      const std::string_view k = kv.key();
      const bool sd = k.size() > 11 && k.substr(k.size() - 11) == "_sd_configs";
      if (kKeys.count(k) == 0 && !sd) {
        s.unsupported.push_back(path + "." + std::string(kv.key()) + ": has no Alloy translation");
      }
    }
    Job job;
    job.name = text_of(*o, "job_name").value_or("");
    if (job.name.empty()) s.reject(path + ".job_name", "is missing");

    const Timing timing = scrape_timing(*o, path, global_interval_, global_timeout_, s);
    const std::uint64_t si = timing.interval;
    const std::uint64_t st = timing.timeout;

    read_targets(*o, job.targets, path, generated, false, s);

    // Relabel rules: prelude, then the static rules without the shard rules.
    job.rules = prelude(*o, job.name, si, st);
    const value* rl = o->if_contains("relabel_configs");
    value stripped;
    if (rl && rl->is_array() &&
        (job.name.rfind("serviceMonitor/", 0) == 0 || job.name.rfind("podMonitor/", 0) == 0 ||
         job.name.rfind("probe/", 0) == 0)) {
      stripped = without_shard_rules(rl->get_array());
      rl = &stripped;
    }
    for (auto& r : rule_blocks(rl, "rule", path + ".relabel_configs", s)) {
      job.rules.push_back(std::move(r));
    }

    // prometheus.scrape attributes in the documented order.
    auto& a = job.scrape_attrs;
    a.emplace_back("job_name", Expr::string(job.name));
    for (const Field& f : {Field{"honor_labels", "honor_labels", T::boolean},
                           Field{"honor_timestamps", "honor_timestamps", T::boolean},
                           Field{"params", "params", T::list_map}}) {
      if (const value* v = o->if_contains(f.from)) {
        if (auto e = convert(*v, f.type, path + "." + std::string(f.from), s)) {
          a.emplace_back(std::string(f.to), std::move(*e));
        }
      }
    }
    a.emplace_back("scrape_interval", Expr::string(*go_duration(prometheus_duration_text(si))));
    a.emplace_back("scrape_timeout", Expr::string(*go_duration(prometheus_duration_text(st))));
    for (const Field& f :
         {Field{"metrics_path", "metrics_path"}, Field{"scheme", "scheme"},
          Field{"sample_limit", "sample_limit", T::integer},
          Field{"target_limit", "target_limit", T::integer},
          Field{"label_limit", "label_limit", T::integer},
          Field{"label_name_length_limit", "label_name_length_limit", T::integer},
          Field{"label_value_length_limit", "label_value_length_limit", T::integer},
          Field{"body_size_limit", "body_size_limit"}, Field{"bearer_token", "bearer_token"},
          Field{"bearer_token_file", "bearer_token_file"}, Field{"proxy_url", "proxy_url"},
          Field{"no_proxy", "no_proxy"},
          Field{"proxy_from_environment", "proxy_from_environment", T::boolean},
          Field{"follow_redirects", "follow_redirects", T::boolean},
          Field{"enable_http2", "enable_http2", T::boolean}}) {
      if (const value* v = o->if_contains(f.from)) {
        if (auto e = convert(*v, f.type, path + "." + std::string(f.from), s)) {
          a.emplace_back(std::string(f.to), std::move(*e));
        }
      }
    }
    auth_exclusive(*o, path, s);
    Block holder("prometheus.scrape");
    client_blocks(*o, {"basic_auth", "authorization", "oauth2", "tls_config"}, path, holder, s);
    job.scrape_blocks = holder.blocks();

    const value* mr = o->if_contains("metric_relabel_configs");
    if (mr && mr->is_array() && !mr->get_array().empty()) {
      job.metric_rules = rule_blocks(mr, "rule", path + ".metric_relabel_configs", s);
      if (o->contains("sample_limit")) {
        s.warnings.push_back(
            path +
            ".sample_limit: Alloy counts the limit before metric relabeling, Prometheus after it");
      }
    } else if (mr != nullptr && !mr->is_array()) {
      s.reject(path + ".metric_relabel_configs", "expected a list");
    }

    value scanned = jv;
    if (rl == &stripped) scanned.as_object()["relabel_configs"] = stripped;
    env_warnings(scanned, path, s);
    return job;
  }

  // The two shard rules the static renderer appends to ServiceMonitor and PodMonitor jobs,
  // and to Probe jobs under --agent-compat=fixed (hashed on __param_target): Alloy
  // clustering distributes targets instead.
  value without_shard_rules(const array& rules) const {
    array out = rules;
    if (out.size() < 2) return out;
    const value& hash = out[out.size() - 2];
    const value& keep = out.back();
    const bool is_hash = hash.is_object() && text_of(hash.get_object(), "action") == "hashmod" &&
                         text_of(hash.get_object(), "target_label") == "__tmp_hash";
    const bool is_keep = keep.is_object() && text_of(keep.get_object(), "regex") == "$(SHARD)" &&
                         text_of(keep.get_object(), "action") == "keep";
    if (is_hash && is_keep) out.resize(out.size() - 2);
    return out;
  }

  // Rules giving discovery.relabel the labels Prometheus sets before relabeling and Alloy
  // only inside prometheus.scrape, each only where the discovered label is empty; params
  // overwrite `__param_<k>` as Prometheus 2 did.
  std::vector<Block> prelude(const object& o, const std::string& job, std::uint64_t si,
                             std::uint64_t st) const {
    std::vector<Block> out;
    const auto defaulted = [&](const char* label, const std::string& v) {
      out.push_back(Block("rule")
                        .attr("source_labels", Expr::strings({label}))
                        .attr("regex", Expr::string(""))
                        .attr("target_label", Expr::string(label))
                        .attr("replacement", Expr::string(literal_replacement(v))));
    };
    defaulted("job", job);
    defaulted("__scrape_interval__", prometheus_duration_text(si));
    defaulted("__scrape_timeout__", prometheus_duration_text(st));
    defaulted("__metrics_path__", text_of(o, "metrics_path").value_or("/metrics"));
    defaulted("__scheme__", text_of(o, "scheme").value_or("http"));
    if (const value* p = o.if_contains("params"); p && p->is_object()) {
      std::vector<std::string> keys;
      for (const auto& kv : p->get_object()) keys.emplace_back(kv.key());
      std::sort(keys.begin(), keys.end());
      for (const auto& k : keys) {
        const value& list = p->get_object().at(k);
        if (!label_name("__param_" + k) || !list.is_array() || list.get_array().empty()) continue;
        const auto first = scalar_text(list.get_array()[0]);
        if (!first) continue;
        out.push_back(Block("rule")
                          .attr("target_label", Expr::string("__param_" + k))
                          .attr("replacement", Expr::string(literal_replacement(*first))));
      }
    }
    return out;
  }

  // Labels, references and the final blocks of a kept job.
  File assemble(Job job, const std::string& instance, const std::string& mi) {
    const std::string label = labels_.label("scrape", job.name, instance + "/" + job.name);
    File f{label + ".alloy", {}};
    Block relabel("discovery.relabel", label);
    relabel.attr("targets", target_expr(job.targets));
    for (auto& r : job.rules) relabel.block(std::move(r));
    f.blocks.push_back(std::move(relabel));

    const bool split = !job.metric_rules.empty();
    Block scrape("prometheus.scrape", label);
    scrape.attr("targets", Expr::ref("discovery.relabel", label, "output"));
    scrape.attr("forward_to", scrape_forward_to(label, mi, split));
    for (auto& [n, v] : job.scrape_attrs) scrape.attr(n, std::move(v));
    for (auto& b : job.scrape_blocks) scrape.block(std::move(b));
    scrape.block(Block("clustering").attr("enabled", Expr::boolean(true)));
    f.blocks.push_back(std::move(scrape));
    if (split) {
      for (auto& b : relabel_split(label, mi, std::move(job.metric_rules))) {
        f.blocks.push_back(std::move(b));
      }
    }
    return f;
  }

  const MetricsRoot& root_;
  object global_;
  std::uint64_t global_interval_ = kDefaultInterval;
  std::uint64_t global_timeout_ = kDefaultTimeout;
};

}  // namespace

AlloyConfig translate_metrics(const value& static_tree, const MetricsRoot& root) {
  return MetricsTranslator(root).run(static_tree);
}

}  // namespace aop::alloy
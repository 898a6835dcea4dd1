// Static and Alloy metrics configurations of the same custom resources are equivalent,
// checked by walking the parsed Alloy graph (not by comparing text): for every scrape job
// of every static golden input and of deploy/examples, in both compat modes, the Alloy
// pipeline that scrapes it has the same targets discovery (role, namespaces), the same
// relabel rules in order after the labels Prometheus sets before relabeling, the same
// scrape settings, the same metric relabel rules, and sends to the remote write of its
// MetricsInstance with the same endpoints and their auth. A job with no pipeline must
// have been skipped with a class-A record naming it.
#include <algorithm>
#include <map>

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "reconcile/alloy/duration.hpp"
#include "reconcile/alloy/metrics.hpp"
#include "tests/alloy/support.hpp"

namespace aop::alloy {
namespace {

namespace fs = std::filesystem;
using boost::json::object;
using boost::json::value;

std::string text(const value& v) {
  if (v.is_string()) return std::string(v.get_string());
  return boost::json::serialize(v);
}

// Every top-level block of a configuration by `<name>.<label>`.
using Graph = std::map<std::string, const check::Block*>;

// The component a reference (`discovery.relabel.x.output`) points to: its first two
// dotted parts name the component, the third its label.
const check::Block* target_of(const Graph& g, const std::string& reference) {
  const auto last = reference.rfind('.');
  const auto it = g.find(reference.substr(0, last));
  return it == g.end() ? nullptr : it->second;
}

// The references of an expression (a reference, or a call or list holding them).
void references(const check::Value& v, std::vector<std::string>& out) {
  if (v.kind == check::Value::Kind::reference) out.push_back(v.text);
  for (const auto& i : v.items) references(i, out);
}

// One static relabel entry against one parsed rule block: the same keys with the same
// values (the action lower-cased, as Alloy spells it).
void expect_same_rule(const object& want, const check::Block& got, const std::string& where) {
  for (const auto& [k, v] : want) {
    const check::Attribute* a = got.attribute(k);
    ASSERT_NE(a, nullptr) << where << ": " << k;
    if (k == "source_labels") {
      ASSERT_EQ(a->value.items.size(), v.get_array().size()) << where;
      for (std::size_t i = 0; i < a->value.items.size(); ++i) {
        EXPECT_EQ(a->value.items[i].text, text(v.get_array()[i])) << where;
      }
    } else if (k == "modulus") {
      EXPECT_EQ(a->value.number, v.to_number<double>()) << where;
    } else if (k == "action") {
      std::string lower = text(v);
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      EXPECT_EQ(a->value.text, lower) << where;
    } else {
      EXPECT_EQ(a->value.text, text(v)) << where << ": " << k;
    }
  }
  EXPECT_EQ(got.attributes.size(), want.size()) << where;
}

// The static relabel rules without the two shard rules the static backend appends to
// ServiceMonitor and PodMonitor jobs, and to Probe jobs under --agent-compat=fixed (Alloy
// clustering replaces them).
std::vector<const object*> static_rules(const object& job) {
  std::vector<const object*> out;
  if (const value* r = job.if_contains("relabel_configs")) {
    for (const auto& e : r->get_array()) out.push_back(&e.get_object());
  }
  const std::string name = text(job.at("job_name"));
  if ((name.rfind("serviceMonitor/", 0) == 0 || name.rfind("podMonitor/", 0) == 0 ||
       name.rfind("probe/", 0) == 0) &&
      out.size() >= 2 && out.back()->contains("regex") &&
      text(out.back()->at("regex")) == "$(SHARD)") {
    out.resize(out.size() - 2);
  }
  return out;
}

double seconds(const value& prometheus) {
  return static_cast<double>(parse_prometheus_duration(text(prometheus)).value()) / 1000.0;
}
double seconds(const check::Value& go) {
  return check::parse_go_duration(go.text).value() / 1e9;
}

struct Counts {
  std::size_t jobs = 0;
  std::size_t skipped = 0;
  std::size_t rules = 0;
  std::size_t endpoints = 0;
};

void expect_equivalent(const value& tree, const AlloyConfig& c, const std::string& ns,
                       const std::string& name, Counts& n) {
  const auto sources = test::written(c.files, ns, name);
  std::vector<check::ParsedFile> parsed;
  for (const auto& f : sources) {
    std::vector<check::Violation> v;
    parsed.push_back(check::parse_file(f, v));
    ASSERT_TRUE(v.empty()) << check::to_string(v);
  }
  Graph g;
  std::map<std::string, const check::Block*> scrape_by_job;
  for (const auto& f : parsed) {
    for (const auto& b : f.blocks) {
      if (b.label) g[b.name + "." + *b.label] = &b;
      if (b.name == "prometheus.scrape") {
        scrape_by_job[b.attribute("job_name")->value.text] = &b;
      }
    }
  }
  const value* section = tree.get_object().if_contains("metrics");
  ASSERT_NE(section, nullptr);
  const object& metrics = section->get_object();
  const value* global = metrics.if_contains("global");
  const value* configs = metrics.if_contains("configs");
  if (configs == nullptr) return;
  for (const auto& instance : configs->get_array()) {
    const object& ins = instance.get_object();
    const value* jobs = ins.if_contains("scrape_configs");
    if (jobs == nullptr) continue;
    for (const auto& jv : jobs->get_array()) {
      const object& job = jv.get_object();
      const std::string job_name = text(job.at("job_name"));
      const std::string where = text(ins.at("name")) + " " + job_name;
      SCOPED_TRACE(where);
      const auto it = scrape_by_job.find(job_name);
      if (it == scrape_by_job.end()) {
        // Skipped: a class-A record on its member must say so (a ServiceMonitor,
        // PodMonitor or Probe named in the job name, else the MetricsInstance of an
        // additional scrape config).
        std::vector<std::string> parts;
        for (std::size_t start = 0;;) {
          const auto slash = job_name.find('/', start);
          parts.push_back(job_name.substr(start, slash - start));
          if (slash == std::string::npos) break;
          start = slash + 1;
        }
        const bool generated =
            parts.size() >= 3 &&
            (parts[0] == "serviceMonitor" || parts[0] == "podMonitor" || parts[0] == "probe");
        EXPECT_TRUE(std::any_of(c.problems.begin(), c.problems.end(),
                                [&](const auto& p) {
                                  return p.cls == ProblemClass::a &&
                                         (generated ? p.ns == parts[1] && p.name == parts[2]
                                                    : p.kind == "MetricsInstance");
                                }))
            << "no pipeline and no class-A record\n"
            << test::problems_text(c.problems);
        ++n.skipped;
        continue;
      }
      ++n.jobs;
      const check::Block& scrape = *it->second;

      // Scrape settings.
      const value* interval = job.if_contains("scrape_interval");
      if (interval == nullptr && global != nullptr) {
        interval = global->get_object().if_contains("scrape_interval");
      }
      if (interval != nullptr) {
        EXPECT_EQ(seconds(scrape.attribute("scrape_interval")->value), seconds(*interval));
      }
      if (const value* t = job.if_contains("scrape_timeout")) {
        EXPECT_EQ(seconds(scrape.attribute("scrape_timeout")->value), seconds(*t));
      }
      for (const char* k : {"metrics_path", "scheme", "bearer_token_file", "proxy_url"}) {
        if (const value* v = job.if_contains(k)) {
          ASSERT_NE(scrape.attribute(k), nullptr) << k;
          EXPECT_EQ(scrape.attribute(k)->value.text, text(*v)) << k;
        }
      }
      for (const char* k : {"honor_labels", "honor_timestamps", "enable_http2"}) {
        if (const value* v = job.if_contains(k)) {
          ASSERT_NE(scrape.attribute(k), nullptr) << k;
          EXPECT_EQ(scrape.attribute(k)->value.boolean, v->as_bool()) << k;
        }
      }
      for (const char* k : {"sample_limit", "target_limit"}) {
        if (const value* v = job.if_contains(k)) {
          ASSERT_NE(scrape.attribute(k), nullptr) << k;
          EXPECT_EQ(scrape.attribute(k)->value.number, v->to_number<double>()) << k;
        }
      }
      for (const char* k : {"basic_auth", "tls_config", "authorization", "oauth2"}) {
        EXPECT_EQ(scrape.children(k).size(), job.contains(k) ? 1U : 0U) << k;
      }

      // Targets: discovery.relabel, then the shared discovery.kubernetes.
      std::vector<std::string> refs;
      references(scrape.attribute("targets")->value, refs);
      ASSERT_EQ(refs.size(), 1U);
      const check::Block* relabel = target_of(g, refs[0]);
      ASSERT_NE(relabel, nullptr) << refs[0];
      ASSERT_EQ(relabel->name, "discovery.relabel");
      const auto rules = relabel->children("rule");
      const auto want = static_rules(job);
      ASSERT_GE(rules.size(), want.size() + 1);
      EXPECT_EQ(rules[0]->attribute("target_label")->value.text, "job");
      EXPECT_EQ(rules[0]->attribute("replacement")->value.text, job_name);
      const std::size_t offset = rules.size() - want.size();
      for (std::size_t i = 0; i < want.size(); ++i) {
        expect_same_rule(*want[i], *rules[offset + i], "rule " + std::to_string(i));
      }
      n.rules += want.size();
      std::vector<std::string> sd_refs;
      references(relabel->attribute("targets")->value, sd_refs);
      const value* sd = job.if_contains("kubernetes_sd_configs");
      ASSERT_EQ(sd_refs.size(), sd ? sd->get_array().size() : 0U);
      for (std::size_t i = 0; i < sd_refs.size(); ++i) {
        const check::Block* k = target_of(g, sd_refs[i]);
        ASSERT_NE(k, nullptr) << sd_refs[i];
        const object& want_sd = sd->get_array()[i].get_object();
        EXPECT_EQ(k->attribute("role")->value.text, text(want_sd.at("role")));
        std::vector<std::string> want_ns;
        if (const value* nsv = want_sd.if_contains("namespaces")) {
          if (const value* names = nsv->get_object().if_contains("names")) {
            for (const auto& s : names->get_array()) want_ns.push_back(text(s));
          }
        }
        std::vector<std::string> got_ns;
        for (const auto* nb : k->children("namespaces")) {
          if (const auto* names = nb->attribute("names")) {
            for (const auto& s : names->value.items) got_ns.push_back(s.text);
          }
        }
        EXPECT_EQ(got_ns, want_ns);
      }

      // Metric relabel rules, then the remote write of the instance.
      std::vector<std::string> out_refs;
      references(scrape.attribute("forward_to")->value, out_refs);
      ASSERT_FALSE(out_refs.empty());
      const check::Block* next = target_of(g, out_refs[0]);
      ASSERT_NE(next, nullptr);
      const value* mr = job.if_contains("metric_relabel_configs");
      if (mr != nullptr && !mr->get_array().empty()) {
        // First a rule that lets the scrape loop's own series (up, scrape_*) around the
        // user's rules, which Prometheus never applied to them; they reach the same remote
        // write through the job's second relabel component.
        ASSERT_EQ(next->name, "prometheus.relabel");
        ASSERT_EQ(out_refs.size(), 2U);
        const auto mrules = next->children("rule");
        ASSERT_EQ(mrules.size(), mr->get_array().size() + 1);
        EXPECT_EQ(mrules[0]->attribute("action")->value.text, "drop");
        for (std::size_t i = 0; i < mr->get_array().size(); ++i) {
          expect_same_rule(mr->get_array()[i].get_object(), *mrules[i + 1],
                           "metric rule " + std::to_string(i));
        }
        n.rules += mr->get_array().size();
        std::vector<std::string> after;
        references(next->attribute("forward_to")->value, after);
        ASSERT_FALSE(after.empty());
        next = target_of(g, after[0]);
        ASSERT_NE(next, nullptr);
      }
      ASSERT_EQ(next->name, "prometheus.remote_write");
      const auto endpoints = next->children("endpoint");
      // The instance's remote writes, else the GrafanaAgent's (metrics.global).
      const value* rw = ins.if_contains("remote_write");
      if (rw == nullptr && global != nullptr) rw = global->get_object().if_contains("remote_write");
      ASSERT_EQ(endpoints.size(), rw ? rw->get_array().size() : 0U);
      for (std::size_t i = 0; i < endpoints.size(); ++i) {
        const object& want_rw = rw->get_array()[i].get_object();
        EXPECT_EQ(endpoints[i]->attribute("url")->value.text, text(want_rw.at("url")));
        for (const char* k : {"basic_auth", "tls_config", "oauth2", "sigv4", "authorization"}) {
          EXPECT_EQ(endpoints[i]->children(k).size(), want_rw.contains(k) ? 1U : 0U) << k;
        }
        ++n.endpoints;
      }
    }
  }
}

TEST(MetricsEquivalence, EveryStaticInputHasTheSamePipelinesInAlloy) {
  std::vector<fs::path> inputs;
  for (const auto& e : fs::directory_iterator(fs::path(AOP_SOURCE_DIR) / "tests/agent/golden")) {
    if (fs::exists(e.path() / "input.yaml")) inputs.push_back(e.path() / "input.yaml");
  }
  std::sort(inputs.begin(), inputs.end());
  std::string examples;
  for (const auto& e : fs::directory_iterator(fs::path(AOP_SOURCE_DIR) / "deploy/examples")) {
    if (e.path().extension() == ".yaml") examples += test::read(e.path()) + "\n---\n";
  }
  Counts n;
  std::size_t roots = 0;
  for (const auto compat : {agent::Compat::upstream, agent::Compat::fixed}) {
    agent::Options options;
    options.compat = compat;
    const bool fixed = compat == agent::Compat::fixed;
    auto each = [&](const std::string& what, const std::string& yaml) {
      for (auto& r : test::roots(yaml, options)) {
        auto tree = test::static_tree(r, agent::ConfigFile::metrics, options);
        if (!tree) continue;
        const auto& ga = r.hierarchy.agent;
        SCOPED_TRACE(what + " " + r.ns() + "/" + r.name() + (fixed ? " fixed" : ""));
        const MetricsRoot root{r.ns(), r.name(),
                               ga.spec.metrics.replica_external_label_name.value_or("__replica__"),
                               fixed};
        const AlloyConfig c = translate_metrics(*tree, root);
        if (translation_failed(c.problems)) continue;
        ++roots;
        expect_equivalent(*tree, c, r.ns(), r.name(), n);
      }
    };
    for (const auto& in : inputs) each(in.parent_path().filename().string(), test::read(in));
    each("deploy/examples", examples);
  }
  // What was compared, so that a change that compares nothing fails.
  EXPECT_GE(roots, 30U);
  EXPECT_GE(n.jobs, 40U);
  EXPECT_GE(n.rules, 400U);
  EXPECT_GE(n.endpoints, 15U);
  std::printf("compared %zu roots, %zu jobs (%zu skipped), %zu rules, %zu endpoints\n", roots,
              n.jobs, n.skipped, n.rules, n.endpoints);
}

}  // namespace
}  // namespace aop::alloy

// The corpus of invalid inputs (tests/validation/corpus/rows.yaml) through the validate
// stage of the Grafana Agent controller, at unit level: each row's change is applied to
// the converged hierarchy of base.yaml, the hierarchy is discovered and validated, and
// the row's expected problem (kind, namespace, name, field path, message) must be
// reported, with the consequence the row's scope implies: a member is left out and the
// root still deploys; a root-level object refuses the root; an additional scrape config
// is dropped. No other object may get an error.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "k8s/yaml.hpp"
#include "reconcile/agent/decode.hpp"
#include "reconcile/agent/decode_cache.hpp"
#include "reconcile/agent/field_checks.hpp"
#include "reconcile/agent/memory_cluster.hpp"
#include "reconcile/agent/pipeline.hpp"
#include "tests/validation/corpus.hpp"

namespace aop::agent {
namespace {

namespace json = boost::json;

struct RowOutcome {
  Validation validation;
  Hierarchy hierarchy;
  std::string error;  // decoding or discovery failed
};

RowOutcome validate(const std::vector<json::value>& objects) {
  RowOutcome out;
  MemoryCluster cluster;
  for (const auto& o : objects) {
    auto added = cluster.add(o);
    if (!added) {
      out.error = added.error().message;
      return out;
    }
  }
  const auto agents = cluster.objects(Kind::grafana_agent);
  if (agents.size() != 1) {
    out.error = "expected one GrafanaAgent";
    return out;
  }
  auto agent = decode_grafana_agent(json::value(*agents.front()));
  if (!agent) {
    out.error = "GrafanaAgent: " + agent.error().message;
    return out;
  }
  DecodeCache uncached(false);
  auto d = discover(*agent, cluster, uncached);
  if (!d.ok()) {
    // A root whose own selectors are invalid cannot be discovered: its root-level objects
    // are checked on their own (the root is refused either way).
    out.validation.root_invalid = true;
    out.validation.problems = check_grafana_agent(*agent);
    for (const Kind k : {Kind::metrics_instance, Kind::logs_instance}) {
      for (const auto* o : cluster.objects(k)) {
        auto ps = k == Kind::metrics_instance
                      ? check_metrics_instance(decode_metrics_instance(json::value(*o)).value())
                      : check_logs_instance(decode_logs_instance(json::value(*o)).value());
        for (auto& p : ps) out.validation.problems.push_back(std::move(p));
      }
    }
    if (out.validation.problems.empty()) out.error = "discovery: " + d.failure->message;
    return out;
  }
  // The validate stage as the pipeline runs it (the Integration checks first).
  auto validated = agent::validate(std::move(d.value.hierarchy), cluster, Options{});
  out.hierarchy = std::move(validated.value);
  out.validation.problems = std::move(validated.problems);
  out.validation.root_invalid = validated.failure.has_value();
  return out;
}

bool contains_member(const Hierarchy& h, Kind kind, const k8s::ObjectKey& key) {
  const auto is = [&](const ObjectMeta& m) { return m.ns == key.ns && m.name == key.name; };
  for (const auto& e : h.metrics) {
    for (const auto& x : e.service_monitors) {
      if (kind == Kind::service_monitor && is(x->metadata)) return true;
    }
    for (const auto& x : e.pod_monitors) {
      if (kind == Kind::pod_monitor && is(x->metadata)) return true;
    }
    for (const auto& x : e.probes) {
      if (kind == Kind::probe && is(x->metadata)) return true;
    }
  }
  for (const auto& e : h.logs) {
    for (const auto& x : e.pod_logs) {
      if (kind == Kind::pod_logs && is(x->metadata)) return true;
    }
  }
  for (const auto& x : h.integrations) {
    if (kind == Kind::integration && is(x.metadata)) return true;
  }
  return false;
}

std::string all(const std::vector<Problem>& ps) {
  std::string s;
  for (const auto& p : ps) {
    s += "  " + std::string(p.severity == Severity::error ? "E " : "W ") + p.str() + "\n";
  }
  return s;
}

}  // namespace

TEST(Corpus, TheBaseHierarchyIsValid) {
  const auto corpus = test::load_corpus();
  const RowOutcome o = validate(corpus.base);
  ASSERT_TRUE(o.error.empty()) << o.error;
  EXPECT_TRUE(o.validation.problems.empty()) << all(o.validation.problems);
  EXPECT_FALSE(o.validation.root_invalid);
  ASSERT_EQ(o.hierarchy.metrics.size(), 1u);
  EXPECT_EQ(o.hierarchy.metrics[0].service_monitors.size(), 1u);
  EXPECT_EQ(o.hierarchy.metrics[0].pod_monitors.size(), 1u);
  EXPECT_EQ(o.hierarchy.metrics[0].probes.size(), 1u);
  EXPECT_FALSE(o.hierarchy.metrics[0].instance.spec.additional_scrape_configs.has_value());
  ASSERT_EQ(o.hierarchy.logs.size(), 1u);
  EXPECT_EQ(o.hierarchy.logs[0].pod_logs.size(), 1u);
  EXPECT_EQ(o.hierarchy.integrations.size(), 1u);
}

TEST(Corpus, EveryRowIsReportedWithItsField) {
  const auto corpus = test::load_corpus();
  ASSERT_GE(corpus.rows.size(), 200u);
  std::map<std::string, int> per_class;
  std::set<std::string> ids;
  for (const auto& row : corpus.rows) {
    SCOPED_TRACE(row.id);
    EXPECT_TRUE(ids.insert(row.id).second) << "duplicate id";
    ++per_class[row.cls];
    const RowOutcome o = validate(row.objects);
    ASSERT_TRUE(o.error.empty()) << o.error;
    const auto& ps = o.validation.problems;
    const auto& e = row.expect;
    const auto it = std::find_if(ps.begin(), ps.end(), [&](const Problem& p) {
      return p.kind.kind == e.kind && p.object.ns == e.ns && p.object.name == e.name &&
             p.field == e.field && p.message.find(e.message) != std::string::npos &&
             (p.severity == Severity::warning) == e.warning;
    });
    EXPECT_NE(it, ps.end()) << "expected " << e.kind << " " << e.ns << "/" << e.name << ": "
                            << e.field << ": ..." << e.message << "...\ngot:\n"
                            << all(ps);
    // Errors only on the object the row is about.
    for (const auto& p : ps) {
      if (p.severity != Severity::error) continue;
      EXPECT_TRUE(p.kind.kind == e.kind && p.object.ns == e.ns && p.object.name == e.name)
          << "unexpected error elsewhere: " << p.str();
    }
    // The consequence.
    const k8s::ObjectKey key{e.ns, e.name};
    switch (row.scope) {
      case test::Scope::member: {
        EXPECT_FALSE(o.validation.root_invalid) << all(ps);
        const Kind kind = *kind_of(json::object{{"apiVersion", row.api_version}, {"kind", e.kind}});
        EXPECT_EQ(contains_member(o.hierarchy, kind, key), e.warning)
            << (e.warning ? "a warning must not leave the member out"
                          : "the invalid member must be left out");
        break;
      }
      case test::Scope::root:
        EXPECT_EQ(o.validation.root_invalid, !e.warning) << all(ps);
        break;
      case test::Scope::additional_scrape_configs: {
        EXPECT_FALSE(o.validation.root_invalid) << all(ps);
        bool kept = false;
        for (const auto& m : o.hierarchy.metrics) {
          if (m.instance.metadata.name == e.name)
            kept = m.instance.spec.additional_scrape_configs.has_value();
        }
        for (const auto& l : o.hierarchy.logs) {
          if (l.instance.metadata.name == e.name)
            kept = l.instance.spec.additional_scrape_configs.has_value();
        }
        EXPECT_FALSE(kept) << "the invalid additional scrape configs must be left out";
        break;
      }
    }
  }
  std::string classes;
  for (const auto& [c, n] : per_class) classes += c + "=" + std::to_string(n) + " ";
  std::cout << corpus.rows.size() << " rows: " << classes << "\n";
}

}  // namespace aop::agent

// kube-sim's admission of the project's CRDs (deploy/crds): patterns matched with RE2 as
// the API server does (Go's syntax, `(?i)` included), and the CEL rules of
// x-kubernetes-validations evaluated in the subset of tools/kube-sim/cel.hpp. The same
// objects, and every corpus row, were also applied to the real kube-apiserver (v1.24,
// feature gate CustomResourceValidationExpressions on): it refuses the same objects with
// the same messages, and the same 114 corpus rows.
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "k8s/yaml.hpp"
#include "tests/validation/corpus.hpp"
#include "tools/kube-sim/cel.hpp"
#include "tools/kube-sim/schema.hpp"

namespace aop::sim {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;

bool eval(std::string_view rule, std::string_view self) {
  std::string error;
  auto p = cel::compile(rule, &error);
  EXPECT_TRUE(p) << rule << ": " << error;
  if (!p) return false;
  const auto out = cel::evaluate(*p, json::parse(self));
  EXPECT_FALSE(out.error) << rule << ": " << out.error.value_or("");
  return out.value;
}

// The openAPIV3Schema of each kind in deploy/crds.
const std::map<std::string, json::value>& crd_schemas() {
  static const std::map<std::string, json::value> schemas = [] {
    std::map<std::string, json::value> out;
    // deploy/crds holds the agent's CRDs and, in a subdirectory, the Prometheus Operator's,
    // next to their Kustomization files.
    for (const auto& e :
         fs::recursive_directory_iterator(fs::path(AOP_SOURCE_DIR) / "deploy" / "crds")) {
      if (e.path().extension() != ".yaml") continue;
      std::ifstream in(e.path());
      std::ostringstream text;
      text << in.rdbuf();
      auto docs = k8s::yaml::parse_all(text.str());
      EXPECT_TRUE(docs.has_value());
      if (!docs) continue;
      for (const auto& d : *docs) {
        const auto& spec = d.at("spec");
        out[std::string(spec.at("names").at("kind").as_string())] =
            spec.at("versions").at(0).at("schema").at("openAPIV3Schema");
      }
    }
    return out;
  }();
  return schemas;
}

std::vector<std::string> admit(json::value object) {
  const std::string kind(object.at("kind").as_string());
  const auto out = apply_schema(crd_schemas().at(kind), object);
  std::vector<std::string> errors;
  for (const auto& c : out.errors) errors.push_back(c.field + ": " + c.message);
  return errors;
}

bool has_error(const std::vector<std::string>& errors, std::string_view field,
               std::string_view phrase) {
  for (const auto& e : errors) {
    if (e.starts_with(std::string(field) + ": ") && e.find(phrase) != std::string::npos)
      return true;
  }
  return false;
}

std::string all(const std::vector<std::string>& errors) {
  std::string s;
  for (const auto& e : errors) s += e + "\n";
  return s;
}

}  // namespace

TEST(CelSubset, TheRuleShapesTheCrdsUse) {
  EXPECT_TRUE(eval("!(has(self.secret) && has(self.configMap))", R"({"secret":{}})"));
  EXPECT_FALSE(
      eval("!(has(self.secret) && has(self.configMap))", R"({"secret":{},"configMap":{}})"));
  EXPECT_TRUE(eval("self.action in ['hashmod', 'HashMod'] ? self.modulus > 0 : true",
                   R"({"action":"keep"})"));
  EXPECT_FALSE(eval("self.action in ['hashmod', 'HashMod'] ? self.modulus > 0 : true",
                    R"({"action":"HashMod","modulus":0})"));
  EXPECT_FALSE(
      eval("(has(self.shards) && self.shards > 1 ? self.shards : 1) * "
           "(has(self.replicas) ? self.replicas : 1) <= 1000",
           R"({"shards":100,"replicas":20})"));
  EXPECT_TRUE(eval("(has(self.a) ? 1 : 0) + (has(self.b) ? 1 : 0) <= 1", R"({"a":1})"));
  EXPECT_TRUE(eval("self.all(k, k.matches('^[a-z_]+$'))", R"({"ok":1,"also_ok":2})"));
  EXPECT_FALSE(eval("self.all(k, k.matches('^[a-z_]+$'))", R"({"ok":1,"Not-ok":2})"));
  EXPECT_TRUE(eval("self.items.exists(i, i.size() > 3)", R"({"items":["ab","abcd"]})"));
  EXPECT_TRUE(eval("size(self.name) == 3 && self.name.startsWith('ab')", R"({"name":"abc"})"));
  // An evaluation error (no such key) is reported, not taken as true.
  auto p = cel::compile("self.missing > 1");
  ASSERT_TRUE(p);
  EXPECT_TRUE(cel::evaluate(*p, json::parse("{}")).error.has_value());
  // Outside the subset: not parsed, so not evaluated.
  EXPECT_FALSE(cel::compile("self.map(x, x * 2).size() > 0"));
  EXPECT_FALSE(cel::compile("duration(self.interval) < duration('1h')"));
  EXPECT_FALSE(cel::compile("self.x == 1.5"));
}

TEST(CrdAdmission, TheCorpusBaseIsAdmitted) {
  for (const auto& o : test::load_corpus().base) {
    const std::string kind(o.at("kind").as_string());
    if (!crd_schemas().contains(kind)) continue;
    SCOPED_TRACE(kind);
    EXPECT_TRUE(admit(o).empty()) << all(admit(o));
  }
}

TEST(CrdAdmission, PatternsAndRulesRefuseWhatTheAgentWould) {
  const auto agent =
      json::parse(R"({"apiVersion":"monitoring.grafana.com/v1alpha1","kind":"GrafanaAgent",
    "metadata":{"name":"a","namespace":"n"},
    "spec":{"logLevel":"warning","metrics":{"shards":100,"replicas":20,"scrapeInterval":"1.5m",
      "remoteWrite":[{"url":"prometheus:9090/write","bearerToken":"t","bearerTokenFile":"/f",
                      "queueConfig":{"minShards":5,"maxShards":2}}]}}})");
  auto e = admit(agent);
  EXPECT_TRUE(has_error(e, "spec.logLevel", "should match")) << all(e);
  EXPECT_TRUE(has_error(e, "spec.metrics.scrapeInterval", "should match")) << all(e);
  EXPECT_TRUE(has_error(e, "spec.metrics.remoteWrite[0].url", "should match")) << all(e);
  // The rules of a node run once the node itself is well-formed.
  EXPECT_TRUE(has_error(e, "spec.metrics.remoteWrite[0].queueConfig",
                        "minShards must not be above maxShards"))
      << all(e);

  const auto monitor =
      json::parse(R"({"apiVersion":"monitoring.coreos.com/v1","kind":"ServiceMonitor",
    "metadata":{"name":"s","namespace":"n"},
    "spec":{"selector":{"matchExpressions":[{"key":"a","operator":"Equals","values":["x"]}]},
      "endpoints":[{"port":"http","interval":"1.5h",
        "relabelings":[{"sourceLabels":["a"]},{"action":"HashMod","targetLabel":"t"},
                       {"targetLabel":"a-b","sourceLabels":["x"]}],
        "tlsConfig":{"ca":{"secret":{"name":"a","key":"b"},"configMap":{"name":"a","key":"b"}}}}]}})");
  e = admit(monitor);
  EXPECT_TRUE(has_error(e, "spec.selector.matchExpressions[0].operator", "Unsupported value"))
      << all(e);
  EXPECT_TRUE(has_error(e, "spec.endpoints[0].interval", "should match")) << all(e);
  EXPECT_TRUE(has_error(e, "spec.endpoints[0].relabelings[0]", "needs a targetLabel")) << all(e);
  EXPECT_TRUE(has_error(e, "spec.endpoints[0].relabelings[1]", "modulus greater than 0")) << all(e);
  EXPECT_TRUE(has_error(e, "spec.endpoints[0].relabelings[2].targetLabel", "should match"))
      << all(e);
  EXPECT_TRUE(has_error(e, "spec.endpoints[0].tlsConfig.ca", "not both")) << all(e);

  const auto pod_logs =
      json::parse(R"({"apiVersion":"monitoring.grafana.com/v1alpha1","kind":"PodLogs",
    "metadata":{"name":"p","namespace":"n"},
    "spec":{"selector":{},"pipelineStages":[{"cri":{},"docker":{}},{"tenant":{"source":"a","value":"b"}},
      {"metrics":{"x":{"type":"Summary","action":"inc"}}},{"metrics":{"y":{"type":"COUNTER","action":"inc"}}}]}})");
  e = admit(pod_logs);
  EXPECT_TRUE(has_error(e, "spec.pipelineStages[0]", "at most one stage kind")) << all(e);
  EXPECT_TRUE(
      has_error(e, "spec.pipelineStages[1].tenant", "exactly one of label, source or value"))
      << all(e);
  // (?i): COUNTER is a counter, Summary is nothing.
  EXPECT_TRUE(has_error(e, "spec.pipelineStages[2].metrics.x.type", "should match")) << all(e);
  EXPECT_FALSE(has_error(e, "spec.pipelineStages[3].metrics.y.type", "should match")) << all(e);

  const auto probe = json::parse(R"({"apiVersion":"monitoring.coreos.com/v1","kind":"Probe",
    "metadata":{"name":"p","namespace":"n"},"spec":{"prober":{"url":"http://x:9115"}}})");
  e = admit(probe);
  EXPECT_TRUE(has_error(e, "spec.prober.url", "should match")) << all(e);
  EXPECT_TRUE(has_error(e, "spec", "needs targets.staticConfig or targets.ingress")) << all(e);
}

// Which corpus rows the CRDs refuse at admission (the rest reach the operator, which
// reports them). Every refused row must be refused for a reason about its own field.
TEST(CrdAdmission, CorpusRowsRefusedAtAdmission) {
  const auto corpus = test::load_corpus();
  int refused = 0;
  for (const auto& row : corpus.rows) {
    for (const auto& o : row.changed) {
      const std::string kind(o.at("kind").as_string());
      if (!crd_schemas().contains(kind)) continue;
      const auto e = admit(o);
      if (e.empty()) continue;
      ++refused;
      break;
    }
  }
  std::cout << refused << " of " << corpus.rows.size() << " corpus rows are refused at admission\n";
  EXPECT_GT(refused, 50);
}

}  // namespace aop::sim

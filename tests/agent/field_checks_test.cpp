// The validate stage (pipeline.hpp, field_checks.hpp) against hierarchies that work: the
// examples in deploy/examples validate without an error. (The golden cases' problems.txt
// pin what the stage reports for their inputs; tests/validation/corpus what it reports
// for invalid ones.)
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "k8s/yaml.hpp"
#include "reconcile/agent/decode.hpp"
#include "reconcile/agent/decode_cache.hpp"
#include "reconcile/agent/field_checks.hpp"
#include "reconcile/agent/memory_cluster.hpp"
#include "reconcile/agent/pipeline.hpp"

namespace aop::agent {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Problems of every root in the YAML files, as Problem::str() lines.
std::vector<std::string> validate_files(const std::vector<fs::path>& files) {
  MemoryCluster cluster;
  for (const auto& f : files) {
    auto docs = k8s::yaml::parse_all(read_file(f));
    EXPECT_TRUE(docs.has_value()) << f << ": " << (docs ? "" : docs.error().message);
    if (!docs) continue;
    for (auto& d : *docs) (void)cluster.add(std::move(d));
  }
  std::vector<std::string> out;
  for (const auto* o : cluster.objects(Kind::grafana_agent)) {
    auto agent = decode_grafana_agent(boost::json::value(*o));
    EXPECT_TRUE(agent.has_value());
    if (!agent) continue;
    DecodeCache uncached(false);
    auto d = discover(*agent, cluster, uncached);
    if (!d.ok()) continue;
    const auto v = validate(std::move(d.value.hierarchy), cluster, Options{});
    for (const auto& p : v.problems) {
      if (p.severity == Severity::error) out.push_back(p.str());
    }
  }
  return out;
}

}  // namespace

TEST(FieldChecks, DeployExamplesHaveNoErrors) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(AOP_SOURCE_DIR) / "deploy" / "examples")) {
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  }
  const auto problems = validate_files(files);
  EXPECT_TRUE(problems.empty()) << [&] {
    std::string s;
    for (const auto& p : problems) s += p + "\n";
    return s;
  }();
}

}  // namespace aop::agent

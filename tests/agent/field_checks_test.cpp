// The validate stage (reconcile/agent/field_checks.hpp) against hierarchies that work:
// every golden case's input and deploy/examples validate without an error (except the
// problems those cases are about), so no rule refuses what upstream and the agent accept.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "k8s/yaml.hpp"
#include "reconcile/agent/decode.hpp"
#include "reconcile/agent/field_checks.hpp"
#include "reconcile/agent/memory_cluster.hpp"

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
    Discovery d = discover(*agent, cluster, Options{});
    if (!d.ok()) continue;
    const Validation v = validate_hierarchy(d.hierarchy, cluster, Options{});
    for (const auto& p : v.problems) {
      if (p.severity == Severity::error) out.push_back(p.str());
    }
  }
  return out;
}

}  // namespace

// tests/agent/golden/<case>/validation.txt lists the errors the validate stage finds in
// the case's input (none when absent), one Problem::str() per line, each reviewed against
// the consumer's rule: most golden inputs were written to cover rendering, and some of
// their values are ones Prometheus, Loki or the API server would refuse.
TEST(FieldChecks, GoldenHierarchiesHaveExactlyTheReviewedErrors) {
  const fs::path golden = fs::path(AOP_SOURCE_DIR) / "tests" / "agent" / "golden";
  for (const auto& e : fs::directory_iterator(golden)) {
    const std::string name = e.path().filename().string();
    SCOPED_TRACE(name);
    const auto problems = validate_files({e.path() / "input.yaml"});
    std::vector<std::string> expected;
    if (fs::exists(e.path() / "validation.txt")) {
      std::istringstream in(read_file(e.path() / "validation.txt"));
      for (std::string l; std::getline(in, l);) {
        if (!l.empty()) expected.push_back(l);
      }
    }
    EXPECT_EQ(problems, expected);
    if (problems != expected) {
      std::string text;
      for (const auto& p : problems) text += p + "\n";
      const fs::path out = fs::path(AOP_BINARY_DIR) / "tests" / "agent-golden" / name;
      fs::create_directories(out);
      std::ofstream(out / "validation.txt", std::ios::binary) << text;
    }
  }
}

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

#include "reconcile/runtime/invalid_objects.hpp"

#include <gtest/gtest.h>

#include "net/metrics.hpp"

namespace aop::runtime {
namespace {

TEST(InvalidObjects, CountsDistinctObjectsOverRootsAndKeepsAZeroSeriesWhenFixed) {
  net::metrics::Registry registry;
  InvalidObjects invalid("grafana-agent", &registry);
  invalid.set("ns/a", {{"ServiceMonitor", "apps", "web"}, {"Probe", "apps", "ping"}});
  // A member selected by two roots is one invalid object.
  invalid.set("ns/b", {{"ServiceMonitor", "apps", "web"}, {"ServiceMonitor", "apps", "db"}});
  EXPECT_EQ(invalid.count("ServiceMonitor"), 2u);
  EXPECT_EQ(invalid.count("Probe"), 1u);
  std::string text = registry.expose();
  EXPECT_NE(text.find("agent_operator_invalid_objects{controller=\"grafana-agent\","
                      "kind=\"ServiceMonitor\"} 2\n"),
            std::string::npos)
      << text;

  invalid.set("ns/a", {});
  EXPECT_EQ(invalid.count("ServiceMonitor"), 2u);
  EXPECT_EQ(invalid.count("Probe"), 0u);
  invalid.forget("ns/b");
  EXPECT_EQ(invalid.count("ServiceMonitor"), 0u);
  text = registry.expose();
  EXPECT_NE(text.find("kind=\"Probe\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("kind=\"ServiceMonitor\"} 0\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace aop::runtime

// Test fixtures for the telegraf controller: Namespace and Application objects as the
// API server would serve them, and the golden files under tests/telegraf/golden/.
#pragma once

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <boost/json.hpp>

namespace aop::telegraf::testing {

inline constexpr std::string_view kKey = "telegraf.influxdata.com/rubin-telegraf-operator";

inline boost::json::value make_namespace(std::string_view name,
                                         std::optional<std::string_view> annotation,
                                         std::string_view uid = "uid-ns") {
  boost::json::object meta{{"name", name}};
  if (!uid.empty()) meta["uid"] = uid;
  if (annotation) meta["annotations"] = boost::json::object{{kKey, *annotation}};
  return boost::json::object{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", meta}};
}

inline boost::json::value make_application(std::string_view ns, std::string_view name,
                                           std::optional<std::string_view> destination,
                                           std::optional<std::string_view> annotation,
                                           std::string_view uid = "uid-app") {
  boost::json::object meta{{"name", name}, {"namespace", ns}, {"uid", uid}};
  if (annotation) meta["annotations"] = boost::json::object{{kKey, *annotation}};
  boost::json::object dest{{"server", "https://kubernetes.default.svc"}};
  if (destination) dest["namespace"] = *destination;
  return boost::json::object{
      {"apiVersion", "argoproj.io/v1alpha1"},
      {"kind", "Application"},
      {"metadata", meta},
      {"spec", boost::json::object{{"project", "default"}, {"destination", dest}}},
  };
}

inline std::string read_golden(std::string_view name) {
  const std::string path =
      std::string(AOP_SOURCE_DIR) + "/tests/telegraf/golden/" + std::string(name);
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace aop::telegraf::testing

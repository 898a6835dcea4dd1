// Spec 5 ("Scale") against kube-sim: 10,000 annotated Namespaces with 10 endpoints each
// and a token Secret reconcile from cold (30,000 objects created), and then a resync
// with nothing changed makes ZERO writes (kube-sim counts them per User-Agent).
//
// The cold-reconcile time is printed, not asserted (tests make no timing assertions);
// bench/RESULTS.md has the figure from a release build:
//
//   cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release
//   ninja -C build/release telegraf_scale_sim_test kube-sim
//   build/release/tests/telegraf_scale_sim_test
//
// TELEGRAF_SCALE_NAMESPACES=<n> changes the number of namespaces (default 10,000).
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/k8s/sim_fixture.hpp"
#include "tests/telegraf/sim_harness.hpp"

namespace aop::telegraf::testing {
namespace {

// Writes a file for kube-sim's --preload (YAML documents) in gtest's temporary directory.
std::string write_preload(const std::string& name, const std::string& yaml) {
  const std::string path =
      ::testing::TempDir() + "telegraf-" + std::to_string(::getpid()) + "-" + name + ".yaml";
  std::ofstream(path) << yaml;
  return path;
}

using namespace std::chrono_literals;

constexpr int kEndpoints = 10;

// CPU seconds (user + system) of this process: the controller's side. On a shared
// machine the wall-clock figures mostly measure the other load; CPU time does not.
double own_cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// CPU seconds of another process (kube-sim), from /proc/<pid>/stat.
double process_cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; fields >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);  // utime, stime
    if (i == 15) break;
  }
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

int namespace_count() {
  // Read once, on the test's main thread before any other thread exists.
  const char* n = std::getenv("TELEGRAF_SCALE_NAMESPACES");  // NOLINT(concurrency-mt-unsafe)
  if (n != nullptr && *n != '\0') {
    return std::max(1, std::atoi(n));
  }
  return 10'000;
}

// Seven plain `name: url` items and three with per-endpoint options (as the benchmark).
std::string annotation(const std::string& ns) {
  std::string yaml;
  for (int i = 0; i < kEndpoints; ++i) {
    const std::string url = "http://service-" + std::to_string(i) + "." + ns +
                            ".svc:" + std::to_string(8080 + i) + "/metrics";
    if (i < 7) {
      yaml += "- endpoint_" + std::to_string(i) + ": \"" + url + "\"\n";
    } else {
      yaml += "- endpoint_" + std::to_string(i) + ":\n    url: \"" + url +
              "\"\n    interval: 30s\n    metric_version: 1\n    tags:\n      tier: backend\n";
    }
  }
  return yaml;
}

// YAML for kube-sim's --preload: the namespaces (annotation as a JSON string, which is
// valid YAML and keeps the newlines), the operator namespace and the token Secret.
std::string cluster_yaml(int namespaces) {
  std::ostringstream out;
  const std::string key = TelegrafOptions{}.annotation_key;
  for (int i = 0; i < namespaces; ++i) {
    const std::string name = "application-" + std::to_string(i);
    out << "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " << name
        << "\n  annotations:\n    " << key << ": " << json::serialize(json::value(annotation(name)))
        << "\n---\n";
  }
  out << "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: operator\n---\n"
      << "apiVersion: v1\nkind: Secret\nmetadata:\n  name: influxdb-token\n  namespace: operator\n"
      << "data:\n  token: dG9rZW4tZm9yLXRoZS1zY2FsZS10ZXN0\n";
  return out.str();
}

TEST(TelegrafScaleSimTest,
     TenThousandNamespacesReconcileFromColdAndAnUnchangedResyncWritesNothing) {
  const int n = namespace_count();
  net::log::configure(net::log::Level::warn, net::log::Format::text);  // 30,000 "created" lines
  HarnessOptions ho;
  ho.sim_args = {"--preload", write_preload("scale", cluster_yaml(n)), "--watch-history", "100000"};
  ho.options.token_secret = SecretKeyRef{"operator", "influxdb-token", "token"};
  ho.workers = 8;
  Harness h(std::move(ho));

  h.factory->start();
  ASSERT_TRUE(tst::wait_until([&] { return h.module->not_ready_reason().empty(); }, 300s))
      << h.module->not_ready_reason();

  // Cold: every namespace gets its ConfigMap, Secret and Deployment; one create each.
  const auto cold_start = std::chrono::steady_clock::now();
  const double cold_cpu = own_cpu_seconds();
  const double cold_sim_cpu = process_cpu_seconds(tst::require_kube_sim(*h.cluster).pid());
  h.module->start_reconciling();
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return h.module->stats().managed_namespaces == static_cast<std::size_t>(n) &&
               h.module->idle();
      },
      1800s))
      << "managed: " << h.module->stats().managed_namespaces << " of " << n;
  const double cold_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - cold_start).count();
  const double cold_cpu_s = own_cpu_seconds() - cold_cpu;
  const double cold_sim_cpu_s =
      process_cpu_seconds(tst::require_kube_sim(*h.cluster).pid()) - cold_sim_cpu;
  const auto cold_writes = h.controller_writes();
  EXPECT_EQ(cold_writes, static_cast<std::uint64_t>(3 * n));
  EXPECT_EQ(h.module->stats().endpoints, static_cast<std::size_t>(n * kEndpoints));
  EXPECT_FALSE(h.config_map("application-" + std::to_string(n - 1)).is_null());
  std::cout << "[ figures  ] cold reconcile of " << n << " annotated namespaces (" << kEndpoints
            << " endpoints each): " << cold_s << " s wall, " << cold_cpu_s
            << " s CPU in the controller, " << cold_sim_cpu_s << " s CPU in kube-sim, "
            << cold_writes << " writes, " << h.module->stats().reconciles << " reconciles\n";

  // A resync with nothing changed: every target reconciled again, not one write.
  const auto reconciles = h.module->stats().reconciles;
  const auto resync_start = std::chrono::steady_clock::now();
  const double resync_cpu = own_cpu_seconds();
  const double resync_sim_cpu = process_cpu_seconds(tst::require_kube_sim(*h.cluster).pid());
  h.module->resync_now();
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return h.module->stats().reconciles >= reconciles + static_cast<std::uint64_t>(n) &&
               h.module->idle();
      },
      1800s));
  const double resync_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - resync_start).count();
  EXPECT_EQ(h.controller_writes(), cold_writes) << "an unchanged resync wrote";
  for (int i : {0, n / 2, n - 1}) {
    EXPECT_GE(h.module->reconciles("application-" + std::to_string(i)), 2u) << i;
  }
  std::cout << "[ figures  ] unchanged resync of " << n << " namespaces: " << resync_s
            << " s wall, " << own_cpu_seconds() - resync_cpu << " s CPU in the controller, "
            << process_cpu_seconds(tst::require_kube_sim(*h.cluster).pid()) - resync_sim_cpu
            << " s CPU in kube-sim, " << (h.controller_writes() - cold_writes) << " writes\n";
}

}  // namespace
}  // namespace aop::telegraf::testing

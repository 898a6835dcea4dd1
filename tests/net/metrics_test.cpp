// Prometheus text exposition: format, label escaping, histogram buckets.
#include "net/metrics.hpp"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <regex>
#include <stdexcept>
#include <thread>

namespace aop::net::metrics {
namespace {

TEST(Metrics, CounterWithLabelsIsExposedSortedWithHelpAndType) {
  Registry r;
  auto& requests = r.counter("rest_client_requests_total", "Requests by code.", {"code", "method"});
  requests.with({"200", "GET"}).inc();
  requests.with({"200", "GET"}).inc(2);
  requests.with({"404", "DELETE"}).inc();
  r.gauge("workqueue_depth", "Depth.", {"name"}).with({"agent"}).set(7);
  EXPECT_EQ(r.expose(),
            "# HELP rest_client_requests_total Requests by code.\n"
            "# TYPE rest_client_requests_total counter\n"
            "rest_client_requests_total{code=\"200\",method=\"GET\"} 3\n"
            "rest_client_requests_total{code=\"404\",method=\"DELETE\"} 1\n"
            "# HELP workqueue_depth Depth.\n"
            "# TYPE workqueue_depth gauge\n"
            "workqueue_depth{name=\"agent\"} 7\n");
}

TEST(Metrics, LabelValuesNeverShowUrlCredentials) {
  Registry r;
  r.counter("requests_total", "Requests.", {"target"}).with({"https://u:pw@h:1/?token=t"}).inc();
  const std::string text = r.expose();
  EXPECT_NE(text.find("requests_total{target=\"https://REDACTED@h:1/?token=REDACTED\"} 1"),
            std::string::npos)
      << text;
}

TEST(Metrics, LabelValuesAreEscaped) {
  EXPECT_EQ(escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  Registry r;
  r.counter("x_total", "X.", {"path"}).with({"C:\\dir \"q\"\nnext"}).inc();
  EXPECT_NE(r.expose().find("x_total{path=\"C:\\\\dir \\\"q\\\"\\nnext\"} 1\n"), std::string::npos)
      << r.expose();
}

TEST(Metrics, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  Registry r;
  auto& h = r.histogram("reconcile_time_seconds", "Time.", {"controller"}, {0.1, 0.5, 1});
  auto& child = h.with({"agent"});
  child.observe(0.05);
  child.observe(0.1);  // a value equal to a bound counts in that bucket (le)
  child.observe(0.3);
  child.observe(2);
  EXPECT_EQ(r.expose(),
            "# HELP reconcile_time_seconds Time.\n"
            "# TYPE reconcile_time_seconds histogram\n"
            "reconcile_time_seconds_bucket{controller=\"agent\",le=\"0.1\"} 2\n"
            "reconcile_time_seconds_bucket{controller=\"agent\",le=\"0.5\"} 3\n"
            "reconcile_time_seconds_bucket{controller=\"agent\",le=\"1\"} 3\n"
            "reconcile_time_seconds_bucket{controller=\"agent\",le=\"+Inf\"} 4\n"
            "reconcile_time_seconds_sum{controller=\"agent\"} 2.45\n"
            "reconcile_time_seconds_count{controller=\"agent\"} 4\n");
}

TEST(Metrics, HistogramWithoutLabels) {
  Registry r;
  r.histogram("h", "H.", {}, {1})().observe(0.5);
  EXPECT_NE(
      r.expose().find("h_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 1\nh_sum 0.5\nh_count 1\n"),
      std::string::npos)
      << r.expose();
}

TEST(Metrics, UnsortedBoundsAreSorted) {
  Histogram h({5, 1, 2});
  h.observe(1.5);
  const auto s = h.snapshot();
  EXPECT_EQ(s.upper_bounds, (std::vector<double>{1, 2, 5}));
  EXPECT_EQ(s.cumulative_counts, (std::vector<std::uint64_t>{0, 1, 1, 1}));
}

TEST(Metrics, GaugeCallbackIsEvaluatedAtScrape) {
  Registry r;
  double depth = 1;
  r.gauge_callback("queue_depth", "Depth.", [&] { return depth; });
  depth = 42;
  EXPECT_NE(r.expose().find("queue_depth 42\n"), std::string::npos);
}

TEST(Metrics, CounterCallbackIsACounter) {
  Registry r;
  r.counter_callback("work_seconds_total", "Work.", [] { return 2.5; });
  EXPECT_NE(r.expose().find("# TYPE work_seconds_total counter\nwork_seconds_total 2.5\n"),
            std::string::npos);
}

double scraped(const std::string& text, const std::string& name) {
  std::smatch m;
  const std::regex line("(^|\n)" + name + " (\\S+)\n");
  if (!std::regex_search(text, m, line)) return -12345;
  return std::stod(m[2]);
}

TEST(ProcessMetrics, ReadFromProc) {
  Registry r;
  register_process_metrics(r);
  const std::string before = r.expose();
  for (const char* type :
       {"# TYPE process_cpu_seconds_total counter", "# TYPE process_resident_memory_bytes gauge",
        "# TYPE process_start_time_seconds gauge"}) {
    EXPECT_NE(before.find(type), std::string::npos) << type;
  }
  EXPECT_GE(scraped(before, "process_cpu_seconds_total"), 0);
  const double rss = scraped(before, "process_resident_memory_bytes");
  EXPECT_GT(rss, 1 << 20);  // a running test binary holds more than 1 MiB
  EXPECT_GE(scraped(before, "process_virtual_memory_bytes"), rss);
  rlimit limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
  EXPECT_EQ(scraped(before, "process_max_fds"), static_cast<double>(limit.rlim_cur));
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const double start = scraped(before, "process_start_time_seconds");
  EXPECT_LE(start, now + 1);
  EXPECT_GT(start, now - 86400);  // this test process did not start yesterday
  // One more open file is one more descriptor.
  const double fds = scraped(before, "process_open_fds");
  EXPECT_GE(fds, 3);
  std::FILE* f = std::fopen("/proc/self/stat", "r");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(scraped(r.expose(), "process_open_fds"), fds + 1);
  std::fclose(f);
  // CPU time only grows.
  volatile double sink = 0;
  for (int i = 0; i < 20'000'000; ++i) sink = sink + i;
  EXPECT_GT(scraped(r.expose(), "process_cpu_seconds_total"),
            scraped(before, "process_cpu_seconds_total"));
}

TEST(Metrics, LabelledCallbackGaugeIsComputedAtScrapeTimeInLabelOrder) {
  Registry r;
  double age = 1;
  r.gauge_callback("last_event_age_seconds", "Age.", {"kind"}, [&] {
    return Registry::Samples{{{"Secret"}, age}, {{"ConfigMap"}, 2 * age}};
  });
  age = 1.5;
  EXPECT_NE(r.expose().find("# TYPE last_event_age_seconds gauge\n"
                            "last_event_age_seconds{kind=\"ConfigMap\"} 3\n"
                            "last_event_age_seconds{kind=\"Secret\"} 1.5\n"),
            std::string::npos)
      << r.expose();
}

TEST(Metrics, SpecialValues) {
  Registry r;
  r.gauge("g", "G.")().set(std::numeric_limits<double>::infinity());
  r.gauge("h", "H.")().set(0.000123);
  const std::string text = r.expose();
  EXPECT_NE(text.find("g +Inf\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h 0.000123\n"), std::string::npos) << text;
}

TEST(Metrics, ReRegisteringReturnsTheSameFamilyAndConflictsThrow) {
  Registry r;
  auto& a = r.counter("c_total", "C.", {"x"});
  auto& b = r.counter("c_total", "C.", {"x"});
  EXPECT_EQ(&a, &b);
  EXPECT_THROW(r.gauge("c_total", "C.", {"x"}), std::logic_error);
  EXPECT_THROW(r.counter("c_total", "C.", {"y"}), std::logic_error);
  EXPECT_THROW(a.with({"1", "2"}), std::logic_error);
}

TEST(Metrics, ConcurrentUpdatesAreNotLost) {
  Registry r;
  auto& c = r.counter("n_total", "N.", {"k"});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) c.with({i % 2 ? "a" : "b"}).inc();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.with({"a"}).value() + c.with({"b"}).value(), 40000);
}

TEST(Metrics, ExponentialBuckets) {
  EXPECT_EQ(exponential_buckets(0.005, 2, 4), (std::vector<double>{0.005, 0.01, 0.02, 0.04}));
}

}  // namespace
}  // namespace aop::net::metrics

TEST(MetricsExposition, HelpTextEscapesBackslashAndNewline) {
  aop::net::metrics::Registry r;
  r.counter("odd_help_total", "first line\nsecond \\ line").with({}).inc();
  const std::string text = r.expose();
  EXPECT_NE(text.find("# HELP odd_help_total first line\\nsecond \\\\ line\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\nodd_help_total 1\n"), std::string::npos) << text;
}

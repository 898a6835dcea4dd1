// Prometheus metrics: counters, gauges and histograms with labels, exposed in the
// text format (version 0.0.4) by the operator's /metrics endpoint.
//
// Updates are lock-free atomics; looking up a labelled child takes the family's mutex,
// so hot paths look a child up once and keep the reference (children are never moved
// or freed while the registry lives). Label values must never carry secret data.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace aop::net::metrics {

class Counter {
 public:
  void inc(double v = 1.0) { value_.fetch_add(v, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class Gauge {
 public:
  void set(double v) { value_.store(v, std::memory_order_relaxed); }
  void inc(double v = 1.0) { value_.fetch_add(v, std::memory_order_relaxed); }
  void dec(double v = 1.0) { value_.fetch_sub(v, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class Histogram {
 public:
  explicit Histogram(const std::vector<double>& upper_bounds);
  void observe(double v);

  struct Snapshot {
    std::vector<double> upper_bounds;
    std::vector<std::uint64_t> cumulative_counts;  // one per bound, then +Inf
    double sum = 0;
    std::uint64_t count = 0;
  };
  Snapshot snapshot() const;

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;  // bounds_.size() + 1
  std::atomic<double> sum_{0.0};
  std::atomic<std::uint64_t> count_{0};
};

enum class Type { counter, gauge, histogram };

// A metric name with a fixed set of label names and one child per label-value tuple.
template <class Metric>
class Family {
 public:
  Family(std::vector<std::string> label_names, std::vector<double> buckets)
      : label_names_(std::move(label_names)), buckets_(std::move(buckets)) {}

  // The child for these label values (in label-name order), created on first use.
  Metric& with(std::initializer_list<std::string_view> values);
  Metric& with(const std::vector<std::string>& values);
  // The child of a family without labels.
  Metric& operator()() { return with({}); }

  const std::vector<std::string>& label_names() const { return label_names_; }
  // Visits children in label-value order (stable output).
  void for_each(
      const std::function<void(const std::vector<std::string>&, const Metric&)>& fn) const;

 private:
  Metric& child(std::vector<std::string> key);

  std::vector<std::string> label_names_;
  std::vector<double> buckets_;
  mutable std::mutex mutex_;  // owns children_
  std::map<std::vector<std::string>, std::unique_ptr<Metric>> children_;
};

class Registry {
 public:
  // Registering an existing name with the same type returns the existing family; a
  // different type or label set is a programmer error (throws std::logic_error).
  Family<Counter>& counter(std::string_view name, std::string_view help,
                           std::vector<std::string> label_names = {});
  Family<Gauge>& gauge(std::string_view name, std::string_view help,
                       std::vector<std::string> label_names = {});
  Family<Histogram>& histogram(std::string_view name, std::string_view help,
                               std::vector<std::string> label_names, std::vector<double> buckets);
  // A gauge whose value is computed when scraped (e.g. a queue's depth).
  void gauge_callback(std::string_view name, std::string_view help, std::function<double()> fn);
  // A counter whose value is computed when scraped (e.g. CPU seconds read from /proc).
  void counter_callback(std::string_view name, std::string_view help, std::function<double()> fn);
  // A labelled gauge computed when scraped: `fn` returns one (label values, value) pair
  // per series (e.g. the age of each informer's last event). Registering the name again
  // replaces the function.
  using Samples = std::vector<std::pair<std::vector<std::string>, double>>;
  void gauge_callback(std::string_view name, std::string_view help,
                      std::vector<std::string> label_names, std::function<Samples()> fn);

  // Prometheus text exposition format 0.0.4, families sorted by name.
  std::string expose() const;

 private:
  struct Entry {
    Type type;
    std::string help;
    std::vector<std::string> label_names;
    std::unique_ptr<Family<Counter>> counters;
    std::unique_ptr<Family<Gauge>> gauges;
    std::unique_ptr<Family<Histogram>> histograms;
    std::function<double()> callback;
    std::function<Samples()> samples;
  };
  Entry& entry(std::string_view name, Type type, std::string_view help,
               const std::vector<std::string>& label_names);

  mutable std::mutex mutex_;  // owns entries_
  std::map<std::string, Entry, std::less<>> entries_;
};

// The process-wide registry served on /metrics.
Registry& registry();

// Registers the Prometheus client conventions' process_* metrics, read from /proc/self
// when scraped: process_cpu_seconds_total, process_resident_memory_bytes,
// process_virtual_memory_bytes, process_open_fds, process_max_fds,
// process_start_time_seconds. Idempotent.
void register_process_metrics(Registry& r);

// `count` bounds: start, start*factor, start*factor^2, ...
std::vector<double> exponential_buckets(double start, double factor, int count);

// Escapes a label value for the text format (backslash, quote, newline).
std::string escape_label_value(std::string_view v);

}  // namespace aop::net::metrics

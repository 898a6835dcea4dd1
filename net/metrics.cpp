#include "net/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "net/redact.hpp"

namespace aop::net::metrics {

Histogram::Histogram(const std::vector<double>& upper_bounds)
    : bounds_(upper_bounds), buckets_(new std::atomic<std::uint64_t>[upper_bounds.size() + 1]) {
  std::sort(bounds_.begin(), bounds_.end());
  for (std::size_t i = 0; i <= bounds_.size(); ++i) buckets_[i].store(0);
}

void Histogram::observe(double v) {
  const auto it = std::lower_bound(bounds_.begin(), bounds_.end(), v);
  buckets_[static_cast<std::size_t>(it - bounds_.begin())].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot s;
  s.upper_bounds = bounds_;
  std::uint64_t running = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    s.cumulative_counts.push_back(running);
  }
  s.sum = sum_.load(std::memory_order_relaxed);
  s.count = running;
  return s;
}

template <class Metric>
Metric& Family<Metric>::child(std::vector<std::string> key) {
  if (key.size() != label_names_.size()) {
    throw std::logic_error("metric: wrong number of label values");
  }
  const std::lock_guard lock(mutex_);
  auto it = children_.find(key);
  if (it == children_.end()) {
    std::unique_ptr<Metric> m;
    if constexpr (std::is_same_v<Metric, Histogram>) {
      m = std::make_unique<Histogram>(buckets_);
    } else {
      m = std::make_unique<Metric>();
    }
    it = children_.emplace(std::move(key), std::move(m)).first;
  }
  return *it->second;
}

template <class Metric>
Metric& Family<Metric>::with(std::initializer_list<std::string_view> values) {
  std::vector<std::string> key;
  key.reserve(values.size());
  for (auto v : values) key.emplace_back(v);
  return child(std::move(key));
}

template <class Metric>
Metric& Family<Metric>::with(const std::vector<std::string>& values) {
  return child(values);
}

template <class Metric>
void Family<Metric>::for_each(
    const std::function<void(const std::vector<std::string>&, const Metric&)>& fn) const {
  const std::lock_guard lock(mutex_);
  for (const auto& [key, m] : children_) fn(key, *m);
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

Registry::Entry& Registry::entry(std::string_view name, Type type, std::string_view help,
                                 const std::vector<std::string>& label_names) {
  auto it = entries_.find(name);
  if (it != entries_.end()) {
    if (it->second.type != type || it->second.label_names != label_names) {
      throw std::logic_error("metric " + std::string(name) + " registered twice differently");
    }
    return it->second;
  }
  Entry e;
  e.type = type;
  e.help = std::string(help);
  e.label_names = label_names;
  return entries_.emplace(std::string(name), std::move(e)).first->second;
}

Family<Counter>& Registry::counter(std::string_view name, std::string_view help,
                                   std::vector<std::string> label_names) {
  const std::lock_guard lock(mutex_);
  Entry& e = entry(name, Type::counter, help, label_names);
  if (!e.counters)
    e.counters = std::make_unique<Family<Counter>>(std::move(label_names), std::vector<double>{});
  return *e.counters;
}

Family<Gauge>& Registry::gauge(std::string_view name, std::string_view help,
                               std::vector<std::string> label_names) {
  const std::lock_guard lock(mutex_);
  Entry& e = entry(name, Type::gauge, help, label_names);
  if (e.callback) throw std::logic_error("metric " + std::string(name) + " is a callback gauge");
  if (!e.gauges)
    e.gauges = std::make_unique<Family<Gauge>>(std::move(label_names), std::vector<double>{});
  return *e.gauges;
}

Family<Histogram>& Registry::histogram(std::string_view name, std::string_view help,
                                       std::vector<std::string> label_names,
                                       std::vector<double> buckets) {
  const std::lock_guard lock(mutex_);
  Entry& e = entry(name, Type::histogram, help, label_names);
  if (!e.histograms) {
    e.histograms = std::make_unique<Family<Histogram>>(std::move(label_names), std::move(buckets));
  }
  return *e.histograms;
}

void Registry::gauge_callback(std::string_view name, std::string_view help,
                              std::function<double()> fn) {
  const std::lock_guard lock(mutex_);
  Entry& e = entry(name, Type::gauge, help, {});
  if (e.gauges) throw std::logic_error("metric " + std::string(name) + " is a plain gauge");
  e.callback = std::move(fn);
}

void Registry::counter_callback(std::string_view name, std::string_view help,
                                std::function<double()> fn) {
  const std::lock_guard lock(mutex_);
  Entry& e = entry(name, Type::counter, help, {});
  if (e.counters) throw std::logic_error("metric " + std::string(name) + " is a plain counter");
  e.callback = std::move(fn);
}

void Registry::gauge_callback(std::string_view name, std::string_view help,
                              std::vector<std::string> label_names, std::function<Samples()> fn) {
  const std::lock_guard lock(mutex_);
  Entry& e = entry(name, Type::gauge, help, label_names);
  if (e.gauges) throw std::logic_error("metric " + std::string(name) + " is a plain gauge");
  e.samples = std::move(fn);
}

std::string escape_label_value(std::string_view v) {
  // Label values are kinds, verbs and names, but one quoting a URL must not expose the
  // credentials in it.
  std::string redacted;
  if (v.find("://") != std::string_view::npos) {
    redacted = redact(v);
    v = redacted;
  }
  std::string out;
  out.reserve(v.size());
  for (const char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

// HELP text escapes only backslash and newline (text format 0.0.4).
std::string escape_help(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (const char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string format_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  for (int precision = 1; precision <= 17; ++precision) {
    char shorter[32];
    std::snprintf(shorter, sizeof shorter, "%.*g", precision, v);
    if (std::strtod(shorter, nullptr) == v) return shorter;
  }
  return buf;
}

std::string label_block(const std::vector<std::string>& names,
                        const std::vector<std::string>& values, std::string_view extra_name = {},
                        std::string_view extra_value = {}) {
  if (names.empty() && extra_name.empty()) return {};
  std::string out = "{";
  bool first = true;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (!first) out += ',';
    first = false;
    out += names[i];
    out += "=\"";
    out += escape_label_value(values[i]);
    out += '"';
  }
  if (!extra_name.empty()) {
    if (!first) out += ',';
    out += extra_name;
    out += "=\"";
    out += extra_value;
    out += '"';
  }
  out += '}';
  return out;
}

}  // namespace

std::string Registry::expose() const {
  const std::lock_guard lock(mutex_);
  std::string out;
  for (const auto& entry : entries_) {
    // Named, not a structured binding: the lambdas below capture them (clang 14).
    const std::string& name = entry.first;
    const Entry& e = entry.second;
    out += "# HELP " + name + " " + escape_help(e.help) + "\n";
    switch (e.type) {
      case Type::counter:
        out += "# TYPE " + name + " counter\n";
        if (e.callback) {
          out += name + " " + format_value(e.callback()) + "\n";
        } else if (e.counters) {
          e.counters->for_each([&](const std::vector<std::string>& labels, const Counter& c) {
            out += name + label_block(e.label_names, labels) + " " + format_value(c.value()) + "\n";
          });
        }
        break;
      case Type::gauge:
        out += "# TYPE " + name + " gauge\n";
        if (e.callback) {
          out += name + " " + format_value(e.callback()) + "\n";
        } else if (e.samples) {
          auto samples = e.samples();
          std::sort(samples.begin(), samples.end());
          for (const auto& [labels, value] : samples) {
            if (labels.size() != e.label_names.size()) continue;  // a programmer error
            out += name + label_block(e.label_names, labels) + " " + format_value(value) + "\n";
          }
        } else if (e.gauges) {
          e.gauges->for_each([&](const std::vector<std::string>& labels, const Gauge& g) {
            out += name + label_block(e.label_names, labels) + " " + format_value(g.value()) + "\n";
          });
        }
        break;
      case Type::histogram:
        out += "# TYPE " + name + " histogram\n";
        if (e.histograms) {
          e.histograms->for_each([&](const std::vector<std::string>& labels, const Histogram& h) {
            const auto s = h.snapshot();
            for (std::size_t i = 0; i < s.upper_bounds.size(); ++i) {
              out += name + "_bucket" +
                     label_block(e.label_names, labels, "le", format_value(s.upper_bounds[i])) +
                     " " + std::to_string(s.cumulative_counts[i]) + "\n";
            }
            out += name + "_bucket" + label_block(e.label_names, labels, "le", "+Inf") + " " +
                   std::to_string(s.count) + "\n";
            out += name + "_sum" + label_block(e.label_names, labels) + " " + format_value(s.sum) +
                   "\n";
            out += name + "_count" + label_block(e.label_names, labels) + " " +
                   std::to_string(s.count) + "\n";
          });
        }
        break;
    }
  }
  return out;
}

Registry& registry() {
  static Registry instance;
  return instance;
}

std::vector<double> exponential_buckets(double start, double factor, int count) {
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(count));
  double v = start;
  for (int i = 0; i < count; ++i) {
    out.push_back(v);
    v *= factor;
  }
  return out;
}

}  // namespace aop::net::metrics

#include "reconcile/telegraf/config.hpp"

#include <sstream>

#include <toml++/toml.h>

namespace aop::telegraf {
namespace {

constexpr auto kFormat = toml::format_flags::none;  // basic strings, ASCII only

// Appends `<indent><key> = <value>\n`, the pair printed by toml++.
class PairWriter {
 public:
  explicit PairWriter(std::string& out) : out_(out) {}

  template <class V>
  void pair(std::string_view indent, std::string_view key, V&& value) {
    one_.clear();
    one_.insert(key, std::forward<V>(value));
    stream_.str(std::string{});
    stream_ << toml::toml_formatter(one_, kFormat);
    out_ += indent;
    out_ += stream_.view();
    out_ += '\n';
  }

  void text(std::string_view s) { out_ += s; }

 private:
  std::string& out_;
  toml::table one_;
  std::ostringstream stream_;
};

toml::array one_string(std::string_view s) {
  toml::array a;
  a.push_back(std::string(s));
  return a;
}

}  // namespace

std::string bucket_name(std::string_view application) {
  std::string out(application);
  for (char& c : out) {
    if (c == '-') c = '_';
  }
  return out;
}

std::string render_telegraf_config(std::string_view application,
                                   std::span<const Endpoint> endpoints,
                                   const TelegrafOptions& options) {
  const std::string bucket = bucket_name(application);
  std::string out;
  out.reserve(600 + endpoints.size() * 220);
  PairWriter w(out);

  w.text("[global_tags]\n");
  w.pair("  ", "cluster", options.cluster_name);
  w.pair("  ", "application", std::string(application));

  w.text("\n[agent]\n");
  w.pair("  ", "interval", options.interval);
  w.pair("  ", "flush_interval", options.flush_interval);
  w.pair("  ", "collection_jitter", options.collection_jitter);
  w.pair("  ", "metric_batch_size", options.metric_batch_size);
  w.pair("  ", "metric_buffer_limit", options.metric_buffer_limit);
  w.pair("  ", "omit_hostname", true);

  for (const Endpoint& ep : endpoints) {
    w.text("\n[[inputs.prometheus]]\n");
    w.pair("  ", "urls", one_string(ep.url));
    w.pair("  ", "metric_version", static_cast<std::int64_t>(ep.metric_version));
    w.pair("  ", "name_override", "prometheus_" + ep.name);
    if (ep.interval) w.pair("  ", "interval", *ep.interval);
    w.text("  [inputs.prometheus.tags]\n");
    w.pair("    ", kAppTag, bucket);
    for (const auto& [key, value] : ep.tags) {
      if (key != kAppTag) w.pair("    ", key, value);  // a duplicate key would be invalid TOML
    }
  }

  w.text("\n[[outputs.influxdb_v2]]\n");
  w.pair("  ", "urls", one_string(options.influxdb_url));
  w.pair("  ", "token", "${" + std::string(kTokenEnv) + "}");
  w.pair("  ", "organization", options.influxdb_org);
  w.pair("  ", "bucket", bucket);
  return out;
}

}  // namespace aop::telegraf

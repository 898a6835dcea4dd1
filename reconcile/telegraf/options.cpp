#include "reconcile/telegraf/options.hpp"

#include "k8s/duration.hpp"

#include <algorithm>

#include "reconcile/telegraf/validation.hpp"

namespace aop::telegraf {

Result<SecretKeyRef> parse_secret_key_ref(std::string_view text) {
  const auto slash = text.find('/');
  const auto colon = text.rfind(':');
  if (slash == std::string_view::npos || colon == std::string_view::npos || colon < slash) {
    return make_error("token secret " + describe(text) + ": expected namespace/name:key");
  }
  SecretKeyRef ref{std::string(text.substr(0, slash)),
                   std::string(text.substr(slash + 1, colon - slash - 1)),
                   std::string(text.substr(colon + 1))};
  if (!is_dns_label(ref.ns)) {
    return make_error("token secret " + describe(text) + ": " + describe(ref.ns) +
                      " is not a namespace name");
  }
  if (ref.name.empty() || ref.key.empty()) {
    return make_error("token secret " + describe(text) + ": expected namespace/name:key");
  }
  return ref;
}

bool TelegrafOptions::watches_application_namespace(std::string_view ns) const {
  return all_application_namespaces ||
         std::find(application_namespaces.begin(), application_namespaces.end(), ns) !=
             application_namespaces.end();
}

std::vector<std::string> validate_options(const TelegrafOptions& o) {
  std::vector<std::string> errors;
  auto text = [&](std::string_view option, const std::string& value) {
    if (value.empty()) {
      errors.push_back(std::string(option) + " is empty");
    } else if (auto c = check_tag_text(value)) {
      errors.push_back(std::string(option) + " " + describe(value) + " " + *c);
    }
  };
  auto duration = [&](std::string_view option, const std::string& value, bool allow_zero) {
    auto d = k8s::parse_go_duration(value);
    if (!d) {
      errors.push_back(std::string(option) + ": " + d.error().message +
                       "; expected a Go duration such as 30s or 2m");
    } else if (d->count() < 0 || (!allow_zero && d->count() == 0)) {
      errors.push_back(std::string(option) + ": " + describe(value) + " must be " +
                       (allow_zero ? "zero or positive" : "positive"));
    }
  };
  if (o.annotation_key.empty()) errors.push_back("annotation key is empty");
  if (!o.all_application_namespaces) {
    for (const auto& ns : o.application_namespaces) {
      if (!is_dns_label(ns)) {
        errors.push_back("application namespace " + describe(ns) + " is not a namespace name");
      }
    }
  }
  text("cluster name", o.cluster_name);
  duration("interval", o.interval, false);
  duration("flush interval", o.flush_interval, false);
  duration("collection jitter", o.collection_jitter, true);
  if (o.metric_batch_size <= 0) errors.push_back("metric batch size must be positive");
  if (o.metric_buffer_limit < o.metric_batch_size) {
    errors.push_back("metric buffer limit must be at least the metric batch size");
  }
  if (auto c = check_http_url(o.influxdb_url)) {
    errors.push_back("InfluxDB URL " + describe(o.influxdb_url) + ": " + *c);
  }
  text("InfluxDB organization", o.influxdb_org);
  if (o.image.empty()) errors.push_back("telegraf image is empty");
  for (const auto* q : {&o.resources.cpu_request, &o.resources.memory_request,
                        &o.resources.cpu_limit, &o.resources.memory_limit}) {
    if (q->empty()) errors.push_back("a resource request or limit is empty");
  }
  if (o.run_as_user <= 0) errors.push_back("run-as user must be a non-root uid (> 0)");
  if (o.run_as_group < 0) errors.push_back("run-as group must not be negative");
  if (o.managed_by.empty()) errors.push_back("managed-by value is empty");
  return errors;
}

}  // namespace aop::telegraf

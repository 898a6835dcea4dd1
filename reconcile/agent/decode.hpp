// Decoding of the controller's custom resources from JSON into the structs of types.hpp.
// Every error names its JSON path (`spec.endpoints[2].port: expected string, got number`);
// all problems of one object are reported together, joined with "; ".
#pragma once

#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "net/result.hpp"
#include "reconcile/agent/types.hpp"

namespace aop::agent {

Result<GrafanaAgent> decode_grafana_agent(const boost::json::value& v);
Result<MetricsInstance> decode_metrics_instance(const boost::json::value& v);
Result<LogsInstance> decode_logs_instance(const boost::json::value& v);
Result<PodLogs> decode_pod_logs(const boost::json::value& v);
Result<Integration> decode_integration(const boost::json::value& v);
Result<ServiceMonitor> decode_service_monitor(const boost::json::value& v);
Result<PodMonitor> decode_pod_monitor(const boost::json::value& v);
Result<Probe> decode_probe(const boost::json::value& v);

// A list of PipelineStageSpec (the parsed form of a `match.stages` YAML string). `path`
// prefixes error messages. Members the CRD does not know are ignored.
Result<std::vector<PipelineStageSpec>> decode_pipeline_stages(const boost::json::value& list,
                                                              const std::string& path);

// Metadata only (name, namespace, uid, labels, ...), for objects of any kind.
Result<ObjectMeta> decode_metadata(const boost::json::value& v);

}  // namespace aop::agent

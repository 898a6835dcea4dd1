#include "reconcile/telegraf/objects.hpp"

#include <boost/json/array.hpp>

#include "k8s/base64.hpp"
#include "reconcile/telegraf/config.hpp"

namespace aop::telegraf {
namespace json = boost::json;
namespace {

json::object selector_labels() {
  return json::object{{"app.kubernetes.io/name", "telegraf"},
                      {"app.kubernetes.io/instance", kDeploymentName}};
}

json::object metadata(std::string_view name, const TargetPlan& plan,
                      const TelegrafOptions& options) {
  json::object meta{
      {"name", name},
      {"namespace", plan.ns},
      {"labels", managed_labels(options)},
      {"annotations", json::object{{kSourcesAnnotation, sources_annotation(plan.sources)}}},
  };
  if (plan.owner) {
    meta["ownerReferences"] = json::array{json::object{
        {"apiVersion", "v1"},
        {"kind", "Namespace"},
        {"name", plan.owner->name},
        {"uid", plan.owner->uid},
    }};
  }
  return meta;
}

json::object deployment(const TargetPlan& plan, const TelegrafOptions& options,
                        const std::string& hash) {
  json::object pod_labels = managed_labels(options);
  json::object container{
      {"name", "telegraf"},
      {"image", options.image},
      {"args", json::array{"--config", std::string(kConfigDir) + "/" + std::string(kConfigKey)}},
  };
  if (options.token_secret) {
    container["env"] = json::array{json::object{
        {"name", kTokenEnv},
        {"valueFrom",
         json::object{{"secretKeyRef", json::object{{"name", kSecretName}, {"key", kTokenKey}}}}},
    }};
  }
  container["resources"] = json::object{
      {"requests", json::object{{"cpu", options.resources.cpu_request},
                                {"memory", options.resources.memory_request}}},
      {"limits", json::object{{"cpu", options.resources.cpu_limit},
                              {"memory", options.resources.memory_limit}}},
  };
  container["securityContext"] = json::object{
      {"allowPrivilegeEscalation", false},
      {"readOnlyRootFilesystem", true},
      {"runAsNonRoot", true},
      {"capabilities", json::object{{"drop", json::array{"ALL"}}}},
  };
  container["volumeMounts"] = json::array{json::object{
      {"name", "config"},
      {"mountPath", kConfigDir},
      {"readOnly", true},
  }};

  json::object pod_spec{
      {"automountServiceAccountToken", false},
      {"securityContext",
       json::object{
           {"runAsNonRoot", true},
           {"runAsUser", options.run_as_user},
           {"runAsGroup", options.run_as_group},
           {"seccompProfile", json::object{{"type", "RuntimeDefault"}}},
       }},
      {"containers", json::array{std::move(container)}},
      {"volumes", json::array{json::object{
                      {"name", "config"},
                      {"configMap", json::object{{"name", kConfigMapName}}},
                  }}},
  };

  return json::object{
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata", metadata(kDeploymentName, plan, options)},
      {"spec",
       json::object{
           {"replicas", 1},
           {"selector", json::object{{"matchLabels", selector_labels()}}},
           {"template",
            json::object{
                {"metadata",
                 json::object{{"labels", std::move(pod_labels)},
                              {"annotations", json::object{{kConfigHashAnnotation, hash}}}}},
                {"spec", std::move(pod_spec)},
            }},
       }},
  };
}

}  // namespace

json::object managed_labels(const TelegrafOptions& options) {
  return json::object{
      {"app.kubernetes.io/managed-by", options.managed_by},
      {"app.kubernetes.io/name", "telegraf"},
      {"app.kubernetes.io/instance", kDeploymentName},
  };
}

std::string sources_annotation(std::span<const SourceRef> sources) {
  std::string out;
  for (const SourceRef& s : sources) {
    if (!out.empty()) out += ',';
    out += s.str();
  }
  return out;
}

std::vector<json::object> DesiredObjects::all() const {
  std::vector<json::object> out{config_map};
  if (secret) out.push_back(*secret);
  out.push_back(deployment);
  return out;
}

std::optional<DesiredObjects> build_objects(const TargetPlan& plan, const TelegrafOptions& options,
                                            std::optional<std::string_view> token) {
  if (plan.endpoints.empty()) return std::nullopt;
  DesiredObjects out;
  out.config = render_telegraf_config(plan.application, plan.endpoints, options);
  out.config_hash = sha256_hex(out.config);
  out.config_map = json::object{
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata", metadata(kConfigMapName, plan, options)},
      {"data", json::object{{kConfigKey, out.config}}},
  };
  if (options.token_secret) {
    json::object secret{
        {"apiVersion", "v1"},
        {"kind", "Secret"},
        {"metadata", metadata(kSecretName, plan, options)},
        {"type", "Opaque"},
    };
    if (token) secret["data"] = json::object{{kTokenKey, k8s::base64_encode(*token)}};
    out.secret = std::move(secret);
  }
  out.deployment = deployment(plan, options, out.config_hash);
  return out;
}

}  // namespace aop::telegraf

// Where the API server is and how to authenticate to it: kubeconfig files (the
// KUBECONFIG path list merged as kubectl merges it, else ~/.kube/config) or in-cluster
// configuration (KUBERNETES_SERVICE_HOST/PORT and the service-account files).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "net/result.hpp"

namespace aop::k8s {

// How the bearer token is obtained. Tokens from files (tokenFile, the in-cluster
// service-account token) are re-read about every minute so rotated tokens keep
// working; exec plugins are re-run when their credential expires.
class TokenSource {
 public:
  virtual ~TokenSource() = default;
  // The current token ("" = none). Never logged.
  virtual Result<std::string> token() = 0;
};

struct ExecConfig {
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::string api_version;  // client.authentication.k8s.io/v1 (v1beta1 accepted)
};

struct ClientConfig {
  std::string server;      // https://host:port
  std::string namespace_;  // default namespace (context's or in-cluster's), may be ""
  // TLS
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;
  std::string ca_pem;           // from certificate-authority(-data); "" = system CAs
  std::string client_cert_pem;  // client-certificate(-data)
  std::string client_key_pem;   // client-key(-data)
  // Authentication
  std::shared_ptr<TokenSource> token;  // nullptr = none
  std::string username, password;      // basic auth (rare)
  std::string source;                  // "kubeconfig /path (context x)" or "in-cluster"
};

struct ConfigSelection {
  std::optional<std::string> kubeconfig_path;  // --kubeconfig; overrides KUBECONFIG
  std::optional<std::string> context;          // --context
  // Environment and home used for lookup (injectable for tests).
  std::optional<std::string> kubeconfig_env;  // value of KUBECONFIG
  std::optional<std::string> home;            // $HOME
  std::string service_account_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
  std::optional<std::string> service_host, service_port;  // KUBERNETES_SERVICE_HOST/PORT
};

// Reads environment variables into a selection (KUBECONFIG, HOME, KUBERNETES_SERVICE_*).
ConfigSelection selection_from_environment();

// Loads a kubeconfig (explicit path, else KUBECONFIG list, else ~/.kube/config) or, when
// none is given or found and the in-cluster variables are set, the in-cluster config.
// Errors say which file and which field, and what to do.
Result<ClientConfig> load_client_config(const ConfigSelection& selection);

// Parses kubeconfig YAML (one file's content) for a context ("" = current-context).
// `base_dir` resolves relative file paths as kubectl does.
Result<ClientConfig> parse_kubeconfig(std::string_view yaml, std::string_view context,
                                      std::string_view base_dir);

Result<ClientConfig> in_cluster_config(const ConfigSelection& selection);

}  // namespace aop::k8s

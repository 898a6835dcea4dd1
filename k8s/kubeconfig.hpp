// Where the API server is and how to authenticate to it: kubeconfig files (the
// KUBECONFIG path list merged as kubectl merges it, else ~/.kube/config) or in-cluster
// configuration (KUBERNETES_SERVICE_HOST/PORT and the service-account files).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "net/clock.hpp"
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
  std::string command;  // a relative path with a '/' is resolved against the kubeconfig's dir
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::string api_version;   // client.authentication.k8s.io/v1 (v1beta1 accepted)
  std::string install_hint;  // shown when the command cannot be run
  std::string origin;        // for messages: "kubeconfig /path, user \"x\""
};

// Token files are re-read this often: kubelet rotates projected service-account tokens
// well before they expire (at 80% of their lifetime, at least hourly), so a minute is
// ample, and cheap.
inline constexpr std::chrono::seconds kTokenFileRefresh{60};
// An exec credential is renewed this long before its expirationTimestamp, so a request
// does not leave with a token that expires on the way.
inline constexpr std::chrono::seconds kExecExpiryMargin{10};
// An exec plugin that has not finished after this long is killed.
inline constexpr std::chrono::seconds kExecTimeout{60};

using WallClock = std::function<std::chrono::system_clock::time_point()>;

std::shared_ptr<TokenSource> make_static_token_source(std::string token);
// Reads the file now and again when kTokenFileRefresh has passed on `clock`; a failed
// re-read keeps the last good token (and is logged).
std::shared_ptr<TokenSource> make_file_token_source(std::string path,
                                                    const net::Clock& clock = net::steady_clock());
// Runs the plugin on first use and again once its credential expires (judged on
// `wall_clock`, since expirationTimestamp is wall-clock time); a credential without an
// expiry is kept for the life of the process, as client-go does. token() blocks while
// the plugin runs (rarely: once per credential lifetime).
std::shared_ptr<TokenSource> make_exec_token_source(ExecConfig config, WallClock wall_clock = {});

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
  // true: in-cluster configuration only (--in-cluster); false: never; unset: automatic.
  std::optional<bool> in_cluster;
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

// Loads and merges kubeconfig files as kubectl merges a KUBECONFIG list: for clusters,
// users and contexts the first file to define a name wins, as does the first
// current-context; relative paths resolve against the file that holds them. Missing
// files are skipped unless `require_all` (an explicit --kubeconfig).
Result<ClientConfig> load_kubeconfig_files(const std::vector<std::string>& paths,
                                           std::string_view context, bool require_all);

Result<ClientConfig> in_cluster_config(const ConfigSelection& selection);

}  // namespace aop::k8s

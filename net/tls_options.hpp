// TLS settings of the HTTP client and server as plain values (the shapes a kubeconfig
// and a serving certificate have). PEM text and file paths are alternatives: when
// both are given, the PEM text wins.
#pragma once

#include <string>

namespace aop::net {

struct TlsClientOptions {
  // Trusted CAs. When neither is set, the system's default CA store is used.
  std::string ca_file;
  std::string ca_pem;
  // Client certificate chain and private key for mutual TLS (optional).
  std::string cert_file;
  std::string cert_pem;
  std::string key_file;
  std::string key_pem;
  // The name used for SNI and certificate verification instead of the URL's host
  // (kubeconfig `tls-server-name`).
  std::string server_name;
  // Skips CA and host-name verification (kubeconfig `insecure-skip-tls-verify`).
  // The connection is encrypted but the server is not authenticated.
  bool insecure_skip_verify = false;
};

struct TlsServerOptions {
  std::string cert_pem;  // serving certificate chain
  std::string key_pem;
  // When set, clients may present certificates signed by these CAs; their presence
  // and subject are reported to handlers.
  std::string client_ca_pem;
  // Reject clients without a valid certificate (only with client_ca_pem).
  bool require_client_cert = false;
};

}  // namespace aop::net

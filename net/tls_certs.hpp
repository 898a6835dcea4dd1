// Test certificates generated at run time (OpenSSL 3): a CA and the server and client
// certificates it signs, as PEM text. Used by the TLS tests and by `kube-sim --tls`;
// nothing here is meant for production PKI.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "net/result.hpp"

namespace aop::net {

struct CertificateAndKey {
  std::string cert_pem;
  std::string key_pem;  // unencrypted PKCS#8
};

struct CertificateRequest {
  std::string common_name;
  std::vector<std::string> organizations;  // Kubernetes reads client-cert groups from O
  std::vector<std::string> dns_names;      // subjectAltName DNS entries
  std::vector<std::string> ip_addresses;   // subjectAltName IP entries (IPv4 or IPv6)
  bool server_auth = true;                 // extendedKeyUsage serverAuth
  bool client_auth = false;                // extendedKeyUsage clientAuth
  // Validity relative to now; a negative not_after makes an expired certificate.
  std::chrono::seconds not_before = -std::chrono::hours(1);
  std::chrono::seconds not_after = std::chrono::hours(24 * 365);
};

// A self-signed CA (P-256 key, SHA-256).
Result<CertificateAndKey> generate_ca(std::string_view common_name,
                                      std::chrono::seconds valid_for = std::chrono::hours(24 *
                                                                                          3650));

// A leaf certificate signed by `ca` (P-256 key, SHA-256).
Result<CertificateAndKey> issue_certificate(const CertificateAndKey& ca,
                                            const CertificateRequest& request);

}  // namespace aop::net

// Checks of PEM text a user supplies (kubeconfig CA data, client certificates and keys),
// so that a bad one is a start-up error naming its field rather than a TLS failure on
// every request later.
#pragma once

#include <cstddef>
#include <string_view>

#include "net/result.hpp"

namespace aop::net {

// The number of certificates in `pem`. An error when it holds none, or when a
// CERTIFICATE block is not a valid X.509 certificate. Text outside the blocks (comments)
// is ignored, as OpenSSL does.
Result<std::size_t> check_certificates_pem(std::string_view pem);

// An error unless `pem` holds a private key OpenSSL can read (unencrypted).
Result<void> check_private_key_pem(std::string_view pem);

}  // namespace aop::net

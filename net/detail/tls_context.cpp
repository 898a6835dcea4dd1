#include "net/detail/tls_context.hpp"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/error.hpp>

#include "net/error.hpp"

namespace aop::net::detail {
namespace ssl = boost::asio::ssl;
namespace {

Error tls_error(std::string_view what, const boost::system::error_code& ec) {
  return make_error(std::string(what) + ": " + ec.message());
}

// Adds every certificate in `pem` to the context's trust store. Asio's
// add_certificate_authority reads only the first one of a bundle.
boost::system::error_code add_ca_bundle(ssl::context& ctx, const std::string& pem, int& added) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (bio == nullptr)
    return {static_cast<int>(ERR_get_error()), boost::asio::error::get_ssl_category()};
  X509_STORE* store = SSL_CTX_get_cert_store(ctx.native_handle());
  added = 0;
  while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    X509_STORE_add_cert(store, cert);
    X509_free(cert);
    ++added;
  }
  ERR_clear_error();  // the loop ends with a "no start line" error at end of input
  BIO_free(bio);
  if (added == 0) return make_error_code(boost::system::errc::invalid_argument);
  return {};
}

void harden(ssl::context& ctx) {
  SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_2_VERSION);
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_compression);
}

}  // namespace

bool is_ip_address(const std::string& host) {
  boost::system::error_code ec;
  boost::asio::ip::make_address(host, ec);
  return !ec;
}

Result<std::shared_ptr<ssl::context>> make_client_tls_context(const TlsClientOptions& options) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  harden(*ctx);
  boost::system::error_code ec;
  if (!options.ca_pem.empty()) {
    int added = 0;
    if ((ec = add_ca_bundle(*ctx, options.ca_pem, added))) {
      return make_error("CA bundle (certificate-authority-data): no PEM certificate found");
    }
  } else if (!options.ca_file.empty()) {
    ctx->load_verify_file(options.ca_file, ec);
    if (ec) {
      return tls_error("CA bundle file " + options.ca_file, ec);
    }
  } else {
    ctx->set_default_verify_paths(ec);
    if (ec) return tls_error("system CA store", ec);
  }

  if (!options.cert_pem.empty()) {
    ctx->use_certificate_chain(boost::asio::buffer(options.cert_pem), ec);
    if (ec) {
      return tls_error("client certificate (client-certificate-data)", ec);
    }
  } else if (!options.cert_file.empty()) {
    ctx->use_certificate_chain_file(options.cert_file, ec);
    if (ec) {
      return tls_error("client certificate file " + options.cert_file, ec);
    }
  }
  if (!options.key_pem.empty()) {
    ctx->use_private_key(boost::asio::buffer(options.key_pem), ssl::context::pem, ec);
    if (ec) {
      return tls_error("client key (client-key-data)", ec);
    }
  } else if (!options.key_file.empty()) {
    ctx->use_private_key_file(options.key_file, ssl::context::pem, ec);
    if (ec) {
      return tls_error("client key file " + options.key_file, ec);
    }
  }
  const bool has_cert = !options.cert_pem.empty() || !options.cert_file.empty();
  const bool has_key = !options.key_pem.empty() || !options.key_file.empty();
  if (has_cert != has_key) {
    return make_error("client certificate and client key must be given together");
  }
  if (has_cert && SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    ERR_clear_error();
    return make_error("client key does not match the client certificate");
  }
  ctx->set_verify_mode(options.insecure_skip_verify ? ssl::verify_none : ssl::verify_peer);
  return ctx;
}

Result<std::shared_ptr<ssl::context>> make_server_tls_context(const TlsServerOptions& options) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  harden(*ctx);
  boost::system::error_code ec;
  ctx->use_certificate_chain(boost::asio::buffer(options.cert_pem), ec);
  if (ec) {
    return tls_error("serving certificate", ec);
  }
  ctx->use_private_key(boost::asio::buffer(options.key_pem), ssl::context::pem, ec);
  if (ec) {
    return tls_error("serving key", ec);
  }
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    ERR_clear_error();
    return make_error("serving key does not match the serving certificate");
  }
  if (!options.client_ca_pem.empty()) {
    int added = 0;
    if ((ec = add_ca_bundle(*ctx, options.client_ca_pem, added))) {
      return make_error("client CA bundle: no PEM certificate found");
    }
    ssl::verify_mode mode = ssl::verify_peer;
    if (options.require_client_cert) mode |= ssl::verify_fail_if_no_peer_cert;
    ctx->set_verify_mode(mode);
  }
  return ctx;
}

boost::system::error_code prepare_client_connection(SSL* ssl, const std::string& name,
                                                    bool verify) {
  const bool ip = is_ip_address(name);
  // SNI carries host names only (RFC 6066).
  if (!ip && SSL_set_tlsext_host_name(ssl, name.c_str()) != 1) {
    return {static_cast<int>(ERR_get_error()), boost::asio::error::get_ssl_category()};
  }
  if (!verify) return {};
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  const int ok = ip ? X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str())
                    : X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size());
  if (ok != 1) return {static_cast<int>(ERR_get_error()), boost::asio::error::get_ssl_category()};
  return {};
}

boost::system::error_code classify_handshake_error(SSL* ssl, boost::system::error_code ec) {
  if (ssl == nullptr) return ec;
  switch (SSL_get_verify_result(ssl)) {
    case X509_V_OK:
      return ec;
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return Errc::tls_hostname_mismatch;
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_CERT_UNTRUSTED:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
      return Errc::tls_unknown_ca;
    case X509_V_ERR_CERT_HAS_EXPIRED:
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return Errc::tls_cert_expired;
    default:
      return Errc::tls_verify_failed;
  }
}

PeerCertificate peer_certificate(SSL* ssl) {
  PeerCertificate out;
  X509* cert = SSL_get0_peer_certificate(ssl);
  if (cert == nullptr) return out;
  out.present = true;
  X509_NAME* subject = X509_get_subject_name(cert);
  for (int i = 0; i < X509_NAME_entry_count(subject); ++i) {
    X509_NAME_ENTRY* entry = X509_NAME_get_entry(subject, i);
    const int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(entry));
    if (nid != NID_commonName && nid != NID_organizationName) continue;
    unsigned char* utf8 = nullptr;
    const int n = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(entry));
    if (n < 0) continue;
    std::string value(reinterpret_cast<char*>(utf8), static_cast<std::size_t>(n));
    OPENSSL_free(utf8);
    if (nid == NID_commonName) {
      out.common_name = std::move(value);
    } else {
      out.organizations.push_back(std::move(value));
    }
  }
  return out;
}

}  // namespace aop::net::detail

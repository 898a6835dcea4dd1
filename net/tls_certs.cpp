#include "net/tls_certs.hpp"

#include <memory>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace aop::net {
namespace {

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(BIGNUM* p) const { BN_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
};
template <class T>
using Owned = std::unique_ptr<T, Free>;

Error openssl_error(std::string_view what) {
  std::string message = "generating test certificate: " + std::string(what);
  if (const unsigned long code = ERR_get_error(); code != 0) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof buf);
    message += ": ";
    message += buf;
  }
  ERR_clear_error();
  return make_error(std::move(message));
}

Owned<EVP_PKEY> make_key() {
  return Owned<EVP_PKEY>(EVP_EC_gen("P-256"));
}

std::string to_pem(X509* cert) {
  Owned<BIO> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

std::string to_pem(EVP_PKEY* key) {
  Owned<BIO> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

bool add_name_entry(X509_NAME* name, const char* field, std::string_view value) {
  return X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8,
                                    reinterpret_cast<const unsigned char*>(value.data()),
                                    static_cast<int>(value.size()), -1, 0) == 1;
}

bool add_extension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  Owned<X509_EXTENSION> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  return ext && X509_add_ext(cert, ext.get(), -1) == 1;
}

// A v3 certificate with a random serial, the subject and validity filled in.
Result<Owned<X509>> new_certificate(EVP_PKEY* key, const std::string& common_name,
                                    const std::vector<std::string>& organizations,
                                    std::chrono::seconds not_before,
                                    std::chrono::seconds not_after) {
  Owned<X509> cert(X509_new());
  Owned<BIGNUM> serial(BN_new());
  if (!cert || !serial || X509_set_version(cert.get(), 2) != 1 ||
      BN_rand(serial.get(), 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
      !BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())) ||
      !X509_gmtime_adj(X509_getm_notBefore(cert.get()), static_cast<long>(not_before.count())) ||
      !X509_gmtime_adj(X509_getm_notAfter(cert.get()), static_cast<long>(not_after.count())) ||
      X509_set_pubkey(cert.get(), key) != 1) {
    return openssl_error("certificate fields");
  }
  X509_NAME* subject = X509_get_subject_name(cert.get());
  for (const auto& o : organizations) {
    if (!add_name_entry(subject, "O", o)) return openssl_error("subject organization");
  }
  if (!add_name_entry(subject, "CN", common_name)) return openssl_error("subject common name");
  return cert;
}

}  // namespace

Result<CertificateAndKey> generate_ca(std::string_view common_name,
                                      std::chrono::seconds valid_for) {
  auto key = make_key();
  if (!key) return openssl_error("CA key");
  auto cert =
      new_certificate(key.get(), std::string(common_name), {}, -std::chrono::hours(1), valid_for);
  if (!cert) return cert.error();
  X509* c = cert->get();
  if (X509_set_issuer_name(c, X509_get_subject_name(c)) != 1 ||
      !add_extension(c, c, NID_basic_constraints, "critical,CA:TRUE") ||
      !add_extension(c, c, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature") ||
      !add_extension(c, c, NID_subject_key_identifier, "hash") ||
      X509_sign(c, key.get(), EVP_sha256()) == 0) {
    return openssl_error("signing CA certificate");
  }
  return CertificateAndKey{to_pem(c), to_pem(key.get())};
}

Result<CertificateAndKey> issue_certificate(const CertificateAndKey& ca,
                                            const CertificateRequest& request) {
  Owned<BIO> ca_cert_bio(BIO_new_mem_buf(ca.cert_pem.data(), static_cast<int>(ca.cert_pem.size())));
  Owned<X509> ca_cert(PEM_read_bio_X509(ca_cert_bio.get(), nullptr, nullptr, nullptr));
  Owned<BIO> ca_key_bio(BIO_new_mem_buf(ca.key_pem.data(), static_cast<int>(ca.key_pem.size())));
  Owned<EVP_PKEY> ca_key(PEM_read_bio_PrivateKey(ca_key_bio.get(), nullptr, nullptr, nullptr));
  if (!ca_cert || !ca_key) return openssl_error("reading the CA certificate and key");

  auto key = make_key();
  if (!key) return openssl_error("leaf key");
  auto cert = new_certificate(key.get(), request.common_name, request.organizations,
                              request.not_before, request.not_after);
  if (!cert) return cert.error();
  X509* c = cert->get();

  std::string san;
  for (const auto& d : request.dns_names) san += (san.empty() ? "DNS:" : ",DNS:") + d;
  for (const auto& ip : request.ip_addresses) san += (san.empty() ? "IP:" : ",IP:") + ip;
  std::string eku;
  if (request.server_auth) eku = "serverAuth";
  if (request.client_auth) eku += eku.empty() ? "clientAuth" : ",clientAuth";

  if (X509_set_issuer_name(c, X509_get_subject_name(ca_cert.get())) != 1 ||
      !add_extension(c, ca_cert.get(), NID_basic_constraints, "critical,CA:FALSE") ||
      !add_extension(c, ca_cert.get(), NID_key_usage,
                     "critical,digitalSignature,keyEncipherment") ||
      (!eku.empty() && !add_extension(c, ca_cert.get(), NID_ext_key_usage, eku)) ||
      (!san.empty() && !add_extension(c, ca_cert.get(), NID_subject_alt_name, san)) ||
      !add_extension(c, ca_cert.get(), NID_authority_key_identifier, "keyid:always")) {
    return openssl_error("certificate extensions (check DNS names and IP addresses)");
  }
  if (X509_sign(c, ca_key.get(), EVP_sha256()) == 0) return openssl_error("signing certificate");
  return CertificateAndKey{to_pem(c), to_pem(key.get())};
}

}  // namespace aop::net

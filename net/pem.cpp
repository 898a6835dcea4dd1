#include "net/pem.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cstring>
#include <limits>
#include <memory>
#include <string>

namespace aop::net {

namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;

BioPtr memory_bio(std::string_view pem) {
  if (pem.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) return nullptr;
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

}  // namespace

Result<std::size_t> check_certificates_pem(std::string_view pem) {
  BioPtr bio = memory_bio(pem);
  if (!bio) return make_error("too large to be PEM");
  std::size_t certificates = 0;
  for (;;) {
    char* name = nullptr;
    char* header = nullptr;
    unsigned char* data = nullptr;
    long length = 0;
    if (PEM_read_bio(bio.get(), &name, &header, &data, &length) != 1) {
      const unsigned long err = ERR_peek_last_error();
      ERR_clear_error();
      // The normal end: no further "-----BEGIN" line.
      if (ERR_GET_LIB(err) == ERR_LIB_PEM && ERR_GET_REASON(err) == PEM_R_NO_START_LINE) break;
      return make_error("not valid PEM (a block is cut short or its base64 is damaged)");
    }
    const bool is_certificate =
        std::strcmp(name, PEM_STRING_X509) == 0 || std::strcmp(name, PEM_STRING_X509_OLD) == 0;
    bool valid = true;
    if (is_certificate) {
      const unsigned char* p = data;
      X509* cert = d2i_X509(nullptr, &p, length);
      valid = cert != nullptr;
      X509_free(cert);
    }
    OPENSSL_free(name);
    OPENSSL_free(header);
    OPENSSL_free(data);
    if (!valid) {
      ERR_clear_error();
      return make_error("a CERTIFICATE block is not a valid X.509 certificate");
    }
    if (is_certificate) ++certificates;
  }
  if (certificates == 0) return make_error("no PEM certificate found");
  return certificates;
}

Result<void> check_private_key_pem(std::string_view pem) {
  BioPtr bio = memory_bio(pem);
  if (!bio) return make_error("too large to be PEM");
  // An empty passphrase callback: an encrypted key fails instead of prompting.
  auto no_passphrase = [](char*, int, int, void*) -> int { return 0; };
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, nullptr);
  ERR_clear_error();
  if (key == nullptr) return make_error("no unencrypted PEM private key found");
  EVP_PKEY_free(key);
  return {};
}

}  // namespace aop::net

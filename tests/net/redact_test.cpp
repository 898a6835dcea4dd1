#include "net/redact.hpp"

#include <gtest/gtest.h>

#include "net/pem.hpp"
#include "net/tls_certs.hpp"

using namespace aop::net;

TEST(Redact, UserinfoOfAnyUrlInText) {
  EXPECT_EQ(redact_url("https://user:pa55@db.example.com:8086/write"),
            "https://REDACTED@db.example.com:8086/write");
  // A user name alone is userinfo too (often a token used as the user).
  EXPECT_EQ(redact_url("http://ghp_abc123@host/"), "http://REDACTED@host/");
  // The last '@' of the authority ends it (an unencoded '@' in a password).
  EXPECT_EQ(redact_url("http://u:p@ss@host/x@y"), "http://REDACTED@host/x@y");
  EXPECT_EQ(redact("GET http://a:b@h1/x failed; retried http://c:d@h2/y"),
            "GET http://REDACTED@h1/x failed; retried http://REDACTED@h2/y");
  // Quoted, in a YAML line, in an annotation snippet.
  EXPECT_EQ(redact("url \"https://u:secret@h/m\": scheme"), "url \"https://REDACTED@h/m\": scheme");
  EXPECT_EQ(redact("`app: http://u:s@h:1/metrics`"), "`app: http://REDACTED@h:1/metrics`");
}

TEST(Redact, CredentialQueryAndFragmentValues) {
  EXPECT_EQ(redact_url("https://h/p?token=abc&page=2"), "https://h/p?token=REDACTED&page=2");
  EXPECT_EQ(redact_url("https://h/p?a=1&Access-Token=x;sig=y#access_token=z&state=s"),
            "https://h/p?a=1&Access-Token=REDACTED;sig=REDACTED#access_token=REDACTED&state=s");
  EXPECT_EQ(redact_url("https://b.s3.amazonaws.com/o?X-Amz-Credential=AK%2F1&X-Amz-Signature=f0"
                       "&X-Amz-Expires=60"),
            "https://b.s3.amazonaws.com/o?X-Amz-Credential=REDACTED&X-Amz-Signature=REDACTED"
            "&X-Amz-Expires=REDACTED");
  // Percent-encoded key names are decoded before matching.
  EXPECT_EQ(redact_url("http://h/?to%6Ben=t"), "http://h/?to%6Ben=REDACTED");
  // Ordinary parameters, empty values and bare words stay.
  EXPECT_EQ(redact_url("http://h/metrics?format=prometheus&token=&x"),
            "http://h/metrics?format=prometheus&token=&x");
  EXPECT_EQ(redact("no url here, token=abc"), "no url here, token=abc");
  EXPECT_FALSE(needs_redaction("http://h:9090/metrics?match[]=up"));
  EXPECT_TRUE(needs_redaction("see http://h/?password=x"));
}

TEST(Redact, CredentialKeys) {
  for (const auto* key : {"token", "TOKEN", "access_token", "api-key", "apikey", "key", "sig",
                          "password", "passwd", "secret", "client_secret", "auth", "x-amz-date",
                          "X-Goog-Signature", "sas_token", "private_key", "db_password"}) {
    EXPECT_TRUE(is_credential_key(key)) << key;
  }
  for (const auto* key :
       {"", "page", "format", "match[]", "keyword", "monkey", "tokens_total", "x-amz-", "author"}) {
    EXPECT_FALSE(is_credential_key(key)) << key;
  }
}

TEST(Pem, CertificatesAndKeys) {
  const auto ca = generate_ca("pem-test").value();
  EXPECT_EQ(check_certificates_pem(ca.cert_pem).value(), 1u);
  EXPECT_EQ(check_certificates_pem("# a comment\n" + ca.cert_pem + ca.cert_pem).value(), 2u);
  EXPECT_EQ(check_certificates_pem("").error().message, "no PEM certificate found");
  EXPECT_EQ(check_certificates_pem(ca.key_pem).error().message, "no PEM certificate found");
  EXPECT_EQ(check_certificates_pem("-----BEGIN CERTIFICATE-----\nQ0E=\n-----END CERTIFICATE-----\n")
                .error()
                .message,
            "a CERTIFICATE block is not a valid X.509 certificate");
  EXPECT_EQ(check_certificates_pem("-----BEGIN CERTIFICATE-----\nQ0E=\n").error().message,
            "not valid PEM (a block is cut short or its base64 is damaged)");
  EXPECT_TRUE(check_private_key_pem(ca.key_pem));
  EXPECT_EQ(check_private_key_pem(ca.cert_pem).error().message,
            "no unencrypted PEM private key found");
}

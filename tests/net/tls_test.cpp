// TLS with certificates generated at test time: verification succeeds with the right
// CA and name, fails clearly on a wrong host name, an unknown CA or an expired
// certificate; mutual TLS; insecure_skip_verify; tls-server-name; truncated streams.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "net/detail/tls_context.hpp"
#include "net/error.hpp"
#include "net/http_client.hpp"
#include "net/http_server.hpp"
#include "net/tls_certs.hpp"
#include "tests/net/async_test_util.hpp"

namespace aop::net {
namespace {

namespace asio = boost::asio;
using testing::IoThreads;
using testing::ScriptedServer;

CertificateAndKey must(Result<CertificateAndKey> r) {
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? *r : CertificateAndKey{};
}

struct Pki {
  CertificateAndKey ca = must(generate_ca("aop test CA"));
  CertificateAndKey other_ca = must(generate_ca("someone else's CA"));
  CertificateAndKey server =
      issue({"kube-apiserver", {}, {"localhost", "kubernetes.default.svc"}, {"127.0.0.1", "::1"}});
  CertificateAndKey client = issue_client("alice", {"system:masters", "devs"});

  CertificateAndKey issue(CertificateRequest req) { return must(issue_certificate(ca, req)); }
  CertificateAndKey issue_client(std::string cn, std::vector<std::string> orgs) {
    CertificateRequest req;
    req.common_name = std::move(cn);
    req.organizations = std::move(orgs);
    req.server_auth = false;
    req.client_auth = true;
    return issue(req);
  }
};

class Tls : public ::testing::Test {
 protected:
  static const Pki& pki() {
    static const Pki instance;  // key generation is the slow part: once per binary
    return instance;
  }

  void start(const CertificateAndKey& serving, std::string client_ca = {},
             bool require_client_cert = false) {
    Router router;
    router.set_fallback([](const ServerRequest& req, ResponseWriter& w) -> asio::awaitable<void> {
      HttpResponse res;
      res.body = req.tls ? "tls" : "plain";
      if (req.client_cert) {
        res.body += " cn=" + req.client_cert_common_name;
        for (const auto& o : req.client_cert_organizations) res.body += " o=" + o;
      }
      co_await w.respond(std::move(res));
    });
    HttpServerOptions options;
    options.tls = TlsServerOptions{serving.cert_pem, serving.key_pem, std::move(client_ca),
                                   require_client_cert};
    auto created = HttpServer::create(io.executor(), options, std::move(router));
    ASSERT_TRUE(created) << created.error().message;
    server = std::move(*created);
    server->start();
  }

  std::string url(std::string_view host) const {
    return "https://" + std::string(host) + ":" + std::to_string(server->port());
  }

  boost::system::result<HttpResponse> get(std::string_view host, TlsClientOptions tls) {
    HttpClientOptions options;
    options.tls = std::move(tls);
    auto c = HttpClient::create(io.executor(), url(host), options);
    EXPECT_TRUE(c) << (c ? "" : c.error().message);
    if (!c) return make_error_code(boost::system::errc::invalid_argument);
    HttpRequest req;
    return io.run((*c)->request(std::move(req)));
  }

  TlsClientOptions trusting(const CertificateAndKey& ca) {
    TlsClientOptions tls;
    tls.ca_pem = ca.cert_pem;
    return tls;
  }

  void TearDown() override {
    if (server) io.run(server->stop(std::chrono::seconds(5)));
  }

  IoThreads io{2};
  std::unique_ptr<HttpServer> server;
};

TEST_F(Tls, RightCaAndHostNameSucceeds) {
  start(pki().server);
  for (const std::string_view host : {"localhost", "127.0.0.1"}) {
    auto res = get(host, trusting(pki().ca));
    ASSERT_TRUE(res) << host << ": " << res.error().message();
    EXPECT_EQ(res->body, "tls");
  }
}

TEST_F(Tls, CaBundleWithSeveralCertificatesAndFromAFile) {
  start(pki().server);
  TlsClientOptions bundle;
  bundle.ca_pem = pki().other_ca.cert_pem + pki().ca.cert_pem;  // ours is second
  auto res = get("127.0.0.1", bundle);
  ASSERT_TRUE(res) << res.error().message();

  const std::string path = ::testing::TempDir() + "aop-ca.pem";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(pki().ca.cert_pem.c_str(), f);
    std::fclose(f);
  }
  TlsClientOptions from_file;
  from_file.ca_file = path;
  auto res2 = get("127.0.0.1", from_file);
  ASSERT_TRUE(res2) << res2.error().message();
  std::remove(path.c_str());
}

TEST_F(Tls, WrongHostNameFailsWithAClearError) {
  CertificateRequest req;
  req.common_name = "elsewhere";
  req.dns_names = {"elsewhere.example"};
  start(must(issue_certificate(pki().ca, req)));
  auto res = get("127.0.0.1", trusting(pki().ca));
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error(), Errc::tls_hostname_mismatch);
  EXPECT_TRUE(is_tls_verification_error(res.error()));
  EXPECT_NE(res.error().message().find("not valid for this host name"), std::string::npos);
}

TEST_F(Tls, WrongServerNameOverrideFails) {
  start(pki().server);
  TlsClientOptions tls = trusting(pki().ca);
  tls.server_name = "not-the-apiserver.example";
  auto res = get("127.0.0.1", tls);
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error(), Errc::tls_hostname_mismatch);
}

TEST_F(Tls, ServerNameOverrideVerifiesAgainstThatName) {
  // The certificate names only kubernetes.default.svc; the client dials an IP.
  CertificateRequest req;
  req.common_name = "kube-apiserver";
  req.dns_names = {"kubernetes.default.svc"};
  start(must(issue_certificate(pki().ca, req)));
  TlsClientOptions tls = trusting(pki().ca);
  tls.server_name = "kubernetes.default.svc";
  auto res = get("127.0.0.1", tls);
  ASSERT_TRUE(res) << res.error().message();
}

TEST_F(Tls, UnknownCaFailsWithAClearError) {
  start(pki().server);
  auto res = get("127.0.0.1", trusting(pki().other_ca));
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error(), Errc::tls_unknown_ca);
  EXPECT_NE(res.error().message().find("not signed by a trusted CA"), std::string::npos);
}

TEST_F(Tls, SystemCasDoNotTrustATestCa) {
  start(pki().server);
  auto res = get("127.0.0.1", TlsClientOptions{});
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error(), Errc::tls_unknown_ca) << res.error().message();
}

TEST_F(Tls, ExpiredCertificateFails) {
  CertificateRequest req;
  req.common_name = "old";
  req.ip_addresses = {"127.0.0.1"};
  req.not_before = -std::chrono::hours(48);
  req.not_after = -std::chrono::hours(24);
  start(must(issue_certificate(pki().ca, req)));
  auto res = get("127.0.0.1", trusting(pki().ca));
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error(), Errc::tls_cert_expired);
}

TEST_F(Tls, InsecureSkipVerifyAcceptsAnyCertificate) {
  CertificateRequest req;
  req.common_name = "elsewhere";
  req.dns_names = {"elsewhere.example"};
  start(must(issue_certificate(pki().other_ca, req)));
  TlsClientOptions tls;
  tls.insecure_skip_verify = true;
  auto res = get("127.0.0.1", tls);
  ASSERT_TRUE(res) << res.error().message();
  EXPECT_EQ(res->body, "tls");
}

TEST_F(Tls, MutualTlsClientCertificateIsSeenByTheHandler) {
  start(pki().server, pki().ca.cert_pem, /*require_client_cert=*/true);
  TlsClientOptions tls = trusting(pki().ca);
  tls.cert_pem = pki().client.cert_pem;
  tls.key_pem = pki().client.key_pem;
  auto res = get("127.0.0.1", tls);
  ASSERT_TRUE(res) << res.error().message();
  EXPECT_EQ(res->body, "tls cn=alice o=system:masters o=devs");

  auto without = get("127.0.0.1", trusting(pki().ca));
  EXPECT_FALSE(without) << "a server requiring client certificates rejects a client without one";
}

TEST_F(Tls, ClientCertificateOptionalWhenNotRequired) {
  start(pki().server, pki().ca.cert_pem, /*require_client_cert=*/false);
  auto res = get("127.0.0.1", trusting(pki().ca));
  ASSERT_TRUE(res) << res.error().message();
  EXPECT_EQ(res->body, "tls");
}

TEST_F(Tls, BadClientMaterialIsReportedAtCreate) {
  TlsClientOptions tls = trusting(pki().ca);
  tls.cert_pem = "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n";
  tls.key_pem = pki().client.key_pem;
  HttpClientOptions options;
  options.tls = tls;
  auto c = HttpClient::create(io.executor(), "https://127.0.0.1:1", options);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("client certificate"), std::string::npos) << c.error().message;

  options.tls = trusting(pki().ca);
  options.tls.cert_pem = pki().client.cert_pem;
  options.tls.key_pem = pki().server.key_pem;  // not the certificate's key
  auto mismatched = HttpClient::create(io.executor(), "https://127.0.0.1:1", options);
  ASSERT_FALSE(mismatched);
  EXPECT_NE(mismatched.error().message.find("client key"), std::string::npos)
      << mismatched.error().message;

  options.tls = TlsClientOptions{};
  options.tls.ca_pem = "garbage";
  auto bad_ca = HttpClient::create(io.executor(), "https://127.0.0.1:1", options);
  ASSERT_FALSE(bad_ca);
  EXPECT_NE(bad_ca.error().message.find("CA bundle"), std::string::npos);

  options.tls = TlsClientOptions{};
  options.tls.ca_file = "/nonexistent/ca.crt";
  auto missing = HttpClient::create(io.executor(), "https://127.0.0.1:1", options);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("/nonexistent/ca.crt"), std::string::npos);
}

TEST_F(Tls, StreamingOverTls) {
  Router router;
  router.add(Method::get, "/watch",
             [](const ServerRequest&, ResponseWriter& w) -> asio::awaitable<void> {
               co_await w.start_stream(200, net::Headers{});
               for (int i = 0; i < 50; ++i)
                 co_await w.write_chunk("{\"n\":" + std::to_string(i) + "}\n");
               co_await w.end_stream();
             });
  HttpServerOptions options;
  options.tls = TlsServerOptions{pki().server.cert_pem, pki().server.key_pem, {}, false};
  auto created = HttpServer::create(io.executor(), options, std::move(router));
  ASSERT_TRUE(created);
  server = std::move(*created);
  server->start();
  HttpClientOptions client_options;
  client_options.tls = trusting(pki().ca);
  auto c = HttpClient::create(io.executor(), url("localhost"), client_options);
  ASSERT_TRUE(c);
  auto body = io.run([&]() -> asio::awaitable<std::string> {
    HttpRequest req;
    req.target = "/watch";
    auto stream = co_await (*c)->open_stream(std::move(req));
    if (!stream) co_return "open failed: " + stream.error().message();
    std::string all;
    for (;;) {
      auto piece = co_await (*stream)->read_some();
      if (!piece) co_return "read failed: " + piece.error().message();
      if (piece->empty()) co_return all;
      all += *piece;
    }
  }());
  EXPECT_EQ(body.substr(0, 15), "{\"n\":0}\n{\"n\":1}");
  EXPECT_EQ(std::count(body.begin(), body.end(), '\n'), 50);
}

TEST_F(Tls, LargeBodiesBothWaysOnOneKeptAliveConnection) {
  // Megabytes each way (hundreds of TLS records, reads and writes that stop half-way
  // through a record), three times on the same connection; the response read both
  // whole and through a BodySink.
  Router router;
  router.set_fallback([](const ServerRequest& req, ResponseWriter& w) -> asio::awaitable<void> {
    HttpResponse res;
    res.body = req.body;
    std::reverse(res.body.begin(), res.body.end());
    co_await w.respond(std::move(res));
  });
  HttpServerOptions options;
  options.tls = TlsServerOptions{pki().server.cert_pem, pki().server.key_pem, {}, false};
  auto created = HttpServer::create(io.executor(), options, std::move(router));
  ASSERT_TRUE(created);
  server = std::move(*created);
  server->start();
  HttpClientOptions client_options;
  client_options.tls = trusting(pki().ca);
  auto c = HttpClient::create(io.executor(), url("localhost"), client_options);
  ASSERT_TRUE(c);
  struct Collect final : BodySink {
    std::string got;
    boost::system::error_code on_body(std::string_view piece) override {
      got.append(piece);
      return {};
    }
  };
  std::mt19937 rng(3);
  for (int round = 0; round < 3; ++round) {
    std::string body(3'000'000 + static_cast<std::size_t>(round) * 12'345, '\0');
    for (auto& ch : body) ch = static_cast<char>('a' + rng() % 26);
    std::string reversed(body.rbegin(), body.rend());
    HttpRequest req;
    req.method = Method::put;
    req.target = "/echo";
    req.body = body;
    if (round == 1) {
      Collect sink;
      auto res = io.run((*c)->request_streamed(std::move(req), sink));
      ASSERT_TRUE(res) << res.error().message();
      EXPECT_EQ(res->status, 200);
      EXPECT_TRUE(res->body.empty());
      EXPECT_TRUE(sink.got == reversed) << "round " << round;
    } else {
      auto res = io.run((*c)->request(std::move(req)));
      ASSERT_TRUE(res) << res.error().message();
      EXPECT_TRUE(res->body == reversed) << "round " << round;
    }
  }
  EXPECT_EQ((*c)->stats().connections_opened, 1u);
  EXPECT_EQ((*c)->stats().reused, 2u);
}

class TruncatedTls : public Tls {
 protected:
  std::shared_ptr<asio::ssl::context> server_context() {
    auto ctx = detail::make_server_tls_context(
        TlsServerOptions{pki().server.cert_pem, pki().server.key_pem, {}, false});
    EXPECT_TRUE(ctx);
    return ctx ? *ctx : nullptr;
  }
  HttpClientOptions client_options() {
    HttpClientOptions o;
    o.tls = trusting(pki().ca);
    return o;
  }
};

TEST_F(TruncatedTls, ResponseCutWithoutCloseNotify) {
  ScriptedServer peer(io.executor(), "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort", false,
                      server_context());
  auto c = HttpClient::create(io.executor(), "https://127.0.0.1:" + std::to_string(peer.port()),
                              client_options());
  ASSERT_TRUE(c);
  auto res = io.run((*c)->request(HttpRequest()));
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error(), Errc::truncated_response) << res.error().message();
}

TEST_F(TruncatedTls, StreamCutWithoutCloseNotify) {
  ScriptedServer peer(io.executor(),
                      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n{\"a\":1\r\n",
                      false, server_context());
  auto c = HttpClient::create(io.executor(), "https://127.0.0.1:" + std::to_string(peer.port()),
                              client_options());
  ASSERT_TRUE(c);
  auto err = io.run([&]() -> asio::awaitable<boost::system::error_code> {
    auto stream = co_await (*c)->open_stream(HttpRequest());
    if (!stream) co_return stream.error();
    for (;;) {
      auto piece = co_await (*stream)->read_some();
      if (!piece) co_return piece.error();
      if (piece->empty()) co_return boost::system::error_code{};
    }
  }());
  EXPECT_EQ(err, Errc::truncated_response) << err.message();
}

TEST_F(TruncatedTls, PlainHttpPeerIsNotTls) {
  // Answers at once, like a plain HTTP server that got a TLS hello.
  ScriptedServer peer(io.executor(), "HTTP/1.1 400 Bad Request\r\n\r\n", false, nullptr, false);
  auto c = HttpClient::create(io.executor(), "https://127.0.0.1:" + std::to_string(peer.port()),
                              client_options());
  ASSERT_TRUE(c);
  auto res = io.run((*c)->request(HttpRequest()));
  ASSERT_FALSE(res) << "an HTTP answer to a TLS hello is an error, not a response";
  EXPECT_FALSE(is_timeout(res.error())) << res.error().message();
}

TEST(TlsCerts, GeneratedCertificatesCarryTheRequestedNames) {
  auto ca = generate_ca("test CA");
  ASSERT_TRUE(ca);
  EXPECT_EQ(ca->cert_pem.rfind("-----BEGIN CERTIFICATE-----", 0), 0u);
  EXPECT_EQ(ca->key_pem.rfind("-----BEGIN PRIVATE KEY-----", 0), 0u);
  CertificateRequest req;
  req.common_name = "svc";
  req.dns_names = {"a.example", "b.example"};
  req.ip_addresses = {"10.0.0.1", "fd00::1"};
  EXPECT_TRUE(issue_certificate(*ca, req));
  req.ip_addresses = {"not-an-ip"};
  auto bad = issue_certificate(*ca, req);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("IP addresses"), std::string::npos) << bad.error().message;
  auto no_ca = issue_certificate(CertificateAndKey{"junk", "junk"}, CertificateRequest{});
  EXPECT_FALSE(no_ca);
}

}  // namespace
}  // namespace aop::net

#include "k8s/kubeconfig.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "k8s/base64.hpp"
#include "net/tls_certs.hpp"

using namespace aop;
using namespace aop::k8s;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// Real PEM: the configuration is checked at load time (a CA that is not a certificate is
// a start-up error).
const net::CertificateAndKey& test_ca() {
  static const net::CertificateAndKey ca = net::generate_ca("kubeconfig-test-ca").value();
  return ca;
}
const net::CertificateAndKey& test_client() {
  static const net::CertificateAndKey client = [] {
    net::CertificateRequest req;
    req.common_name = "kubeconfig-test-user";
    req.server_auth = false;
    req.client_auth = true;
    return net::issue_certificate(test_ca(), req).value();
  }();
  return client;
}
const std::string kCa = test_ca().cert_pem;
const std::string kCert = test_client().cert_pem;
const std::string kKey = test_client().key_pem;

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "aop-kubeconfig-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name, const std::string& content,
                   bool executable = false) const {
    const std::string p = path_ + "/" + name;
    fs::create_directories(fs::path(p).parent_path());
    std::ofstream(p) << content;
    if (executable) ::chmod(p.c_str(), 0755);
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string config_with_user(const std::string& user_yaml, const std::string& cluster_extra = "") {
  return "apiVersion: v1\nkind: Config\ncurrent-context: dev\n"
         "clusters:\n- name: c1\n  cluster:\n    server: https://10.0.0.1:6443\n" +
         cluster_extra +
         "contexts:\n- name: dev\n  context:\n    cluster: c1\n    user: u1\n    namespace: "
         "team-a\n"
         "users:\n- name: u1\n  user:\n" +
         user_yaml;
}

std::string token_of(const ClientConfig& c) {
  if (!c.token) return "<none>";
  auto t = c.token->token();
  return t ? *t : "<error: " + t.error().message + ">";
}

std::string error_of(const Result<ClientConfig>& r) {
  return r ? std::string("<no error>") : r.error().message;
}

}  // namespace

TEST(Kubeconfig, BearerTokenAndContextFields) {
  auto c = parse_kubeconfig(config_with_user("    token: abc123\n"), "", "/nowhere");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->server, "https://10.0.0.1:6443");
  EXPECT_EQ(c->namespace_, "team-a");
  EXPECT_EQ(token_of(*c), "abc123");
  EXPECT_FALSE(c->insecure_skip_tls_verify);
  EXPECT_TRUE(c->ca_pem.empty());
  EXPECT_NE(c->source.find("context dev"), std::string::npos);
}

TEST(Kubeconfig, CertificateDataAndFiles) {
  TempDir dir;
  dir.file("pki/ca.crt", kCa);
  dir.file("pki/client.crt", kCert);
  dir.file("pki/client.key", kKey);
  // Files, relative to the kubeconfig's directory.
  auto files = parse_kubeconfig(
      config_with_user("    client-certificate: pki/client.crt\n    client-key: pki/client.key\n",
                       "    certificate-authority: pki/ca.crt\n    tls-server-name: api.local\n"),
      "", dir.path());
  ASSERT_TRUE(files) << files.error().message;
  EXPECT_EQ(files->ca_pem, kCa);
  EXPECT_EQ(files->client_cert_pem, kCert);
  EXPECT_EQ(files->client_key_pem, kKey);
  EXPECT_EQ(files->tls_server_name, "api.local");
  EXPECT_EQ(files->token, nullptr);

  // Inline data.
  auto data = parse_kubeconfig(
      config_with_user("    client-certificate-data: " + base64_encode(kCert) +
                           "\n    client-key-data: " + base64_encode(kKey) + "\n",
                       "    certificate-authority-data: " + base64_encode(kCa) + "\n"),
      "", "/nowhere");
  ASSERT_TRUE(data) << data.error().message;
  EXPECT_EQ(data->ca_pem, kCa);
  EXPECT_EQ(data->client_cert_pem, kCert);
  EXPECT_EQ(data->client_key_pem, kKey);
}

TEST(Kubeconfig, InsecureAndBasicAuth) {
  auto c = parse_kubeconfig(config_with_user("    username: admin\n    password: s3cret\n",
                                             "    insecure-skip-tls-verify: true\n"),
                            "", "/");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_TRUE(c->insecure_skip_tls_verify);
  EXPECT_EQ(c->username, "admin");
  EXPECT_EQ(c->password, "s3cret");
}

TEST(Kubeconfig, ContextSelection) {
  const std::string yaml =
      "current-context: a\n"
      "clusters:\n- name: ca\n  cluster: {server: 'https://a:1'}\n"
      "- name: cb\n  cluster: {server: 'https://b:2'}\n"
      "contexts:\n- name: a\n  context: {cluster: ca}\n- name: b\n  context: {cluster: cb}\n";
  EXPECT_EQ(parse_kubeconfig(yaml, "", "/")->server, "https://a:1");
  EXPECT_EQ(parse_kubeconfig(yaml, "b", "/")->server, "https://b:2");
  EXPECT_EQ(parse_kubeconfig(yaml, "b", "/")->token, nullptr);  // no user: no credentials
  EXPECT_EQ(error_of(parse_kubeconfig(yaml, "c", "/")), "kubeconfig: context \"c\" not found");
}

TEST(Kubeconfig, ClearErrorsNameTheFileAndField) {
  TempDir dir;
  const auto bad_ca = dir.file(
      "config", config_with_user("    token: t\n", "    certificate-authority: missing-ca.crt\n"));
  auto r = load_kubeconfig_files({bad_ca}, "", true);
  EXPECT_EQ(error_of(r), "kubeconfig " + bad_ca +
                             ": clusters[0].cluster.certificate-authority: cannot read " +
                             dir.path() + "/missing-ca.crt: No such file or directory");

  EXPECT_EQ(
      error_of(parse_kubeconfig(
          config_with_user("    token: t\n", "    certificate-authority-data: '%%%'\n"), "", "/")),
      "kubeconfig: clusters[0].cluster.certificate-authority-data: not valid base64");
  EXPECT_EQ(error_of(parse_kubeconfig(
                config_with_user("    client-certificate-data: " + base64_encode(kCert) + "\n"), "",
                "/")),
            "kubeconfig: users[0].user.client-key: missing (client-certificate and client-key go "
            "together)");
  EXPECT_EQ(error_of(parse_kubeconfig(
                "current-context: x\ncontexts:\n- name: x\n  context: {cluster: nope}\n", "", "/")),
            "kubeconfig: contexts[0].context.cluster: cluster \"nope\" not found");
  EXPECT_EQ(error_of(parse_kubeconfig("clusters:\n- name: c\n  cluster: {}\n"
                                      "contexts:\n- name: x\n  context: {cluster: c}\n",
                                      "x", "/")),
            "kubeconfig: clusters[0].cluster.server: missing");
  EXPECT_EQ(error_of(parse_kubeconfig("clusters: {}\n", "", "/")),
            "kubeconfig: clusters: expected a list");
  EXPECT_EQ(error_of(parse_kubeconfig("clusters:\n- cluster: {server: x}\n", "", "/")),
            "kubeconfig: clusters[0].name: missing");
  EXPECT_EQ(error_of(parse_kubeconfig("clusters: []\n", "", "/")),
            "kubeconfig: no current-context is set; set it (kubectl config use-context) or pass "
            "--context");
  EXPECT_EQ(
      error_of(parse_kubeconfig(
          config_with_user("    insecure: 1\n", "    insecure-skip-tls-verify: maybe\n"), "", "/")),
      "kubeconfig: clusters[0].cluster.insecure-skip-tls-verify: expected true or false");
  EXPECT_NE(error_of(parse_kubeconfig("a: [b\n", "", "/")).find("kubeconfig: invalid YAML"),
            std::string::npos);
  EXPECT_EQ(
      error_of(parse_kubeconfig(config_with_user("    auth-provider: {name: gcp}\n"), "", "/")),
      "kubeconfig: users[0].user.auth-provider: auth-provider plugins are not supported; use "
      "an exec credential plugin");
  const auto missing = dir.path() + "/nope";
  EXPECT_EQ(error_of(load_kubeconfig_files({missing}, "", true)),
            "kubeconfig: cannot read " + missing + ": No such file or directory");
}

// A server that is not an http(s) URL, and CA or client material that is not PEM, are
// configuration errors found at load time (the operator exits with them) instead of
// failures of every request later.
TEST(Kubeconfig, ServerMustBeAnHttpUrlAndPemMustParse) {
  auto with_server = [](const std::string& server) {
    return "current-context: x\nclusters:\n- name: c\n  cluster: {server: '" + server +
           "'}\ncontexts:\n- name: x\n  context: {cluster: c}\n";
  };
  EXPECT_EQ(error_of(parse_kubeconfig(with_server("ftp://10.0.0.1:21"), "", "/")),
            "kubeconfig: clusters[0].cluster.server: server URL \"ftp://10.0.0.1:21\": scheme "
            "must be http or https");
  EXPECT_EQ(error_of(parse_kubeconfig(with_server("not a url"), "", "/")),
            "kubeconfig: clusters[0].cluster.server: server URL \"not a url\" is not an absolute "
            "URL (expected https://host[:port][/path])");
  EXPECT_EQ(error_of(parse_kubeconfig(with_server("https://"), "", "/")),
            "kubeconfig: clusters[0].cluster.server: server URL \"https://\": no host");
  // The message never repeats credentials a URL carries.
  EXPECT_EQ(error_of(parse_kubeconfig(with_server("ftp://admin:hunter2@10.0.0.1"), "", "/")),
            "kubeconfig: clusters[0].cluster.server: server URL \"ftp://REDACTED@10.0.0.1\": "
            "scheme must be http or https");
  for (const std::string ok : {"https://10.0.0.1:6443", "http://localhost:8080",
                               "https://[fd00::1]:443", "https://api.example.com/k8s/clusters/x"}) {
    EXPECT_TRUE(parse_kubeconfig(with_server(ok), "", "/")) << ok;
  }

  TempDir dir;
  const std::string not_pem = "this is not a certificate\n";
  EXPECT_EQ(error_of(parse_kubeconfig(
                config_with_user("    token: t\n", "    certificate-authority-data: " +
                                                       base64_encode(not_pem) + "\n"),
                "", "/")),
            "kubeconfig: clusters[0].cluster.certificate-authority-data: no PEM certificate found");
  const std::string damaged =
      "-----BEGIN CERTIFICATE-----\nbm90IERFUg==\n-----END CERTIFICATE-----\n";
  EXPECT_EQ(error_of(parse_kubeconfig(
                config_with_user("    token: t\n", "    certificate-authority-data: " +
                                                       base64_encode(damaged) + "\n"),
                "", "/")),
            "kubeconfig: clusters[0].cluster.certificate-authority-data: a CERTIFICATE block is "
            "not a valid X.509 certificate");
  const auto ca_file = dir.file("ca.crt", not_pem);
  EXPECT_EQ(error_of(parse_kubeconfig(
                config_with_user("    token: t\n", "    certificate-authority: ca.crt\n"), "",
                dir.path())),
            "kubeconfig: clusters[0].cluster.certificate-authority: " + ca_file +
                ": no PEM certificate found");
  // A key in place of the client certificate, a certificate in place of the key.
  EXPECT_EQ(error_of(parse_kubeconfig(
                config_with_user("    client-certificate-data: " + base64_encode(kKey) +
                                 "\n    client-key-data: " + base64_encode(kKey) + "\n"),
                "", "/")),
            "kubeconfig: users[0].user.client-certificate-data: no PEM certificate found");
  EXPECT_EQ(error_of(parse_kubeconfig(
                config_with_user("    client-certificate-data: " + base64_encode(kCert) +
                                 "\n    client-key-data: " + base64_encode(kCert) + "\n"),
                "", "/")),
            "kubeconfig: users[0].user.client-key-data: no unencrypted PEM private key found");

  // In-cluster: the service account's CA file too.
  dir.file("sa/token", "t\n");
  dir.file("sa/ca.crt", not_pem);
  ConfigSelection sel;
  sel.service_account_dir = dir.path() + "/sa";
  sel.service_host = "10.96.0.1";
  sel.service_port = "443";
  EXPECT_EQ(error_of(in_cluster_config(sel)), "in-cluster configuration: service-account CA " +
                                                  dir.path() +
                                                  "/sa/ca.crt: no PEM certificate found");
}

TEST(Kubeconfig, TokenFileIsReReadEveryMinute) {
  TempDir dir;
  const auto token_path = dir.file("token", "first\n");
  net::FakeClock clock;
  auto source = make_file_token_source(token_path, clock);
  EXPECT_EQ(*source->token(), "first");
  dir.file("token", "second\n");
  clock.advance(30s);
  EXPECT_EQ(*source->token(), "first") << "cached within the refresh period";
  clock.advance(31s);
  EXPECT_EQ(*source->token(), "second");
  // A rotation in progress (file briefly gone) keeps the last good token.
  fs::remove(token_path);
  clock.advance(61s);
  EXPECT_EQ(*source->token(), "second");
  dir.file("token", "third");
  clock.advance(61s);
  EXPECT_EQ(*source->token(), "third");

  auto never = make_file_token_source(dir.path() + "/absent", clock);
  ASSERT_FALSE(never->token());
  EXPECT_NE(never->token().error().message.find("absent"), std::string::npos);
}

TEST(Kubeconfig, TokenFileFieldResolvesRelativeAndFailsClearly) {
  TempDir dir;
  dir.file("sa/token", "from-file");
  const auto cfg = dir.file("config", config_with_user("    tokenFile: sa/token\n"));
  auto c = load_kubeconfig_files({cfg}, "", true);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(token_of(*c), "from-file");
  const auto bad = dir.file("bad", config_with_user("    tokenFile: sa/none\n"));
  EXPECT_EQ(error_of(load_kubeconfig_files({bad}, "", true)),
            "kubeconfig " + bad + ": users[0].user.tokenFile: bearer token file: cannot read " +
                dir.path() + "/sa/none: No such file or directory");
}

TEST(Kubeconfig, ExecPluginCredentialIsCachedUntilItExpires) {
  TempDir dir;
  // Counts its runs; prints a token naming the run, the env it got, and an expiry.
  dir.file("plugin.sh",
           "#!/bin/sh\n"
           "n=$(cat \"$COUNT_FILE\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$COUNT_FILE\"\n"
           "case \"$KUBERNETES_EXEC_INFO\" in *ExecCredential*) ;; *) exit 3;; esac\n"
           "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
           "\"status\":{\"token\":\"'$PREFIX-$1-$n'\",\"expirationTimestamp\":\"2030-01-01T00:10:"
           "00Z\"}}'\n",
           true);
  const std::string yaml = config_with_user(
      "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
      "      command: ./plugin.sh\n      args: [arg]\n"
      "      env:\n      - {name: PREFIX, value: tok}\n      - {name: COUNT_FILE, value: " +
      dir.path() + "/count}\n");
  auto c = parse_kubeconfig(yaml, "", dir.path());
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_TRUE(c->token);

  // Drive expiry with a fake wall clock: same config, our own source.
  auto now = std::chrono::system_clock::from_time_t(1893456000);  // 2030-01-01T00:00:00Z
  ExecConfig exec;
  exec.command = dir.path() + "/plugin.sh";
  exec.args = {"arg"};
  exec.env = {{"PREFIX", "tok"}, {"COUNT_FILE", dir.path() + "/count2"}};
  auto source = make_exec_token_source(exec, [&] { return now; });
  EXPECT_EQ(*source->token(), "tok-arg-1");
  now += 5min;
  EXPECT_EQ(*source->token(), "tok-arg-1") << "still valid: not re-run";
  now += 5min - 5s;  // within the renewal margin of the expiry
  EXPECT_EQ(*source->token(), "tok-arg-2");

  // The kubeconfig-built source runs the same plugin.
  EXPECT_EQ(token_of(*c), "tok-arg-1");
}

TEST(Kubeconfig, ExecPluginWithoutExpiryRunsOnce) {
  TempDir dir;
  dir.file(
      "plugin.sh",
      "#!/bin/sh\nn=$(cat " + dir.path() +
          "/count 2>/dev/null || echo 0); n=$((n+1)); "
          "echo $n > " +
          dir.path() +
          "/count\n"
          "echo "
          "'{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1beta1\","
          "\"status\":{\"token\":\"t'$n'\"}}'\n",
      true);
  ExecConfig exec;
  exec.command = dir.path() + "/plugin.sh";
  auto source = make_exec_token_source(exec);
  EXPECT_EQ(*source->token(), "t1");
  EXPECT_EQ(*source->token(), "t1");
}

TEST(Kubeconfig, ExecPluginFailuresAreClear) {
  TempDir dir;
  dir.file("fails.sh", "#!/bin/sh\necho 'login required' >&2\nexit 2\n", true);
  dir.file("garbage.sh", "#!/bin/sh\necho not-json\n", true);
  const std::string yaml = config_with_user(
      "    exec:\n      command: ./fails.sh\n      installHint: install the fails plugin\n");
  auto c = parse_kubeconfig(yaml, "", dir.path());
  ASSERT_TRUE(c) << c.error().message;
  auto t = c->token->token();
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().message, "kubeconfig, user \"u1\": exec plugin: " + dir.path() +
                                   "/fails.sh exited with status 2 (install the fails plugin)");

  ExecConfig garbage;
  garbage.command = dir.path() + "/garbage.sh";
  garbage.origin = "test";
  EXPECT_EQ(make_exec_token_source(garbage)->token().error().message,
            "test: exec plugin: output is not an ExecCredential JSON object");

  ExecConfig missing;
  missing.command = "aop-no-such-plugin";
  missing.origin = "test";
  EXPECT_EQ(make_exec_token_source(missing)->token().error().message,
            "test: exec plugin: cannot run aop-no-such-plugin: No such file or directory");

  EXPECT_EQ(error_of(parse_kubeconfig(
                config_with_user("    exec:\n      apiVersion: client.authentication.k8s.io/v9\n"
                                 "      command: x\n"),
                "", "/")),
            "kubeconfig: users[0].user.exec.apiVersion: client.authentication.k8s.io/v9 is not "
            "supported (use client.authentication.k8s.io/v1)");
}

TEST(Kubeconfig, KubeconfigListMergesFirstWins) {
  TempDir dir;
  const std::string ca_one = net::generate_ca("one").value().cert_pem;
  const std::string ca_two = net::generate_ca("two").value().cert_pem;
  dir.file("one/ca.crt", ca_one);
  dir.file("two/ca.crt", ca_two);
  const auto one = dir.file("one/config",
                            "current-context: from-one\n"
                            "clusters:\n- name: shared\n  cluster: {server: 'https://one:1', "
                            "certificate-authority: ca.crt}\n"
                            "users:\n- name: shared-user\n  user: {token: one-token}\n"
                            "contexts:\n- name: from-one\n  context: {cluster: shared, user: "
                            "shared-user}\n");
  const auto two = dir.file("two/config",
                            "current-context: from-two\n"
                            "clusters:\n- name: shared\n  cluster: {server: 'https://two:2'}\n"
                            "- name: only-two\n  cluster: {server: 'https://two:3', "
                            "certificate-authority: ca.crt}\n"
                            "users:\n- name: shared-user\n  user: {token: two-token}\n"
                            "contexts:\n- name: from-two\n  context: {cluster: only-two, user: "
                            "shared-user}\n");
  ConfigSelection sel;
  sel.kubeconfig_env = one + ":" + dir.path() + "/missing:" + two;
  auto c = load_client_config(sel);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->server, "https://one:1");  // first current-context, first "shared"
  EXPECT_EQ(c->ca_pem, ca_one);
  EXPECT_EQ(token_of(*c), "one-token");

  // A context from the second file, still with the first file's user of that name; its
  // cluster's relative CA path resolves against the second file's directory.
  sel.context = "from-two";
  c = load_client_config(sel);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->server, "https://two:3");
  EXPECT_EQ(c->ca_pem, ca_two);
  EXPECT_EQ(token_of(*c), "one-token");
}

TEST(Kubeconfig, LookupOrderAndInCluster) {
  TempDir dir;
  const auto home_cfg = dir.file("home/.kube/config", config_with_user("    token: home\n"));
  dir.file("sa/token", "sa-token\n");
  dir.file("sa/ca.crt", kCa);
  dir.file("sa/namespace", "operators\n");

  ConfigSelection sel;
  sel.home = dir.path() + "/home";
  sel.service_account_dir = dir.path() + "/sa";
  sel.service_host = "10.96.0.1";
  sel.service_port = "443";
  // ~/.kube/config comes before in-cluster.
  EXPECT_EQ(token_of(*load_client_config(sel)), "home");
  // An explicit path wins; it must exist.
  sel.kubeconfig_path = dir.path() + "/nope";
  EXPECT_FALSE(load_client_config(sel));
  sel.kubeconfig_path.reset();
  // Forced in-cluster.
  sel.in_cluster = true;
  auto in = load_client_config(sel);
  ASSERT_TRUE(in) << in.error().message;
  EXPECT_EQ(in->server, "https://10.96.0.1:443");
  EXPECT_EQ(in->ca_pem, kCa);
  EXPECT_EQ(in->namespace_, "operators");
  EXPECT_EQ(in->source, "in-cluster");
  EXPECT_EQ(token_of(*in), "sa-token");
  // Automatic: no kubeconfig anywhere, so in-cluster.
  sel.in_cluster.reset();
  sel.home = dir.path() + "/empty-home";
  EXPECT_EQ(load_client_config(sel)->source, "in-cluster");
  // IPv6 service host.
  sel.service_host = "fd00::1";
  EXPECT_EQ(in_cluster_config(sel)->server, "https://[fd00::1]:443");
  // Nothing at all.
  sel.service_host.reset();
  EXPECT_EQ(error_of(load_client_config(sel)),
            "no Kubernetes configuration found: tried " + dir.path() +
                "/empty-home/.kube/config (no such file), and not running in a cluster "
                "(KUBERNETES_SERVICE_HOST/PORT unset); pass --kubeconfig or set KUBECONFIG");
  sel.in_cluster = true;
  EXPECT_EQ(error_of(load_client_config(sel)),
            "in-cluster configuration: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not "
            "set (not running in a pod?)");
  (void)home_cfg;
}

TEST(Base64, RoundTripAndErrors) {
  for (const std::string s : {"", "a", "ab", "abc", "abcd", "\x01\xff\x10 binary"}) {
    EXPECT_EQ(base64_decode(base64_encode(s)), s);
  }
  EXPECT_EQ(base64_encode("hello"), "aGVsbG8=");
  EXPECT_EQ(base64_decode("aGVs\nbG8="), "hello");
  EXPECT_EQ(base64_decode("aGVsbG8"), "hello");  // unpadded is accepted
  EXPECT_EQ(base64_decode("a"), std::nullopt);
  EXPECT_EQ(base64_decode("aGVsbG8=x"), std::nullopt);
  EXPECT_EQ(base64_decode("%%%%"), std::nullopt);
}

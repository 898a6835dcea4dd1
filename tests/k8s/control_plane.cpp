#include "tests/k8s/control_plane.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <openssl/bio.h>
#include <openssl/pem.h>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "k8s/yaml.hpp"
#include "net/tls_certs.hpp"
#include "tests/k8s/http_request.hpp"

namespace aop::testing {

namespace json = boost::json;
namespace fs = std::filesystem;

const char* const kControlPlaneHint =
    "set KUBEBUILDER_ASSETS to a directory holding kube-apiserver and etcd (e.g. what "
    "`setup-envtest use -p path` prints), or AOP_KUBE_APISERVER to a kube-apiserver binary "
    "(etcd then comes from PATH or /usr/bin/etcd; Debian: apt-get install etcd-server); "
    "README.md, \"Testing against a real API server\", says how to build one";

namespace {

// Start-up on a loaded 2-core machine: etcd in about a second, kube-apiserver in
// 5-15 s (it creates its default namespaces, RBAC roles and priority levels first).
constexpr auto kEtcdTimeout = std::chrono::seconds(60);
constexpr auto kApiServerTimeout = std::chrono::seconds(180);
constexpr int kStartAttempts = 3;  // a free port can be taken between probe and bind

bool executable(const std::string& path) {
  return !path.empty() && ::access(path.c_str(), X_OK) == 0 && fs::is_regular_file(path);
}

std::string find_in_path(const std::string& name) {
  const char* path = std::getenv("PATH");  // NOLINT(concurrency-mt-unsafe): nothing sets it
  std::stringstream ss(path != nullptr ? path : "");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir;
    candidate.append("/").append(name);
    if (executable(candidate)) return candidate;
  }
  return {};
}

std::uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot find a free loopback port");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

std::string random_admin_token() {
  std::random_device rd;
  std::uniform_int_distribution<int> d(0, 15);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 40; ++i) s += kHex[d(rd)];
  return s;
}

void write_file(const std::string& path, const std::string& content, fs::perms perms) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + path);
  out.close();
  fs::permissions(path, perms);
}

// The audit policy: the API server's own loopback traffic, health checks and the
// administrator's reads are left out (tests count writes and the operator's requests,
// and polling would otherwise fill the log); everything else at Metadata level.
constexpr const char* kAuditPolicy = R"(apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  users: ["system:apiserver"]
- level: None
  nonResourceURLs: ["/healthz*", "/livez*", "/readyz*"]
- level: None
  userGroups: ["system:masters"]
  verbs: ["get", "list", "watch"]
- level: Metadata
)";

std::string str(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

// The PKIX public key of a PEM private key (kube-apiserver's
// --service-account-key-file wants public keys).
std::string public_key_pem(const std::string& private_pem) {
  BIO* in = BIO_new_mem_buf(private_pem.data(), static_cast<int>(private_pem.size()));
  EVP_PKEY* key = in != nullptr ? PEM_read_bio_PrivateKey(in, nullptr, nullptr, nullptr) : nullptr;
  BIO* out = BIO_new(BIO_s_mem());
  std::string pem;
  if (key != nullptr && out != nullptr && PEM_write_bio_PUBKEY(out, key) == 1) {
    char* data = nullptr;
    const long n = BIO_get_mem_data(out, &data);
    pem.assign(data, static_cast<std::size_t>(n));
  }
  BIO_free(out);
  EVP_PKEY_free(key);
  BIO_free(in);
  if (pem.empty()) throw std::runtime_error("cannot derive the ServiceAccount public key");
  return pem;
}

std::unique_ptr<ControlPlane>& shared_slot() {
  static std::unique_ptr<ControlPlane> slot;
  return slot;
}
std::mutex& shared_mutex() {
  static std::mutex m;
  return m;
}

// The documents of a file or (recursively, in name order) a directory of YAML files.
std::vector<json::value> read_documents(const std::string& path) {
  std::vector<fs::path> files;
  if (fs::is_directory(path)) {
    for (const auto& e : fs::recursive_directory_iterator(path)) {
      const auto ext = e.path().extension();
      if (e.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json")) {
        files.push_back(e.path());
      }
    }
    std::sort(files.begin(), files.end());
  } else if (fs::exists(path)) {
    files.emplace_back(path);
  } else {
    throw std::runtime_error("preload: " + path + ": no such file or directory");
  }
  std::vector<json::value> out;
  for (const auto& f : files) {
    auto docs = k8s::yaml::parse_all(read_file(f.string()));
    if (!docs) throw std::runtime_error("preload: " + f.string() + ": " + docs.error().message);
    for (auto& d : *docs) {
      if (d.is_null()) continue;
      const auto* kind = d.is_object() ? d.as_object().if_contains("kind") : nullptr;
      const auto* items = d.is_object() ? d.as_object().if_contains("items") : nullptr;
      if (kind != nullptr && kind->is_string() && kind->as_string().ends_with("List") &&
          items != nullptr && items->is_array()) {
        for (auto& i : items->as_array()) out.push_back(i);
      } else {
        out.push_back(std::move(d));
      }
    }
  }
  return out;
}

class ApiServerCluster final : public Cluster {
 public:
  explicit ApiServerCluster(ControlPlane& cp) : cp_(cp), baseline_(cp.audit().size()) {}

  Backend backend() const override { return Backend::kube_apiserver; }
  const std::string& url() const override { return cp_.url(); }
  k8s::ClientConfig client_config() const override {
    k8s::ClientConfig c;
    c.server = cp_.url();
    c.ca_pem = cp_.ca_pem();
    c.token = k8s::make_static_token_source(cp_.admin_token());
    c.source = "the test's kube-apiserver at " + cp_.url();
    return c;
  }
  HttpReply request(std::string_view method, std::string_view path, std::string body,
                    std::string_view content_type) const override {
    return cp_.session().request(method, path, std::move(body), content_type);
  }
  std::vector<AccessRecord> requests(std::string_view user_agent) const override {
    return cp_.audit().since(baseline_, user_agent);
  }
  void reset_stats() override { baseline_ = cp_.audit().size(); }

 private:
  ControlPlane& cp_;
  std::size_t baseline_;
};

}  // namespace

ControlPlaneLookup find_control_plane_binaries() {
  ControlPlaneLookup out;
  // Nothing sets the environment while tests run.
  const char* assets = std::getenv("KUBEBUILDER_ASSETS");  // NOLINT(concurrency-mt-unsafe)
  const char* api = std::getenv("AOP_KUBE_APISERVER");     // NOLINT(concurrency-mt-unsafe)
  if (assets != nullptr && *assets) {
    out.requested = true;
    ControlPlaneBinaries b{std::string(assets) + "/kube-apiserver", std::string(assets) + "/etcd"};
    for (const auto& p : {b.kube_apiserver, b.etcd}) {
      if (!executable(p)) {
        out.error = "KUBEBUILDER_ASSETS=" + std::string(assets) + ": no executable " + p + "; " +
                    kControlPlaneHint;
        return out;
      }
    }
    out.binaries = std::move(b);
    return out;
  }
  if (api != nullptr && *api) {
    out.requested = true;
    if (!executable(api)) {
      out.error = "AOP_KUBE_APISERVER=" + std::string(api) + " is not an executable file; " +
                  kControlPlaneHint;
      return out;
    }
    std::string etcd = find_in_path("etcd");
    if (etcd.empty() && executable("/usr/bin/etcd")) etcd = "/usr/bin/etcd";
    if (etcd.empty()) {
      out.error =
          "AOP_KUBE_APISERVER is set but etcd is neither in PATH nor /usr/bin/etcd: "
          "install it (Debian: apt-get install etcd-server) or use KUBEBUILDER_ASSETS";
      return out;
    }
    out.binaries = ControlPlaneBinaries{api, etcd};
    return out;
  }
  out.error = std::string("no kube-apiserver: ") + kControlPlaneHint;
  return out;
}

// ---- audit log --------------------------------------------------------------------------

void AuditLog::read_new() {
  std::ifstream in(path_, std::ios::binary);
  if (!in) return;
  in.seekg(static_cast<std::streamoff>(offset_));
  std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  offset_ += chunk.size();
  partial_ += chunk;
  std::size_t start = 0;
  for (;;) {
    const auto nl = partial_.find('\n', start);
    if (nl == std::string::npos) break;
    const std::string_view line(partial_.data() + start, nl - start);
    start = nl + 1;
    boost::system::error_code ec;
    const json::value v = json::parse(line, ec);
    if (ec || !v.is_object()) continue;
    const auto& e = v.as_object();
    const auto* ref = e.if_contains("objectRef");
    if (ref == nullptr || !ref->is_object()) continue;  // discovery, /version, ...
    const std::string stage = str(e, "stage");
    const std::string id = str(e, "auditID");
    if (stage == "ResponseStarted") {
      started_.insert(id);  // a watch: record it now, not again when it ends
    } else if (stage != "ResponseComplete" || started_.contains(id)) {
      continue;
    }
    AccessRecord r;
    r.verb = str(e, "verb");
    r.user_agent = str(e, "userAgent");
    if (const auto* u = e.if_contains("user"); u != nullptr && u->is_object()) {
      r.user = str(u->as_object(), "username");
    }
    const auto& o = ref->as_object();
    r.group = str(o, "apiGroup");
    r.resource = str(o, "resource");
    r.subresource = str(o, "subresource");
    r.ns = str(o, "namespace");
    if (const auto* an = e.if_contains("annotations"); an != nullptr && an->is_object()) {
      r.denied = str(an->as_object(), "authorization.k8s.io/decision") == "forbid";
    }
    if (const auto* rs = e.if_contains("responseStatus"); rs != nullptr && rs->is_object()) {
      if (const auto* c = rs->as_object().if_contains("code"); c != nullptr && c->is_number()) {
        r.code = c->to_number<int>();
      }
    }
    records_.push_back(std::move(r));
  }
  partial_.erase(0, start);
}

std::size_t AuditLog::size() {
  const std::lock_guard lock(mutex_);
  read_new();
  return records_.size();
}

std::vector<AccessRecord> AuditLog::since(std::size_t index, std::string_view user_agent) {
  const std::lock_guard lock(mutex_);
  read_new();
  std::vector<AccessRecord> out;
  for (std::size_t i = index; i < records_.size(); ++i) {
    if (user_agent.empty() || records_[i].user_agent == user_agent) out.push_back(records_[i]);
  }
  return out;
}

// ---- the control plane ------------------------------------------------------------------

ControlPlane::ControlPlane(const ControlPlaneBinaries& binaries) {
  const auto started = std::chrono::steady_clock::now();
  // tmpfs when there is one: etcd syncs every write to disk, which a shared build
  // machine makes slow, and nothing here needs to outlive the test.
  std::string base = "aop-control-plane";
  if (fs::is_directory("/dev/shm") && ::access("/dev/shm", W_OK) == 0) {
    std::string tmpl = "/dev/shm/" + base + "-XXXXXX";
    if (::mkdtemp(tmpl.data()) != nullptr) dir_ = tmpl;
  }
  if (dir_.empty()) dir_ = make_temp_dir(base);

  auto ca = net::generate_ca("aop-test-cluster-ca");
  if (!ca) throw std::runtime_error("generating the test CA: " + ca.error().message);
  net::CertificateRequest req;
  req.common_name = "kube-apiserver";
  req.dns_names = {"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"};
  req.ip_addresses = {"127.0.0.1"};
  auto serving = net::issue_certificate(*ca, req);
  if (!serving)
    throw std::runtime_error("issuing the serving certificate: " + serving.error().message);
  auto sa = net::generate_ca("service-account-signer");
  if (!sa) throw std::runtime_error("generating the ServiceAccount key: " + sa.error().message);
  ca_pem_ = ca->cert_pem;
  admin_token_ = random_admin_token();
  const auto owner_only = fs::perms::owner_read | fs::perms::owner_write;
  write_file(dir_ + "/ca.crt", ca->cert_pem, owner_only);
  write_file(dir_ + "/apiserver.crt", serving->cert_pem, owner_only);
  write_file(dir_ + "/apiserver.key", serving->key_pem, owner_only);
  write_file(dir_ + "/service-account.key", sa->key_pem, owner_only);
  write_file(dir_ + "/service-account.pub", public_key_pem(sa->key_pem), owner_only);
  // token,user,uid,"groups": the one administrator; everyone else gets ServiceAccount
  // tokens through the TokenRequest API.
  write_file(dir_ + "/tokens.csv", admin_token_ + ",test-admin,test-admin,\"system:masters\"\n",
             owner_only);
  write_file(dir_ + "/audit-policy.yaml", kAuditPolicy, owner_only);

  try {
    start_etcd(binaries);
    start_apiserver(binaries);
  } catch (...) {
    keep_dir_ = true;
    stop();
    throw;
  }
  audit_ = std::make_unique<AuditLog>(dir_ + "/audit.log");
  session_ = std::make_unique<BlockingSession>(BlockingRequest{url_, ca_pem_, admin_token_});
  start_time_ = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  std::cerr << "[control plane] kube-apiserver " << url_ << " with etcd " << etcd_url_
            << " ready in " << start_time_.count() << " ms (files in " << dir_ << ")\n";
}

ControlPlane::~ControlPlane() {
  stop();
}

void ControlPlane::start_etcd(const ControlPlaneBinaries& binaries) {
  std::string last_error;
  for (int attempt = 1; attempt <= kStartAttempts; ++attempt) {
    const std::string client = "http://127.0.0.1:" + std::to_string(free_port());
    const std::string peer = "http://127.0.0.1:" + std::to_string(free_port());
    const std::string data = dir_ + "/etcd-" + std::to_string(attempt);
    etcd_ = ChildProcess(
        {{binaries.etcd, "--name", "default", "--data-dir", data, "--listen-client-urls", client,
          "--advertise-client-urls", client, "--listen-peer-urls", peer,
          "--initial-advertise-peer-urls", peer, "--initial-cluster", "default=" + peer, "--logger",
          "zap", "--log-level", "warn"},
         dir_ + "/etcd.log"});
    const auto deadline = std::chrono::steady_clock::now() + kEtcdTimeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (etcd_.exited()) break;
      try {
        const auto r = blocking_request({client, "", ""}, "GET", "/health");
        if (r.status == 200 && r.body.find("\"true\"") != std::string::npos) {
          etcd_url_ = client;
          return;
        }
      } catch (const std::exception&) {
        // not listening yet
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // polling a child
    }
    last_error = etcd_.exited() ? "etcd exited" : "etcd did not become healthy in time";
    last_error += "; its log ends:\n" + etcd_.log_tail();
    etcd_.stop();
  }
  throw std::runtime_error("starting etcd (" + binaries.etcd + "): " + last_error);
}

void ControlPlane::start_apiserver(const ControlPlaneBinaries& binaries) {
  std::string last_error;
  for (int attempt = 1; attempt <= kStartAttempts; ++attempt) {
    const auto port = free_port();
    url_ = "https://127.0.0.1:" + std::to_string(port);
    apiserver_ = ChildProcess(
        {{binaries.kube_apiserver, "--etcd-servers=" + etcd_url_, "--bind-address=127.0.0.1",
          "--secure-port=" + std::to_string(port), "--tls-cert-file=" + dir_ + "/apiserver.crt",
          "--tls-private-key-file=" + dir_ + "/apiserver.key",
          "--service-account-key-file=" + dir_ + "/service-account.pub",
          "--service-account-signing-key-file=" + dir_ + "/service-account.key",
          "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
          "--service-cluster-ip-range=10.96.0.0/16", "--token-auth-file=" + dir_ + "/tokens.csv",
          "--authorization-mode=RBAC", "--audit-log-path=" + dir_ + "/audit.log",
          "--audit-policy-file=" + dir_ + "/audit-policy.yaml", "--audit-log-mode=blocking",
          // What kubeadm clusters set, so that the privileged integrations DaemonSet
          // (upstream's default) validates.
          "--allow-privileged=true",
          // Owner references with blockOwnerDeletion need update on the owner's
          // finalizers (OpenShift and hardened clusters enable this plugin).
          "--enable-admission-plugins=OwnerReferencesPermissionEnforcement",
          // Nothing here runs the kubernetes Service's endpoints.
          "--endpoint-reconciler-type=none"},
         dir_ + "/kube-apiserver.log"});
    try {
      wait_ready(std::chrono::steady_clock::now() + kApiServerTimeout);
      return;
    } catch (const std::exception& e) {
      last_error = e.what();
      apiserver_.stop(std::chrono::seconds(5));
    }
  }
  throw std::runtime_error("starting kube-apiserver (" + binaries.kube_apiserver +
                           "): " + last_error);
}

void ControlPlane::wait_ready(std::chrono::steady_clock::time_point deadline) {
  std::string last;
  while (std::chrono::steady_clock::now() < deadline) {
    if (apiserver_.exited()) {
      throw std::runtime_error("kube-apiserver exited; its log ends:\n" + apiserver_.log_tail());
    }
    try {
      const auto r = blocking_request({url_, ca_pem_, admin_token_}, "GET", "/readyz");
      if (r.status == 200) return;
      last = "HTTP " + std::to_string(r.status) + ": " + r.body;
    } catch (const std::exception& e) {
      last = e.what();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // polling a child
  }
  throw std::runtime_error("kube-apiserver was not ready in time (last /readyz: " + last +
                           "); its log ends:\n" + apiserver_.log_tail());
}

void ControlPlane::preload(const std::vector<std::string>& paths) {
  const std::lock_guard lock(preload_mutex_);
  const ApiServerCluster view(*this);
  const Cluster& cluster = view;
  for (const auto& path : paths) {
    if (preloaded_.contains(path)) continue;
    auto docs = read_documents(path);
    auto rank = [](const json::value& v) {
      const std::string kind = str(v.as_object(), "kind");
      return kind == "CustomResourceDefinition" ? 0 : kind == "Namespace" ? 1 : 2;
    };
    std::stable_sort(docs.begin(), docs.end(),
                     [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
    std::vector<json::object> crds;
    for (const auto& d : docs) {
      const std::string target = cluster.collection_path(d);
      const auto r = cluster.request("POST", target, json::serialize(d));
      if (r.status != 201 && r.status != 409) {
        std::string what = "preload ";
        what.append(path).append(": POST ").append(target).append(": HTTP ");
        what.append(std::to_string(r.status)).append(": ").append(r.body);
        throw std::runtime_error(what);
      }
      if (rank(d) == 0) crds.push_back(d.as_object());
    }
    // Established, then served: discovery lists the plural in every served version.
    for (const auto& crd : crds) {
      const std::string name(crd.at("metadata").at("name").as_string());
      const auto& spec = crd.at("spec").as_object();
      const std::string group(spec.at("group").as_string());
      const std::string plural(spec.at("names").at("plural").as_string());
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      auto served = [&] {
        const auto r = cluster.request(
            "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + name);
        if (r.status != 200) return false;
        bool established = false;
        const auto v = json::parse(r.body);
        // A CRD just created may answer "conditions": null.
        const auto* status = v.as_object().if_contains("status");
        const auto* conds = status != nullptr && status->is_object()
                                ? status->as_object().if_contains("conditions")
                                : nullptr;
        if (conds != nullptr && conds->is_array()) {
          for (const auto& c : conds->as_array()) {
            established = established || (c.at("type").as_string() == "Established" &&
                                          c.at("status").as_string() == "True");
          }
        }
        if (!established) return false;
        for (const auto& ver : spec.at("versions").as_array()) {
          if (!ver.at("served").as_bool()) continue;
          const auto d = cluster.request(
              "GET", "/apis/" + group + "/" + std::string(ver.at("name").as_string()));
          if (d.status != 200 || d.body.find("\"name\":\"" + plural + "\"") == std::string::npos) {
            return false;
          }
        }
        return true;
      };
      while (!served()) {
        if (std::chrono::steady_clock::now() > deadline) {
          std::string what = "preload ";
          what.append(path).append(": CustomResourceDefinition ").append(name);
          throw std::runtime_error(what + " was not served within 60 s");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling the server
      }
    }
    preloaded_.insert(path);
  }
}

void ControlPlane::stop() {
  session_.reset();
  // Open watches would keep kube-apiserver up for a minute after SIGTERM; the tests'
  // clients are gone by now, so a few seconds is plenty before SIGKILL.
  apiserver_.stop(std::chrono::seconds(10));
  etcd_.stop(std::chrono::seconds(10));
  if (dir_.empty()) return;
  const bool failed = ::testing::UnitTest::GetInstance()->failed_test_count() > 0;
  if (keep_dir_ || failed) {
    std::cerr << "[control plane] logs kept in " << dir_
              << " (kube-apiserver.log, etcd.log, audit.log)\n";
  } else {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  dir_.clear();
}

ControlPlane& ControlPlane::shared() {
  const std::lock_guard lock(shared_mutex());
  auto& slot = shared_slot();
  // A control plane that failed to start is not tried again by every later test.
  static std::string failure;
  if (!failure.empty()) throw std::runtime_error("the control plane failed to start: " + failure);
  if (!slot) {
    try {
      const auto lookup = find_control_plane_binaries();
      if (!lookup.binaries) throw std::runtime_error(lookup.error);
      slot = std::make_unique<ControlPlane>(*lookup.binaries);
    } catch (const std::exception& e) {
      failure = e.what();
      throw;
    }
  }
  return *slot;
}

void ControlPlane::stop_shared() {
  const std::lock_guard lock(shared_mutex());
  shared_slot().reset();
}

std::unique_ptr<Cluster> attach_control_plane(const ClusterOptions& options) {
  ControlPlane& cp = ControlPlane::shared();
  cp.preload(options.preload);
  return std::make_unique<ApiServerCluster>(cp);
}

}  // namespace aop::testing

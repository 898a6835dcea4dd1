#include "tests/k8s/sim_fixture.hpp"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <random>
#include <stdexcept>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tests/k8s/http_request.hpp"

namespace aop::testing {

namespace {

// kube-sim prints its URL once it serves; a Debug build under load starts in well under
// a second, so a minute only matters when something is wrong.
constexpr auto kStartTimeout = std::chrono::seconds(60);
constexpr auto kStopGrace = std::chrono::seconds(10);
constexpr std::string_view kReadyPrefix = "kube-sim listening on ";

bool has_flag(const std::vector<std::string>& args, std::string_view flag) {
  for (const auto& a : args) {
    if (a == flag || a.starts_with(std::string(flag) + "=")) return true;
  }
  return false;
}

std::string random_sim_token() {
  std::random_device rd;
  std::uniform_int_distribution<int> d(0, 15);
  std::string s = "sim-admin-";
  for (int i = 0; i < 24; ++i) s += "0123456789abcdef"[d(rd)];
  return s;
}

}  // namespace

std::string KubeSim::binary_path() {
  return std::string(AOP_BINARY_DIR) + "/bin/kube-sim";
}

KubeSim::KubeSim(std::vector<std::string> args) {
  const std::string binary = binary_path();
  if (::access(binary.c_str(), X_OK) != 0) {
    throw std::runtime_error("kube-sim is not built: " + binary +
                             " does not exist; build it first (ninja -C " AOP_BINARY_DIR
                             " kube-sim, or cmake --build --preset dev)");
  }
  dir_ = make_temp_dir("aop-kube-sim");
  kubeconfig_ = dir_ + "/kubeconfig";

  std::vector<std::string> argv{binary, "--listen", "127.0.0.1:0", "--kubeconfig-out", kubeconfig_};
  // Open watches would keep a stopping kube-sim up for its default minute; the fixture's
  // clients are gone by then.
  if (!has_flag(args, "--shutdown-grace")) argv.insert(argv.end(), {"--shutdown-grace", "2s"});
  if (has_flag(args, "--rbac") && !has_flag(args, "--token")) {
    token_ = random_sim_token();
    argv.insert(argv.end(), {"--token", token_});
  }
  argv.insert(argv.end(), args.begin(), args.end());
  process_ = ChildProcess({std::move(argv), dir_ + "/kube-sim.log", true});

  const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  for (;;) {
    const auto line = process_.read_line(deadline);
    if (!line) {
      const bool timed_out = std::chrono::steady_clock::now() >= deadline;
      stop();
      throw std::runtime_error(std::string(timed_out ? "kube-sim did not report ready within 60 s"
                                                     : "kube-sim exited before it was ready") +
                               "; its log ends:\n" + log_tail());
    }
    if (line->rfind(kReadyPrefix, 0) == 0) {
      url_ = line->substr(kReadyPrefix.size());
      break;
    }
  }
  // stdout stays open (unread) so a stray print cannot kill kube-sim with SIGPIPE.
}

KubeSim::~KubeSim() {
  stop();
  if (::testing::Test::HasFailure()) {
    std::cerr << "kube-sim log kept in " << log_path() << "; it ends:\n" << log_tail() << "\n";
  } else if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

void KubeSim::stop() {
  process_.stop(kStopGrace);
}

k8s::ClientConfig KubeSim::client_config() const {
  auto config = k8s::load_kubeconfig_files({kubeconfig_}, "", true);
  if (!config) throw std::runtime_error("kube-sim's kubeconfig: " + config.error().message);
  return std::move(*config);
}

HttpReply KubeSim::request(std::string_view method, std::string_view path, std::string body,
                           std::string_view content_type) const {
  BlockingRequest to{url_, "", token_, "kube-sim-fixture"};
  if (url_.rfind("https://", 0) == 0) to.ca_pem = client_config().ca_pem;
  return blocking_request(to, method, path, std::move(body), content_type);
}

std::vector<AccessRecord> KubeSim::requests(std::string_view user_agent) const {
  const auto r = request("GET", "/admin/access");
  if (r.status != 200) {
    throw std::runtime_error("GET /admin/access: HTTP " + std::to_string(r.status) + ": " + r.body);
  }
  std::vector<AccessRecord> out;
  const boost::json::value body = boost::json::parse(r.body);
  for (const auto& v : body.at("items").as_array()) {
    const auto& o = v.as_object();
    AccessRecord a;
    auto s = [&](std::string_view k) { return std::string(o.at(k).as_string()); };
    a.user = s("user");
    a.user_agent = s("user_agent");
    if (!user_agent.empty() && a.user_agent != user_agent) continue;
    a.verb = s("verb");
    a.group = s("group");
    a.resource = s("resource");
    a.subresource = s("subresource");
    a.ns = s("namespace");
    a.code = o.at("code").to_number<int>();
    a.denied = o.at("denied").as_bool();
    const auto n = o.at("count").to_number<std::uint64_t>();
    for (std::uint64_t i = 0; i < n; ++i) out.push_back(a);
  }
  return out;
}

boost::json::value KubeSim::stats() const {
  const auto r = request("GET", "/admin/stats");
  if (r.status != 200)
    throw std::runtime_error("GET /admin/stats: HTTP " + std::to_string(r.status));
  return boost::json::parse(r.body);
}

void KubeSim::set_faults(std::string_view json_body) const {
  const auto r = request("POST", "/admin/faults", std::string(json_body));
  if (r.status < 200 || r.status >= 300) {
    throw std::runtime_error("POST /admin/faults: HTTP " + std::to_string(r.status) + ": " +
                             r.body);
  }
}

void KubeSim::clear_faults() const {
  set_faults(R"({"reset": true})");
}

void KubeSim::reset_stats() {
  const auto r = request("POST", "/admin/reset-stats");
  if (r.status < 200 || r.status >= 300) {
    throw std::runtime_error("POST /admin/reset-stats: HTTP " + std::to_string(r.status));
  }
}

std::uint64_t KubeSim::writes_by(std::string_view user_agent) const {
  const auto s = stats();
  const auto* by = s.at("writes").as_object().if_contains("by_user_agent");
  if (by == nullptr || !by->is_object()) return 0;
  const auto* n = by->as_object().if_contains(user_agent);
  return n != nullptr ? n->to_number<std::uint64_t>() : 0;
}

}  // namespace aop::testing

#include "tests/k8s/sim_fixture.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include "net/http_client.hpp"

namespace aop::testing {

namespace {

// kube-sim prints its URL once it serves; a Debug build under load starts in well under
// a second, so a minute only matters when something is wrong.
constexpr auto kStartTimeout = std::chrono::seconds(60);
constexpr auto kStopGrace = std::chrono::seconds(10);
constexpr std::string_view kReadyPrefix = "kube-sim listening on ";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
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
  std::string tmpl = (std::filesystem::temp_directory_path() / "aop-kube-sim-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    throw std::runtime_error(std::string("cannot create a temporary directory: ") +
                             std::strerror(errno));
  }
  dir_ = tmpl;
  kubeconfig_ = dir_ + "/kubeconfig";
  log_ = dir_ + "/kube-sim.log";

  std::vector<std::string> argv_strings{binary, "--listen", "127.0.0.1:0", "--kubeconfig-out",
                                        kubeconfig_};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);

  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  const int log_fd = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    // Only async-signal-safe calls from here on. Die with the test process.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    ::dup2(null_fd, STDIN_FILENO);
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  pid_ = pid;
  ::close(out[1]);
  ::close(log_fd);
  ::close(null_fd);
  stdout_fd_ = out[0];

  // Wait for the ready line.
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      stop();
      throw std::runtime_error("kube-sim did not report ready within 60 s; its log ends:\n" +
                               log_tail());
    }
    pollfd pfd{stdout_fd_, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char c = 0;
    const ssize_t n = ::read(stdout_fd_, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      stop();
      throw std::runtime_error("kube-sim exited before it was ready; its log ends:\n" + log_tail());
    }
    if (c == '\n') {
      if (line.rfind(kReadyPrefix, 0) == 0) break;
      line.clear();
      continue;
    }
    line.push_back(c);
  }
  url_ = line.substr(kReadyPrefix.size());
  // stdout stays open (unread) so a stray print cannot kill kube-sim with SIGPIPE.
}

KubeSim::~KubeSim() {
  stop();
  if (::testing::Test::HasFailure()) {
    std::cerr << "kube-sim log kept in " << log_ << "; it ends:\n" << log_tail() << "\n";
  } else if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

void KubeSim::stop() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + kStopGrace;
    int status = 0;
    bool reaped = false;
    while (std::chrono::steady_clock::now() < deadline) {
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_ || (r < 0 && errno == ECHILD)) {
        reaped = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // polling a child, not a test
    }
    if (!reaped) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
    }
    pid_ = -1;
  }
  if (stdout_fd_ >= 0) {
    ::close(stdout_fd_);
    stdout_fd_ = -1;
  }
}

std::string KubeSim::log_tail(std::size_t bytes) const {
  const std::string log = read_file(log_);
  return log.size() <= bytes ? log : log.substr(log.size() - bytes);
}

k8s::ClientConfig KubeSim::client_config() const {
  auto config = k8s::load_kubeconfig_files({kubeconfig_}, "", true);
  if (!config) throw std::runtime_error("kube-sim's kubeconfig: " + config.error().message);
  return std::move(*config);
}

SimResponse KubeSim::request(std::string_view method, std::string_view path, std::string body,
                             std::string_view content_type) const {
  boost::asio::io_context io;
  net::HttpClientOptions options;
  if (url_.rfind("https://", 0) == 0) options.tls.ca_pem = client_config().ca_pem;
  auto client = net::HttpClient::create(io.get_executor(), url_, options);
  if (!client) throw std::runtime_error("kube-sim request: " + client.error().message);
  net::HttpRequest req;
  const auto m = net::parse_method(method);
  if (!m) throw std::runtime_error("kube-sim request: unknown method " + std::string(method));
  req.method = *m;
  req.target = std::string(path);
  req.body = std::move(body);
  if (!req.body.empty()) req.headers.set("Content-Type", std::string(content_type));
  req.headers.set("Accept", "application/json");
  req.headers.set("User-Agent", "kube-sim-fixture");
  std::optional<boost::system::result<net::HttpResponse>> result;
  boost::asio::co_spawn(io, (*client)->request(std::move(req)),
                        [&](std::exception_ptr e, boost::system::result<net::HttpResponse> r) {
                          if (e) std::rethrow_exception(e);
                          result = std::move(r);
                        });
  io.run();
  if (!result || !*result) {
    throw std::runtime_error("kube-sim request " + std::string(method) + " " + std::string(path) +
                             " failed: " + (result ? result->error().message() : "no result"));
  }
  return SimResponse{(*result)->status, std::move((*result)->body)};
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

void KubeSim::reset_stats() const {
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

#include "tests/k8s/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>

namespace aop::testing {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string make_temp_dir(const std::string& prefix) {
  std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    throw std::runtime_error(std::string("cannot create a temporary directory: ") +
                             std::generic_category().message(errno));
  }
  return tmpl;
}

ChildProcess::ChildProcess(Options options) : log_path_(std::move(options.log_path)) {
  if (options.argv.empty()) throw std::invalid_argument("ChildProcess: empty argv");
  std::vector<char*> argv;
  for (auto& a : options.argv) argv.push_back(a.data());
  argv.push_back(nullptr);

  int out[2] = {-1, -1};
  if (options.pipe_stdout && ::pipe2(out, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe2 failed: ") +
                             std::generic_category().message(errno));
  }
  const int log_fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    throw std::runtime_error("cannot open " + log_path_ + ": " +
                             std::generic_category().message(errno));
  }
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0)
    throw std::runtime_error(std::string("fork failed: ") + std::generic_category().message(errno));
  if (pid == 0) {
    // Only async-signal-safe calls from here on. Die with the test process.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    ::dup2(null_fd, STDIN_FILENO);
    ::dup2(options.pipe_stdout ? out[1] : log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  pid_ = pid;
  ::close(log_fd);
  ::close(null_fd);
  if (options.pipe_stdout) {
    ::close(out[1]);
    stdout_fd_ = out[0];
  }
}

ChildProcess::~ChildProcess() {
  stop();
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : log_path_(std::move(other.log_path_)),
      pid_(std::exchange(other.pid_, -1)),
      stdout_fd_(std::exchange(other.stdout_fd_, -1)),
      pending_(std::move(other.pending_)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    stop();
    log_path_ = std::move(other.log_path_);
    pid_ = std::exchange(other.pid_, -1);
    stdout_fd_ = std::exchange(other.stdout_fd_, -1);
    pending_ = std::move(other.pending_);
  }
  return *this;
}

std::string ChildProcess::log_tail(std::size_t bytes) const {
  const std::string log = read_file(log_path_);
  return log.size() <= bytes ? log : log.substr(log.size() - bytes);
}

std::optional<std::string> ChildProcess::read_line(std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    if (const auto nl = pending_.find('\n'); nl != std::string::npos) {
      std::string line = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      return line;
    }
    if (stdout_fd_ < 0) return std::nullopt;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd pfd{stdout_fd_, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buf[512];
    const ssize_t n = ::read(stdout_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close_pipe();
      return std::nullopt;
    }
    pending_.append(buf, static_cast<std::size_t>(n));
  }
}

bool ChildProcess::exited(int* status) {
  if (pid_ <= 0) return true;
  int s = 0;
  const pid_t r = ::waitpid(pid_, &s, WNOHANG);
  if (r == pid_ || (r < 0 && errno == ECHILD)) {
    pid_ = -1;
    if (status != nullptr) *status = s;
    return true;
  }
  return false;
}

void ChildProcess::signal(int sig) const {
  if (pid_ > 0) ::kill(pid_, sig);
}

int ChildProcess::stop(std::chrono::milliseconds grace) {
  int status = 0;
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + grace;
    bool reaped = false;
    while (std::chrono::steady_clock::now() < deadline) {
      if (exited(&status)) {
        reaped = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // polling a child, not a test
    }
    if (!reaped && pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      pid_ = -1;
    }
  }
  close_pipe();
  return status;
}

void ChildProcess::close_pipe() {
  if (stdout_fd_ >= 0) {
    ::close(stdout_fd_);
    stdout_fd_ = -1;
  }
}

}  // namespace aop::testing

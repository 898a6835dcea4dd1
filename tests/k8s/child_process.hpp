// A server process started by a test fixture (kube-sim, etcd, kube-apiserver): its
// stderr (and stdout unless piped) goes to a log file, it gets SIGKILL when the thread
// that started it exits (PR_SET_PDEATHSIG), and stop() ends it with SIGTERM, then
// SIGKILL after a grace period.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace aop::testing {

class ChildProcess {
 public:
  struct Options {
    std::vector<std::string> argv;  // argv[0] is the binary's path
    std::string log_path;           // stderr (and stdout unless pipe_stdout)
    bool pipe_stdout = false;       // stdout readable with read_line()
  };

  ChildProcess() = default;
  // Forks and executes. Throws std::runtime_error when it cannot.
  explicit ChildProcess(Options options);
  ~ChildProcess();
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }
  const std::string& log_path() const { return log_path_; }
  std::string log_tail(std::size_t bytes = 4000) const;

  // The next line of a piped stdout, waiting until `deadline`; nullopt on timeout or
  // when the process closed its stdout (exited).
  std::optional<std::string> read_line(std::chrono::steady_clock::time_point deadline);

  // True once the process has exited (reaps it); `status` gets the waitpid status.
  bool exited(int* status = nullptr);

  // SIGTERM, then SIGKILL after `grace`. Idempotent. Returns the waitpid status.
  int stop(std::chrono::milliseconds grace = std::chrono::seconds(10));
  // Sends a signal without waiting.
  void signal(int sig) const;

 private:
  void close_pipe();

  std::string log_path_;
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  std::string pending_;  // read from stdout, not yet a whole line
};

// Reads a whole file ("" when it cannot be read).
std::string read_file(const std::string& path);

// Creates a fresh directory under the system's temporary directory.
std::string make_temp_dir(const std::string& prefix);

}  // namespace aop::testing

// CPU time and memory of the calling process, for benchmarks that run each case in a
// forked child (so that one case's peak memory does not hide the next one's: ru_maxrss
// only grows).
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>

namespace aop::bench {

struct Usage {
  double cpu_ms = 0;     // user + system
  long max_rss_kib = 0;  // peak resident set size so far
};

inline Usage usage() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const auto ms = [](const timeval& t) { return t.tv_sec * 1000.0 + t.tv_usec / 1000.0; };
  return {ms(ru.ru_utime) + ms(ru.ru_stime), ru.ru_maxrss};
}

// Current resident set size in KiB (ru_maxrss of a fresh fork is the parent's peak, so
// the child's baseline is read from /proc).
inline long current_rss_kib() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  long pages = 0;
  long resident = 0;
  if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
  std::fclose(f);
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

// What one case cost in its own forked child, and what it said.
struct ChildRun {
  double cpu_ms = 0;
  double extra_mib = 0;   // peak resident size above the child's size at the fork
  bool reported = false;  // the case reported the input (an error, a problem)
  std::string text;       // what it reported, cut to a line
};

// Runs `body` in a forked child and measures its CPU time and extra peak memory.
// `body` returns whether the input was reported and what was said. nullopt when the
// child did not come back.
template <class Body>
std::optional<ChildRun> run_in_child(Body body) {
  struct Wire {
    double cpu_ms;
    double extra_mib;
    bool reported;
    char text[240];
  };
  int fds[2];
  if (pipe(fds) != 0) return std::nullopt;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    // A forked child's high-water mark starts at its resident size at the fork.
    const long baseline_kib = current_rss_kib();
    const Usage before = usage();
    const auto [reported, text] = body();
    const Usage after = usage();
    Wire w{};
    w.cpu_ms = after.cpu_ms - before.cpu_ms;
    w.extra_mib =
        static_cast<double>(std::max(after.max_rss_kib, baseline_kib) - baseline_kib) / 1024.0;
    w.reported = reported;
    std::snprintf(w.text, sizeof w.text, "%s", std::string(text).c_str());
    if (write(fds[1], &w, sizeof w) != static_cast<ssize_t>(sizeof w)) _exit(2);
    _exit(0);
  }
  close(fds[1]);
  Wire w{};
  const bool got = read(fds[0], &w, sizeof w) == static_cast<ssize_t>(sizeof w);
  close(fds[0]);
  int child = 0;
  waitpid(pid, &child, 0);
  if (!got || !WIFEXITED(child) || WEXITSTATUS(child) != 0) return std::nullopt;
  return ChildRun{w.cpu_ms, w.extra_mib, w.reported, w.text};
}

}  // namespace aop::bench

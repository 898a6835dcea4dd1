// CPU time and memory of the calling process, for benchmarks that run each case in a
// forked child (so that one case's peak memory does not hide the next one's: ru_maxrss
// only grows).
#pragma once

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

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

}  // namespace aop::bench

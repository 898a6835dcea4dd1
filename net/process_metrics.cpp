// process_* metrics, as every Prometheus client library exports them, so that the usual
// dashboards and alerts (memory, CPU, file descriptors, restarts) work for the operator.
// Everything is read from /proc when scraped; nothing runs between scrapes.
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "net/metrics.hpp"

namespace aop::net::metrics {

namespace {

// The fields of /proc/self/stat after the command name (which may hold spaces and
// parentheses, so the split starts after its last ')'): fields[0] is field 3 (state).
std::vector<std::string> stat_fields() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  std::getline(in, line);
  const auto close = line.rfind(')');
  std::vector<std::string> out;
  if (close == std::string::npos) return out;
  std::istringstream rest(line.substr(close + 1));
  for (std::string f; rest >> f;) out.push_back(f);
  return out;
}

// Field N of proc(5)'s /proc/[pid]/stat numbering (1-based), or 0 when unreadable.
double stat_field(const std::vector<std::string>& fields, std::size_t n) {
  const std::size_t index = n - 3;
  if (index >= fields.size()) return 0;
  try {
    return std::stod(fields[index]);
  } catch (const std::exception&) {
    return 0;
  }
}

double clock_ticks() {
  const long t = ::sysconf(_SC_CLK_TCK);
  return t > 0 ? static_cast<double>(t) : 100.0;
}

// The boot time (seconds since the epoch): "btime" in /proc/stat.
double boot_time() {
  std::ifstream in("/proc/stat");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("btime ", 0) == 0) return std::stod(line.substr(6));
  }
  return 0;
}

}  // namespace

void register_process_metrics(Registry& r) {
  r.counter_callback("process_cpu_seconds_total",
                     "Total user and system CPU time spent in seconds.", [] {
                       const auto f = stat_fields();
                       return (stat_field(f, 14) + stat_field(f, 15)) / clock_ticks();
                     });
  r.gauge_callback("process_resident_memory_bytes", "Resident memory size in bytes.", [] {
    return stat_field(stat_fields(), 24) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  });
  r.gauge_callback("process_virtual_memory_bytes", "Virtual memory size in bytes.",
                   [] { return stat_field(stat_fields(), 23); });
  r.gauge_callback("process_open_fds", "Number of open file descriptors.", [] {
    std::error_code ec;
    double n = 0;
    for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
      ++n;
    }
    return n > 0 ? n - 1 : 0;  // less the descriptor of the listing itself
  });
  r.gauge_callback("process_max_fds", "Maximum number of open file descriptors.", [] {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return -1.0;
    return static_cast<double>(limit.rlim_cur);
  });
  // Fixed for the life of the process: computed once.
  const double start = boot_time() + stat_field(stat_fields(), 22) / clock_ticks();
  r.gauge_callback("process_start_time_seconds",
                   "Start time of the process since unix epoch in seconds.",
                   [start] { return start; });
}

}  // namespace aop::net::metrics

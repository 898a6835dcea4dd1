// What each hostile YAML input of tests/k8s/yaml_poison.hpp costs before the parser
// refuses it: CPU time and peak resident memory above the process's baseline. Each input
// runs in its own forked child, so that one input's peak does not hide the next one's
// (ru_maxrss only grows). The input text is built before the fork and not counted.
//
//   build/release/bench/k8s_yaml_poison_bench
//
// Prints one line per input: name, CPU ms (user + system), extra peak RSS in MiB, and
// the error. Exit status 1 if any input parsed, or took ≥ 1 s CPU or ≥ 64 MiB.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "bench/process_usage.hpp"
#include "k8s/yaml.hpp"
#include "tests/k8s/yaml_poison.hpp"

namespace {

using aop::bench::current_rss_kib;
using aop::bench::usage;
using aop::bench::Usage;

struct Outcome {
  double cpu_ms;
  double extra_mib;
  bool failed;
  char error[200];
};

}  // namespace

int main() {
  int status = 0;
  std::printf("%-42s %10s %12s  %s\n", "input", "CPU ms", "extra MiB", "error");
  for (const auto& p : aop::test::poison_yaml()) {
    int fds[2];
    if (pipe(fds) != 0) return 2;
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      // A forked child's high-water mark starts at its resident size at the fork.
      const long baseline_kib = current_rss_kib();
      const Usage before = usage();
      auto r = aop::k8s::yaml::parse_all(p.text, p.limits);
      const Usage after = usage();
      Outcome o{};
      o.cpu_ms = after.cpu_ms - before.cpu_ms;
      const long peak = std::max(after.max_rss_kib, baseline_kib);
      o.extra_mib = static_cast<double>(peak - baseline_kib) / 1024.0;
      o.failed = !r;
      std::snprintf(o.error, sizeof o.error, "%s", r ? "(parsed)" : r.error().message.c_str());
      if (write(fds[1], &o, sizeof o) != static_cast<ssize_t>(sizeof o)) _exit(2);
      _exit(0);
    }
    close(fds[1]);
    Outcome o{};
    const bool got = read(fds[0], &o, sizeof o) == static_cast<ssize_t>(sizeof o);
    close(fds[0]);
    int wstatus = 0;
    waitpid(pid, &wstatus, 0);
    if (!got) {
      std::printf("%-42s child failed\n", p.name.c_str());
      status = 1;
      continue;
    }
    std::printf("%-42s %10.1f %12.1f  %s\n", p.name.c_str(), o.cpu_ms, o.extra_mib, o.error);
    if (!o.failed || o.cpu_ms >= 1000 || o.extra_mib >= 64) status = 1;
  }
  return status;
}

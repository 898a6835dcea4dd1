// What each hostile YAML input of tests/k8s/yaml_poison.hpp costs before the parser
// refuses it: CPU time and peak resident memory above the process's baseline. Each input
// runs in its own forked child, so that one input's peak does not hide the next one's
// (ru_maxrss only grows). The input text is built before the fork and not counted.
//
//   build/release/bench/k8s_yaml_poison_bench
//
// Prints one line per input: name, CPU ms (user + system), extra peak RSS in MiB, and
// the error. Exit status 1 if any input parsed, or took ≥ 1 s CPU or ≥ 64 MiB.
#include <cstdio>
#include <string>
#include <utility>

#include "bench/process_usage.hpp"
#include "k8s/yaml.hpp"
#include "tests/k8s/yaml_poison.hpp"

int main() {
  int status = 0;
  std::printf("%-42s %10s %12s  %s\n", "input", "CPU ms", "extra MiB", "error");
  for (const auto& p : aop::test::poison_yaml()) {
    const auto run = aop::bench::run_in_child([&p] {
      auto r = aop::k8s::yaml::parse_all(p.text, p.limits);
      return std::pair<bool, std::string>(!r, r ? "(parsed)" : r.error().message);
    });
    if (!run) {
      std::printf("%-42s child failed\n", p.name.c_str());
      status = 1;
      continue;
    }
    std::printf("%-42s %10.1f %12.1f  %.200s\n", p.name.c_str(), run->cpu_ms, run->extra_mib,
                run->text.c_str());
    if (!run->reported || run->cpu_ms >= 1000 || run->extra_mib >= 64) status = 1;
  }
  return status;
}

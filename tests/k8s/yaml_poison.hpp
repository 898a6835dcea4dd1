// Hostile YAML inputs, shared by the limit tests (tests/k8s/yaml_limits_test.cpp) and the
// poison benchmark (bench/k8s/yaml_poison_bench.cpp), which measures the CPU time and
// memory each one costs before it fails.
#pragma once

#include <string>
#include <vector>

#include "k8s/yaml.hpp"

namespace aop::test {

struct PoisonYaml {
  std::string name;
  std::string text;
  // A phrase the error message must contain.
  std::string error;
  k8s::yaml::ParseLimits limits = {};
};

// Limits as for a whole file of manifests: a larger input, so that a long scalar meets
// the scalar limit instead of the input limit.
inline k8s::yaml::ParseLimits large_input() {
  k8s::yaml::ParseLimits l;
  l.max_input_bytes = 64u << 20;
  return l;
}

// "Billion laughs": each level is a list of ten aliases of the level below, so `levels`
// levels expand to 10^levels scalars from about 80 bytes per level.
inline std::string laughs(int levels) {
  std::string out =
      "a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  for (int i = 1; i <= levels; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    out += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) out += (k == 0 ? "" : ",") + prev;
    out += "]\n";
  }
  return out;
}

// The same through merge keys: each mapping merges the one below twice under new keys.
inline std::string merge_bomb(int levels) {
  std::string out = "m0: &m0 {a: 1, b: 2, c: 3, d: 4}\n";
  for (int i = 1; i <= levels; ++i) {
    const std::string prev = "*m" + std::to_string(i - 1);
    out += "m" + std::to_string(i) + ": &m" + std::to_string(i) + " {x: " + prev + ", y: " + prev +
           ", z: " + prev + ", <<: " + prev + "}\n";
  }
  return out;
}

inline std::vector<PoisonYaml> poison_yaml() {
  std::vector<PoisonYaml> out;
  out.push_back({"billion laughs (1 KiB)", laughs(9), "aliases expand to more than"});
  out.push_back(
      {"alias bomb in an additional scrape config",
       "- job_name: x\n  static_configs: &s [{targets: [a, b, c, d, e, f, g, h]}]\n" + laughs(8),
       "aliases expand to more than"});
  out.push_back({"merge-key bomb", merge_bomb(16), "aliases expand to more than"});
  out.push_back({"deep flow nesting", std::string(100'000, '[') + std::string(100'000, ']'),
                 "nesting is deeper than"});
  {
    std::string deep;
    for (int i = 0; i < 2'000; ++i) deep += std::string(static_cast<std::size_t>(i), ' ') + "a:\n";
    out.push_back({"deep block nesting", deep, "nesting is deeper than"});
  }
  {
    std::string wide = "[";
    for (int i = 0; i < 1'200'000; ++i) wide += "0,";
    wide += "0]";
    out.push_back({"JSON array of 1.2 million numbers", wide, "more than 250000 nodes"});
  }
  {
    std::string flow = "a: {";
    for (int i = 0; i < 200'000; ++i) flow += "k" + std::to_string(i) + ": 0, ";
    flow += "z: 0}\n";
    out.push_back({"YAML flow mapping of 200,000 entries", flow,
                   "has more than 100000 elements; write large collections in block style"});
  }
  {
    std::string block;
    for (int i = 0; i < 1'000'000; ++i) block += "- 0\n";
    out.push_back({"block list of a million items", block, "more than 250000 nodes"});
  }
  out.push_back(
      {"10 MiB plain string", "a: " + std::string(10u << 20, 'x') + "\n", "bytes long; at most"});
  out.push_back({"10 MiB quoted string", "a: \"" + std::string(10u << 20, 'x') + "\"\n",
                 "bytes long; at most"});
  out.push_back({"10 MiB plain string in a 64 MiB input",
                 "a: " + std::string(10u << 20, 'x') + "\n", "is longer than 4194304 bytes",
                 large_input()});
  out.push_back({"10 MiB literal block in a 64 MiB input",
                 "a: |\n  " + std::string(10u << 20, 'x') + "\n", "is longer than 4194304 bytes",
                 large_input()});
  out.push_back({"many documents",
                 [] {
                   std::string s;
                   for (int i = 0; i < 100'000; ++i) s += "---\na: 1\n";
                   return s;
                 }(),
                 "more than 20000 documents"});
  out.push_back({"UTF-16 LE with a byte order mark",
                 std::string("\xFF\xFE"
                             "a\0:\0 \0"
                             "1\0",
                             10),
                 "UTF-16"});
  out.push_back({"UTF-16 BE without a byte order mark",
                 std::string("\0a\0:\0 \0"
                             "1",
                             8),
                 "UTF-16"});
  out.push_back({"UTF-32",
                 std::string("\xFF\xFE\0\0"
                             "a\0\0\0",
                             8),
                 "UTF-32"});
  out.push_back({"NUL byte", std::string("a: b\0c\n", 7), "NUL byte at line 1, column 5"});
  out.push_back({"invalid UTF-8", "a: \xC3\x28\n", "not valid UTF-8 at line 1, column 4"});
  out.push_back({"control character", "a: b\x07\n", "control character U+0007"});
  return out;
}

}  // namespace aop::test

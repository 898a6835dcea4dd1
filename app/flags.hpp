// Command-line flags that can also come from the environment.
//
// Every flag `--some-name` has the environment variable `AGENT_OPERATOR_SOME_NAME`;
// precedence is flag, then environment, then default. Accepted syntax: `--name=value`,
// `--name value`, `-name=value` (Go style), and for booleans `--name`, `--name=false`.
// The table is the single source of `--help`, of the README's flag reference (a test
// compares them) and of the deploy manifests' arguments.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "net/result.hpp"

namespace aop::app {

class FlagSet {
 public:
  using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

  explicit FlagSet(std::string program) : program_(std::move(program)) {}

  // Starts a titled group in --help output.
  void group(std::string title);
  void add_string(std::string name, std::string* target, std::string help);
  void add_bool(std::string name, bool* target, std::string help);
  void add_int(std::string name, std::int64_t* target, std::string help, std::int64_t min,
               std::int64_t max);
  void add_double(std::string name, double* target, std::string help, double min);
  // A Go duration ("300ms", "1m30s"; k8s/duration.hpp); negative values are errors.
  void add_duration(std::string name, std::chrono::nanoseconds* target, std::string help);
  // Comma-separated list; empty string = empty list.
  void add_list(std::string name, std::vector<std::string>* target, std::string help);
  // A string restricted to `choices`.
  void add_choice(std::string name, std::string* target, std::vector<std::string> choices,
                  std::string help);

  // Applies environment variables, then flags. Returns positional arguments. An
  // unknown flag, a missing value or a bad value is an error naming the flag (or the
  // variable) and what is expected.
  Result<std::vector<std::string>> parse(const std::vector<std::string>& args,
                                         const EnvLookup& env);

  // True if `--help`/`-h` was given (parse() stops at it).
  bool help_requested() const { return help_; }
  bool version_requested() const { return version_; }
  std::string usage() const;

  struct Info {
    std::string name;
    std::string env;
    std::string default_text;
    std::string help;
    std::string group;
  };
  std::vector<Info> describe() const;

  static std::string env_name(std::string_view flag);

 private:
  struct Flag {
    Info info;
    bool is_bool = false;
    std::function<Result<void>(std::string_view)> set;
  };
  void add(Flag flag);
  Flag* find(std::string_view name);

  std::string program_;
  std::string current_group_;
  std::vector<Flag> flags_;
  bool help_ = false;
  bool version_ = false;
};

// Reads the real process environment.
std::optional<std::string> process_env(const std::string& name);

}  // namespace aop::app

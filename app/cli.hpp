// Command-line entry: parses flags and environment, then runs or renders.
#pragma once

#include <string>
#include <vector>

#include "app/flags.hpp"

namespace aop::app {

// Returns the process exit status: 0 success, 1 failure at run time, 2 bad usage.
int main(const std::vector<std::string>& args, const FlagSet::EnvLookup& env);

}  // namespace aop::app

// agent-operator: the operator binary. See app/cli.cpp for the command line.
#include <string>
#include <vector>

#include "app/cli.hpp"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return aop::app::main(args, aop::app::process_env);
}

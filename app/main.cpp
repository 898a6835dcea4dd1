#include <cstdio>
int main() {
  std::puts("agent-operator " AOP_VERSION);
  return 0;
}

// What the binary was built from: the project version (AOP_VERSION, from CMake) and the
// git commit, baked in at build time by app/build_revision.cmake.
#pragma once

#include <string_view>

namespace aop::app {

// The full git commit hash of the source tree; "unknown" when built outside a git
// checkout without -DAOP_REVISION.
std::string_view build_revision();

}  // namespace aop::app

// main() of the integration test binaries (tests/k8s/cluster.hpp): with
// AOP_TEST_BACKEND=kube-apiserver and no kube-apiserver to run, the tests did not run:
// it says why and how to provide one, and exits with 77, which ctest reports as
// "Skipped" (SKIP_RETURN_CODE), not as passed. A binary named but unusable is an error.
// The shared control plane, if one was started, is stopped before exit.
#include <cstring>
#include <iostream>

#include <gtest/gtest.h>

#include "tests/k8s/cluster.hpp"
#include "tests/k8s/control_plane.hpp"

namespace {

constexpr int kSkipped = 77;

bool listing_only(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--gtest_list_tests") == 0) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  aop::testing::Backend backend{};
  try {
    backend = aop::testing::selected_backend();
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  if (backend == aop::testing::Backend::kube_apiserver && !listing_only(argc, argv)) {
    const auto lookup = aop::testing::find_control_plane_binaries();
    if (!lookup.binaries) {
      if (!lookup.requested) {
        std::cout << "SKIPPED: the real-API-server tests did not run: " << lookup.error << "\n";
        return kSkipped;
      }
      std::cerr << "the real-API-server tests cannot run: " << lookup.error << "\n";
      return 1;
    }
    std::cout << "backend: kube-apiserver " << lookup.binaries->kube_apiserver << " with etcd "
              << lookup.binaries->etcd << "\n";
  }
  const int status = RUN_ALL_TESTS();
  aop::testing::ControlPlane::stop_shared();
  return status;
}

// kubeconfig parsing (YAML, contexts, clusters, users, base64 PEM, the URL and PEM
// checks). File references resolve against a directory that does not exist, so
// relative paths read nothing. Oracle: an accepted configuration has a server URL the
// HTTP client accepts too.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/check.hpp"
#include "k8s/kubeconfig.hpp"
#include "net/http_client.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = aop::k8s::parse_kubeconfig(text, "", "/nonexistent-fuzz-dir");
  if (!config) return 0;
  AOP_FUZZ_CHECK(aop::net::HttpEndpoint::parse(config->server),
                 "accepted server \"" + config->server + "\"");
  return 0;
}

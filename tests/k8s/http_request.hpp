// One blocking HTTP request from a test fixture (own io_context, no retries): for
// fixtures' set-up and checks, not for the code under test.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "tests/k8s/cluster.hpp"

namespace aop::testing {

struct BlockingRequest {
  std::string url;     // https://127.0.0.1:port
  std::string ca_pem;  // "" for http://
  std::string token;   // bearer token, "" for none
  std::string user_agent = "cluster-fixture";
};

// Throws std::runtime_error on transport errors.
HttpReply blocking_request(const BlockingRequest& to, std::string_view method,
                           std::string_view path, std::string body = {},
                           std::string_view content_type = "application/json");

// The same over one kept-alive connection pool, for fixtures that make many requests
// (a TLS handshake per request costs more than the request). One request at a time;
// safe to use from several threads.
class BlockingSession {
 public:
  explicit BlockingSession(BlockingRequest to);
  ~BlockingSession();
  BlockingSession(const BlockingSession&) = delete;
  BlockingSession& operator=(const BlockingSession&) = delete;

  HttpReply request(std::string_view method, std::string_view path, std::string body = {},
                    std::string_view content_type = "application/json");

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace aop::testing

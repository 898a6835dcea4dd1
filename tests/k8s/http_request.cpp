#include "tests/k8s/http_request.hpp"

#include <mutex>
#include <optional>
#include <stdexcept>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include "net/http_client.hpp"

namespace aop::testing {

namespace {

HttpReply send(boost::asio::io_context& io, net::HttpClient& client, const BlockingRequest& to,
               std::string_view method, std::string_view path, std::string body,
               std::string_view content_type) {
  net::HttpRequest req;
  const auto m = net::parse_method(method);
  if (!m) throw std::runtime_error("request: unknown method " + std::string(method));
  req.method = *m;
  req.target = std::string(path);
  req.body = std::move(body);
  if (!req.body.empty()) req.headers.set("Content-Type", std::string(content_type));
  req.headers.set("Accept", "application/json");
  req.headers.set("User-Agent", to.user_agent);
  if (!to.token.empty()) req.headers.set("Authorization", "Bearer " + to.token);
  std::optional<boost::system::result<net::HttpResponse>> result;
  io.restart();
  boost::asio::co_spawn(
      io, client.request(std::move(req)),
      [&](const std::exception_ptr& e, boost::system::result<net::HttpResponse> r) {
        if (e) std::rethrow_exception(e);
        result = std::move(r);
      });
  io.run();
  if (!result || !*result) {
    throw std::runtime_error(std::string(method) + " " + to.url + std::string(path) +
                             " failed: " + (result ? result->error().message() : "no result"));
  }
  return HttpReply{(*result)->status, std::move((*result)->body)};
}

std::shared_ptr<net::HttpClient> make_client(boost::asio::io_context& io,
                                             const BlockingRequest& to) {
  net::HttpClientOptions options;
  options.tls.ca_pem = to.ca_pem;
  auto client = net::HttpClient::create(io.get_executor(), to.url, options);
  if (!client) throw std::runtime_error("request to " + to.url + ": " + client.error().message);
  return std::move(*client);
}

}  // namespace

HttpReply blocking_request(const BlockingRequest& to, std::string_view method,
                           std::string_view path, std::string body, std::string_view content_type) {
  boost::asio::io_context io;
  auto client = make_client(io, to);
  return send(io, *client, to, method, path, std::move(body), content_type);
}

struct BlockingSession::State {
  explicit State(BlockingRequest t) : to(std::move(t)), client(make_client(io, to)) {}
  BlockingRequest to;
  boost::asio::io_context io;
  std::shared_ptr<net::HttpClient> client;
  std::mutex mutex;  // one request at a time on `io`
};

BlockingSession::BlockingSession(BlockingRequest to)
    : state_(std::make_unique<State>(std::move(to))) {}

BlockingSession::~BlockingSession() = default;

HttpReply BlockingSession::request(std::string_view method, std::string_view path, std::string body,
                                   std::string_view content_type) {
  const std::lock_guard lock(state_->mutex);
  return send(state_->io, *state_->client, state_->to, method, path, std::move(body), content_type);
}

}  // namespace aop::testing

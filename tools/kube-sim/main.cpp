// kube-sim: a Kubernetes API server simulator. See tools/kube-sim/README.md.
#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <boost/asio.hpp>

#include "k8s/duration.hpp"
#include "tools/kube-sim/server.hpp"

namespace {

namespace asio = boost::asio;
using aop::sim::SimServerOptions;

constexpr const char* kUsage = R"(Usage: kube-sim [options]

A Kubernetes API server simulator for tests, demos and benchmarks.

Serving:
  --listen HOST:PORT          address to listen on (default 127.0.0.1:0; port 0 picks a free one)
  --tls                       serve HTTPS with a generated CA and certificate (SANs 127.0.0.1, localhost)
  --token TOKEN               require "Authorization: Bearer TOKEN" (admin endpoints exempt on loopback);
                              the token's user is "admin" in group system:masters
  --token-file PATH           more tokens, kube-apiserver's --token-auth-file CSV:
                              token,user,uid[,"group1,group2"]
  --rbac                      authorize requests with RBAC over the stored Roles, ClusterRoles and
                              bindings (ServiceAccount tokens come from the TokenRequest API)
  --shutdown-grace DUR        on SIGTERM, keep serving open watches this long (default 60s, as
                              kube-apiserver); new connections are refused at once
  --kubeconfig-out PATH       write a kubeconfig for clients (with the CA when --tls)
  --preload PATH              load YAML/JSON files or directories at start-up (repeatable)
  --watch-history N           events kept per resource for resuming watches (default 10000)
  --bookmark-interval DUR     period of BOOKMARK events on watches that allow them (default 60s)
  --watch-timeout DUR         default watch duration when timeoutSeconds is absent (default 30m)
  --gone-as-event             a watch from a too-old resourceVersion gets an ERROR 410 event in a
                              200 stream (like kube-apiserver's watch cache) instead of HTTP 410
  --seed N                    seed for uids, generated names and random faults

Fault injection (also settable at run time with POST /admin/faults):
  --fault-close-watch-after N           end every watch stream after N events
  --fault-close-watch-probability P     end a watch stream at random (probability P per event)
  --fault-http-500 F                    fail a fraction F of resource requests with 500
  --fault-http-503 F                    ... with 503 and Retry-After
  --fault-http-429 F                    ... with 429 and Retry-After
  --fault-retry-after SECONDS           Retry-After value for 429/503 (default 1)
  --fault-latency DUR                   delay every resource request
  --fault-gone-next-watch N             answer the next N watch requests with HTTP 410
  --fault-gone-in-stream-next-watch N   send ERROR 410 at the start of the next N watches
  --fault-conflict-next-update TARGET   409 on the next update of TARGET (resource/ns/name,
                                        resource/name, or *); repeatable
  --fault-stall-watch-after N           watch streams go silent after N events but stay open
  --fault-only-user-agent S             the request faults (500/503/429, latency) hit only
                                        requests whose User-Agent contains S
  --fault-only-resource R               ... only requests of resource R (plural, e.g. secrets,
                                        or grafanaagents/status); repeatable

Once ready, prints one line to stdout: "kube-sim listening on <URL>".
Admin endpoints: GET /admin/stats, POST /admin/faults, POST /admin/reset-stats, GET /admin/writes,
GET /admin/access.
)";

int fail(const std::string& msg) {
  std::cerr << "kube-sim: " << msg << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  SimServerOptions opts;
  std::vector<std::string> preload;
  std::string token_file;
  boost::json::object faults;
  std::vector<std::string> args(argv + 1, argv + argc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    std::string value;
    bool has_inline = false;
    if (auto eq = a.find('='); a.starts_with("--") && eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
      has_inline = true;
    }
    auto next = [&]() -> std::optional<std::string> {
      if (has_inline) return value;
      if (i + 1 >= args.size()) return std::nullopt;
      return args[++i];
    };
    auto need = [&](std::string& out) {
      auto v = next();
      if (!v) return false;
      out = *v;
      return true;
    };
    auto number = [&](const std::string& s, auto& out) {
      try {
        std::size_t pos = 0;
        if constexpr (std::is_floating_point_v<std::remove_reference_t<decltype(out)>>) {
          out = std::stod(s, &pos);
        } else {
          out = static_cast<std::remove_reference_t<decltype(out)>>(std::stoll(s, &pos));
        }
        return pos == s.size();
      } catch (const std::exception&) {
        return false;
      }
    };
    std::string v;
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (a == "--tls") {
      opts.tls = true;
    } else if (a == "--rbac") {
      opts.api.rbac = true;
    } else if (a == "--token-file") {
      if (!need(token_file)) return fail("--token-file needs a path");
    } else if (a == "--gone-as-event") {
      opts.api.gone_as_event = true;
    } else if (a == "--listen") {
      if (!need(v)) return fail("--listen needs HOST:PORT");
      const auto colon = v.rfind(':');
      if (colon == std::string::npos) return fail("--listen needs HOST:PORT, got " + v);
      opts.host = v.substr(0, colon);
      if (opts.host.size() >= 2 && opts.host.front() == '[')
        opts.host = opts.host.substr(1, opts.host.size() - 2);
      int port = 0;
      if (!number(v.substr(colon + 1), port) || port < 0 || port > 65535)
        return fail("invalid port in --listen " + v);
      opts.port = static_cast<std::uint16_t>(port);
    } else if (a == "--token") {
      if (!need(opts.api.token)) return fail("--token needs a value");
    } else if (a == "--kubeconfig-out") {
      if (!need(opts.kubeconfig_out)) return fail("--kubeconfig-out needs a path");
    } else if (a == "--preload") {
      if (!need(v)) return fail("--preload needs a path");
      preload.push_back(v);
    } else if (a == "--watch-history") {
      std::int64_t n = 0;
      if (!need(v) || !number(v, n) || n < 0)
        return fail("--watch-history needs a non-negative number");
      opts.api.watch_history = static_cast<std::size_t>(n);
    } else if (a == "--bookmark-interval" || a == "--watch-timeout" || a == "--fault-latency" ||
               a == "--shutdown-grace") {
      if (!need(v)) return fail(a + " needs a duration such as 500ms, 10s or 5m");
      auto parsed = aop::k8s::parse_go_duration(v);
      if (!parsed) return fail(a + ": " + parsed.error().message);
      const auto d = std::chrono::duration_cast<std::chrono::milliseconds>(*parsed);
      if (a == "--bookmark-interval") {
        if (d.count() <= 0) return fail("--bookmark-interval must be positive");
        opts.api.bookmark_interval = d;
      } else if (a == "--shutdown-grace") {
        if (d.count() < 0) return fail("--shutdown-grace must not be negative");
        opts.shutdown_grace = d;
      } else if (a == "--watch-timeout") {
        opts.api.default_watch_timeout = std::chrono::duration_cast<std::chrono::seconds>(d);
      } else {
        faults["latency_ms"] = d.count();
      }
    } else if (a == "--seed") {
      std::int64_t n = 0;
      if (!need(v) || !number(v, n)) return fail("--seed needs a number");
      opts.api.seed = static_cast<std::uint64_t>(n);
    } else if (a == "--fault-close-watch-after" || a == "--fault-gone-next-watch" ||
               a == "--fault-gone-in-stream-next-watch" || a == "--fault-stall-watch-after" ||
               a == "--fault-retry-after") {
      std::int64_t n = 0;
      if (!need(v) || !number(v, n) || n < 0) return fail(a + " needs a non-negative integer");
      std::string key = a.substr(8);  // after "--fault-"
      for (auto& c : key) c = c == '-' ? '_' : c;
      if (key == "retry_after") key = "retry_after_seconds";
      faults[key] = n;
    } else if (a == "--fault-close-watch-probability" || a == "--fault-http-500" ||
               a == "--fault-http-503" || a == "--fault-http-429") {
      double f = 0;
      if (!need(v) || !number(v, f) || f < 0 || f > 1)
        return fail(a + " needs a number between 0 and 1");
      std::string key = a.substr(8);
      for (auto& c : key) c = c == '-' ? '_' : c;
      faults[key] = f;
    } else if (a == "--fault-only-user-agent") {
      if (!need(v)) return fail(a + " needs a User-Agent substring");
      faults["only_user_agent"] = v;
    } else if (a == "--fault-conflict-next-update" || a == "--fault-only-resource") {
      if (!need(v)) return fail(a + " needs a target");
      auto& list = faults[a == "--fault-only-resource" ? "only_resources" : "conflict_next_update"];
      if (!list.is_array()) list = boost::json::array();
      list.as_array().emplace_back(v);
    } else {
      return fail("unknown option " + a + " (see --help)");
    }
  }

  asio::io_context io(1);
  auto server = aop::sim::SimServer::create(io.get_executor(), opts);
  if (!server) return fail(server.error().message);
  auto& sim = **server;
  if (!token_file.empty()) {
    if (auto r = sim.api().auth().load_token_file(token_file); !r) return fail(r.error().message);
  }
  if (!faults.empty()) {
    bool expire = false;
    if (auto r = sim.api().faults().apply(faults, expire); !r) return fail(r.error().message);
  }
  for (const auto& p : preload) {
    auto n = sim.api().preload(p);
    if (!n) return fail("--preload " + n.error().message);
    std::cerr << "kube-sim: preloaded " << *n << " objects from " << p << "\n";
  }
  sim.api().reset_stats();
  if (!opts.kubeconfig_out.empty()) {
    if (auto r = sim.write_kubeconfig(opts.kubeconfig_out); !r) return fail(r.error().message);
  }
  sim.start();

  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (ec) return;
    asio::co_spawn(io, sim.stop(), [&](std::exception_ptr) { io.stop(); });
  });
  std::signal(SIGPIPE, SIG_IGN);

  std::cout << "kube-sim listening on " << sim.url() << std::endl;
  std::fflush(stdout);
  io.run();
  return 0;
}

// The operator process: one multi-threaded io_context, the health and metrics servers,
// the API client and shared informers, the controller modules, leader election, and a
// graceful shutdown on SIGTERM/SIGINT.
//
// Life cycle:
//   start servers -> connect (config, discovery) -> caches start on every replica
//   -> (leader election) -> once caches are synced, modules start reconciling
//   SIGTERM: modules finish in-flight reconciles (--shutdown-timeout), the Lease is
//   released, caches and servers stop.
// Losing leadership stops writes at once (the write gate closes before anything else),
// then the process exits with status 1 so that it restarts as a clean standby, as
// controller-runtime's managers do.
#include "app/operator.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <random>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "app/build_info.hpp"
#include "app/health.hpp"
#include "app/metrics_server.hpp"
#include "app/modules.hpp"
#include "app/root_readiness.hpp"
#include "k8s/event_recorder.hpp"
#include "k8s/informer_factory.hpp"
#include "k8s/kubeconfig.hpp"
#include "k8s/leader_election.hpp"
#include "net/backoff.hpp"
#include "net/http_server.hpp"
#include "net/log.hpp"
#include "net/metrics.hpp"

namespace aop::app {

namespace asio = boost::asio;
namespace log = net::log;
using namespace std::chrono_literals;

namespace {

// Grace for in-flight HTTP requests (probes, scrapes) when the servers stop.
constexpr auto kServerStopGrace = 2s;
constexpr auto kHeartbeatPeriod = 1s;
// How often agent_operator_roots is recounted from the cache.
constexpr auto kRootCountPeriod = 5s;
// How often start-up checks whether the caches have synced.
constexpr auto kSyncPollPeriod = 100ms;

Result<std::unique_ptr<net::HttpServer>> serve(
    asio::any_io_executor ex, const std::string& what, const std::string& address,
    net::Router router, std::optional<net::TlsServerOptions> tls = std::nullopt) {
  auto bind = parse_bind_address(address);
  if (!bind) return make_error("--" + what + ": " + bind.error().message);
  net::HttpServerOptions o;
  o.host = bind->host;
  o.port = bind->port;
  o.tls = std::move(tls);
  auto server = net::HttpServer::create(ex, o, std::move(router));
  if (!server) return make_error("--" + what + " " + address + ": " + server.error().message);
  (*server)->start();
  return server;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "agent-operator";
  return buf;
}

// The pod's namespace: POD_NAMESPACE (downward API), else the kubeconfig's/in-cluster
// namespace, else "default".
std::string operator_namespace(const k8s::ClientConfig& config) {
  if (const char* ns = std::getenv("POD_NAMESPACE"); ns != nullptr && *ns != '\0') return ns;
  if (!config.namespace_.empty()) return config.namespace_;
  return "default";
}

// Everything the running process owns. Members are destroyed in reverse order, after
// the io_context threads have been joined.
struct Process {
  explicit Process(const Options& o)
      : options(o),
        threads(std::max(2u, std::thread::hardware_concurrency())),
        ioc(static_cast<int>(threads)),
        health(std::make_shared<HealthState>()) {}

  const Options& options;
  unsigned threads;
  asio::io_context ioc;
  std::shared_ptr<HealthState> health;
  std::unique_ptr<net::HttpServer> health_server, metrics_server;
  std::unique_ptr<k8s::ApiClient> client;
  std::unique_ptr<k8s::InformerFactory> informers;
  std::unique_ptr<k8s::EventRecorder> events;
  std::unique_ptr<k8s::LeaderElector> elector;
  std::vector<std::unique_ptr<runtime::ControllerModule>> modules;
  // Open while this replica may write: leader (or no election) and not shutting down.
  std::atomic<bool> may_write{false};
  std::atomic<bool> reconciling{false};
  std::atomic<bool> shutting_down{false};
  // Set once the API server answered discovery, every readiness check is registered and
  // the leader elector exists; until then /readyz must not pass on an empty list of checks.
  std::atomic<bool> connected{false};
  std::atomic<int> exit_status{0};

  asio::awaitable<void> start_when_synced();
  asio::awaitable<void> shutdown(int status);
  void stop_writes();
};

void Process::stop_writes() {
  may_write.store(false);
  for (auto& m : modules) m->stop_reconciling();
  reconciling.store(false);
}

asio::awaitable<void> Process::start_when_synced() {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  while (!informers->all_synced() && !shutting_down.load()) {
    timer.expires_after(kSyncPollPeriod);
    co_await timer.async_wait(asio::use_awaitable);
  }
  if (shutting_down.load() || reconciling.exchange(true)) co_return;
  log::info("caches synced; starting controllers");
  may_write.store(true);
  for (auto& m : modules) m->start_reconciling();
}

asio::awaitable<void> Process::shutdown(int status) {
  if (shutting_down.exchange(true)) co_return;
  exit_status.store(status);
  const auto deadline = std::chrono::duration_cast<net::Duration>(options.shutdown_timeout);
  for (auto& m : modules) {
    const bool finished = co_await m->stop(deadline);  // named: see the README's GCC 12 note
    if (!finished) {
      log::warn("in-flight reconciles did not finish before --shutdown-timeout",
                {{"controller", m->name()}});
    }
  }
  may_write.store(false);
  if (elector) co_await elector->stop();  // releases the Lease when held
  if (informers) informers->stop();
  if (health_server) co_await health_server->stop(kServerStopGrace);
  if (metrics_server) co_await metrics_server->stop(kServerStopGrace);
  ioc.stop();
}

std::chrono::milliseconds watch_stall_timeout(const Options& o) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(o.watch_bookmark_interval *
                                                               o.watch_stall_multiple);
}

// Connects to the API server: loads the configuration and learns the served resources,
// retrying discovery with backoff (an API server that is still starting is normal).
asio::awaitable<Result<void>> connect(Process& p) {
  auto selection = k8s::selection_from_environment();
  if (!p.options.kubeconfig.empty()) selection.kubeconfig_path = p.options.kubeconfig;
  if (!p.options.context.empty()) selection.context = p.options.context;
  auto config = k8s::load_client_config(selection);
  if (!config) co_return config.error();
  log::info("cluster configuration", {{"server", config->server}, {"source", config->source}});

  k8s::ApiClientOptions client_options;
  client_options.qps = p.options.kube_api_qps;
  client_options.burst = static_cast<int>(p.options.kube_api_burst);
  client_options.user_agent = "agent-operator/" AOP_VERSION;
  p.client = k8s::make_api_client(p.ioc.get_executor(), *config, client_options);

  net::Backoff backoff;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    auto discovered = co_await p.client->discover();
    if (discovered) break;
    const auto delay = backoff.next(net::steady_clock().now());
    log::warn(
        "API discovery failed; retrying",
        {{"error", discovered.error().describe()},
         {"retry_in_ms", std::chrono::duration_cast<std::chrono::milliseconds>(delay).count()}});
    timer.expires_after(delay);
    co_await timer.async_wait(asio::use_awaitable);
    if (p.shutting_down.load()) co_return make_error("shutting down");
  }

  const std::string own_namespace = operator_namespace(*config);
  p.informers =
      std::make_unique<k8s::InformerFactory>(p.ioc.get_executor(), *p.client, p.options.namespaces);
  p.informers->set_watch_stall_timeout(watch_stall_timeout(p.options));
  k8s::EventRecorderOptions event_options;
  event_options.instance = host_name();
  p.events = k8s::make_event_recorder(p.ioc.get_executor(), *p.client, event_options);

  runtime::ModuleContext ctx;
  ctx.executor = p.ioc.get_executor();
  ctx.client = p.client.get();
  ctx.informers = p.informers.get();
  ctx.events = p.events.get();
  ctx.may_write = [&p] { return p.may_write.load(std::memory_order_acquire); };
  ctx.operator_namespace = own_namespace;
  ctx.workers = static_cast<int>(p.options.workers);
  ctx.resync_period = std::chrono::duration_cast<net::Duration>(p.options.resync_period);
  ctx.progress_period = std::chrono::duration_cast<net::Duration>(p.options.progress_log_period);
  ctx.queue = queue_options(p.options);
  auto modules = make_modules(ctx, p.options);
  if (!modules) co_return modules.error();
  p.modules = std::move(*modules);

  p.health->add_readiness_check("informers", [&p] {
    const auto waiting = p.informers->unsynced();
    if (waiting.empty()) return std::string();
    std::string why = "waiting for caches:";
    for (const auto& k : waiting) why += " " + k;
    return why;
  });
  if (p.options.readiness_disconnected_threshold > std::chrono::nanoseconds::zero()) {
    const auto threshold =
        std::chrono::duration_cast<net::Duration>(p.options.readiness_disconnected_threshold);
    p.health->add_readiness_check("watches", [&p, threshold] {
      const auto cut_off = p.informers->disconnected(threshold);
      if (cut_off.empty()) return std::string();
      std::string why =
          "no working watch for more than " +
          std::to_string(std::chrono::duration_cast<std::chrono::seconds>(threshold).count()) +
          " s:";
      for (const auto& k : cut_off) why += " " + k;
      return why;
    });
  }
  for (const auto& m : p.modules) {
    runtime::ControllerModule* module = m.get();
    p.health->add_readiness_check(module->name(), [module] { return module->not_ready_reason(); });
  }
  p.informers->start();
  if (std::find(p.options.controllers.begin(), p.options.controllers.end(), "agent") !=
      p.options.controllers.end()) {
    asio::co_spawn(p.ioc,
                   count_root_readiness(*p.informers, p.options, kRootCountPeriod, p.shutting_down),
                   asio::detached);
  }

  if (p.options.leader_elect) {
    k8s::LeaderElectionConfig le;
    le.lease_namespace = p.options.leader_election_namespace.empty()
                             ? own_namespace
                             : p.options.leader_election_namespace;
    le.lease_name = p.options.leader_election_id;
    le.identity = host_name() + "_" + std::to_string(std::random_device{}());
    le.lease_duration = std::chrono::duration_cast<std::chrono::milliseconds>(
        p.options.leader_election_lease_duration);
    le.renew_deadline = std::chrono::duration_cast<std::chrono::milliseconds>(
        p.options.leader_election_renew_deadline);
    le.retry_period = std::chrono::duration_cast<std::chrono::milliseconds>(
        p.options.leader_election_retry_period);
    le.on_started_leading = [&p] { asio::co_spawn(p.ioc, p.start_when_synced(), asio::detached); };
    le.on_stopped_leading = [&p] {
      p.stop_writes();
      if (p.shutting_down.load()) return;
      log::error("leader election lost; stopping so that a fresh standby takes over");
      asio::co_spawn(p.ioc, p.shutdown(1), asio::detached);
    };
    le.on_new_leader = [](const std::string& leader) {
      log::info("current leader", {{"identity", leader}});
    };
    log::info("waiting for leadership",
              {{"lease", le.lease_namespace + "/" + le.lease_name}, {"identity", le.identity}});
    p.elector = k8s::make_leader_elector(p.ioc.get_executor(), *p.client, std::move(le));
    asio::co_spawn(p.ioc, p.elector->run(), asio::detached);
  } else {
    asio::co_spawn(p.ioc, p.start_when_synced(), asio::detached);
  }
  p.connected.store(true);
  co_return Result<void>{};
}

}  // namespace

int run_operator(const Options& options) {
  Process p(options);

  if (!options.health_probe_bind_address.empty()) {
    auto s = serve(p.ioc.get_executor(), "health-probe-bind-address",
                   options.health_probe_bind_address, health_routes(p.health));
    if (!s) {
      log::error("cannot serve health probes", {{"error", s.error().message}});
      return 1;
    }
    p.health_server = std::move(*s);
    log::info("serving health probes",
              {{"port", unsigned{p.health_server->port()}}, {"paths", "/healthz /readyz"}});
  }
  if (!options.metrics_bind_address.empty()) {
    std::optional<net::TlsServerOptions> tls;
    if (options.metrics_secure) {
      auto t = metrics_tls(options, host_name());
      if (!t) {
        log::error("cannot serve metrics over HTTPS", {{"error", t.error().message}});
        return 1;
      }
      tls = std::move(*t);
    }
    auto s = serve(p.ioc.get_executor(), "metrics-bind-address", options.metrics_bind_address,
                   metrics_routes(metrics_gate(options)), std::move(tls));
    if (!s) {
      log::error("cannot serve metrics", {{"error", s.error().message}});
      return 1;
    }
    p.metrics_server = std::move(*s);
    log::info("serving metrics", {{"port", unsigned{p.metrics_server->port()}},
                                  {"path", "/metrics"},
                                  {"scheme", options.metrics_secure ? "https" : "http"},
                                  {"auth", options.metrics_auth}});
  }
  net::metrics::registry()
      .gauge("agent_operator_build_info",
             "Build information (version, git commit); the value is always 1",
             {"version", "revision"})
      .with({AOP_VERSION, build_revision()})
      .set(1);
  net::metrics::register_process_metrics(net::metrics::registry());

  asio::co_spawn(p.ioc, run_heartbeat(p.health, kHeartbeatPeriod), asio::detached);
  p.health->add_readiness_check("api-server", [&p] {
    return p.connected.load() ? std::string() : std::string("connecting to the API server");
  });

  asio::signal_set signals(p.ioc, SIGINT, SIGTERM);
  signals.async_wait([&p](const boost::system::error_code& ec, int signo) {
    if (ec) return;
    log::info("shutting down", {{"signal", signo == SIGTERM ? "SIGTERM" : "SIGINT"}});
    asio::co_spawn(p.ioc, p.shutdown(0), asio::detached);
  });

  asio::co_spawn(
      p.ioc,
      [&p]() -> asio::awaitable<void> {
        Result<void> connected;
        try {
          connected = co_await connect(p);
        } catch (const std::exception& e) {
          // Start-up failures that surface as exceptions (an API client that cannot be
          // built from the configuration) end the process like any other: a detached
          // coroutine would otherwise swallow them and leave it running, never ready.
          connected = make_error(e.what());
        }
        if (!connected && !p.shutting_down.load()) {
          log::error("cannot start", {{"error", connected.error().message}});
          co_await p.shutdown(1);
        }
      },
      asio::detached);

  log::info("agent-operator started", {{"version", AOP_VERSION}, {"threads", p.threads}});
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < p.threads; ++i) pool.emplace_back([&p] { p.ioc.run(); });
  p.ioc.run();
  for (auto& t : pool) t.join();
  log::info("agent-operator stopped", {{"status", p.exit_status.load()}});
  return p.exit_status.load();
}

}  // namespace aop::app

// scale_client: the operator-side programs of the scale benchmark (bench/scale/run.sh).
//
//   scale_client sync --kubeconfig K [--metadata-secrets] [--threads N] [--page-size N]
//       The operator's k8s/ layer on its own: informers (list+watch into the compact
//       cache) for ServiceMonitors, PodMonitors, Probes and Secrets, full objects or
//       metadata-only Secrets. Prints "synced <objects>" once every cache has synced,
//       then "events <n>" (watch events handled since) every 50 ms while it changes,
//       until SIGTERM. The driver times the lines and reads RSS and CPU from /proc.
//   scale_client floor FILE...
//       Boost.JSON alone: parses each file (a saved LIST page) once from memory and
//       prints {"parse_seconds", "bytes"}. The cost of just reading the input.
//   scale_client churn --kubeconfig K --rate R --seconds S [--exclude NS/NAME]
//                      [--marker NS/NAME --marker-rate M --secret NS/NAME --drain S]
//       Applies R merge-patches per second for S seconds to the ServiceMonitors (each
//       sets a relabeling's replacement to a sequence number, so it changes the rendered
//       config), open loop with bounded concurrency, and prints one JSON line with the
//       rate the server absorbed. With --marker: also patches that monitor M times per
//       second with "scale-marker-<run>-<seq>" and watches the config Secret, recording for
//       each marker the time until the Secret's agent.yml (gzip or not) shows it or a
//       later one: the operator's change-to-Secret latency.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <malloc.h>
#include <sys/resource.h>
#include <zlib.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include "k8s/api_client.hpp"
#include "k8s/base64.hpp"
#include "k8s/informer.hpp"
#include "k8s/kubeconfig.hpp"
#include "net/log.hpp"

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
namespace k8s = aop::k8s;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

k8s::GroupVersionKind service_monitor() {
  return {"monitoring.coreos.com", "v1", "ServiceMonitor"};
}
k8s::GroupVersionKind pod_monitor() {
  return {"monitoring.coreos.com", "v1", "PodMonitor"};
}
k8s::GroupVersionKind probe() {
  return {"monitoring.coreos.com", "v1", "Probe"};
}
k8s::GroupVersionKind secret_kind() {
  return {"", "v1", "Secret"};
}

[[noreturn]] void die(const std::string& msg) {
  std::cerr << "scale_client: " << msg << std::endl;
  std::_Exit(2);  // from any thread, without running destructors under running coroutines
}

// "--name value" options after the subcommand; flags without a value map to "1".
struct Args {
  std::map<std::string, std::string> opts;
  std::vector<std::string> positional;

  Args(int argc, char** argv, std::initializer_list<std::string_view> flags) {
    for (int i = 2; i < argc; ++i) {
      const std::string_view a = argv[i];
      if (!a.starts_with("--")) {
        positional.emplace_back(a);
        continue;
      }
      const std::string_view name = a.substr(2);
      if (std::find(flags.begin(), flags.end(), name) != flags.end()) {
        opts.insert_or_assign(std::string(name), std::string(1, '1'));
      } else if (i + 1 < argc) {
        opts.insert_or_assign(std::string(name), std::string(argv[++i]));
      } else {
        die("--" + std::string(name) + " needs a value");
      }
    }
  }
  std::string get(const std::string& k, const std::string& def = "") const {
    auto it = opts.find(k);
    return it == opts.end() ? def : it->second;
  }
  std::string need(const std::string& k) const {
    auto it = opts.find(k);
    if (it == opts.end()) die("--" + k + " is required");
    return it->second;
  }
  double num(const std::string& k, double def) const {
    auto it = opts.find(k);
    return it == opts.end() ? def : std::stod(it->second);
  }
};

k8s::ClientConfig load_config(const std::string& path) {
  auto sel = k8s::selection_from_environment();
  sel.kubeconfig_path = path;
  sel.in_cluster = false;
  auto cfg = k8s::load_client_config(sel);
  if (!cfg) die("kubeconfig: " + cfg.error().message);
  return *cfg;
}

k8s::ApiClientOptions client_options(std::string user_agent, std::size_t connections = 32) {
  k8s::ApiClientOptions o;
  o.user_agent = std::move(user_agent);
  o.qps = 0;  // unlimited: the benchmark measures the client, not its rate limiter
  o.request_timeout = 10min;
  o.max_connections = connections;
  return o;
}

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const auto idx = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, idx == 0 ? 0 : idx - 1)];
}

// Runs the io_context on `threads` threads (the operator runs max(2, cores)) until stopped.
void run_threads(asio::io_context& io, unsigned threads) {
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back([&io] { io.run(); });
  io.run();
  for (auto& t : pool) t.join();
}

// ---- sync ------------------------------------------------------------------------------

// --memory-report: when each cache synced and where the synced process's memory is, on
// stderr (for profiling; the driver does not use it).
void report_memory(const std::vector<std::unique_ptr<k8s::Informer>>& informers) {
  std::size_t objects = 0, object_bytes = 0, encoded = 0;
  for (const auto& i : informers) {
    for (const auto& o : i->store().list()) {
      ++objects;
      object_bytes += o->memory_bytes();
      encoded += o->encoded_bytes();
    }
  }
  const struct mallinfo2 mi = mallinfo2();
  std::fprintf(stderr,
               "memory: %zu objects, %.1f MB in objects (%.1f MB encoded), heap in use %.1f MB, "
               "heap free %.1f MB, mmapped %.1f MB\n",
               objects, static_cast<double>(object_bytes) / 1e6, static_cast<double>(encoded) / 1e6,
               static_cast<double>(mi.uordblks) / 1e6, static_cast<double>(mi.fordblks) / 1e6,
               static_cast<double>(mi.hblkhd) / 1e6);
}

int run_sync(const Args& args) {
  const auto started = Clock::now();
  const bool memory_report = args.get("memory-report") == "1";
  const auto config = load_config(args.need("kubeconfig"));
  const bool metadata_secrets = args.get("metadata-secrets") == "1";
  const unsigned threads =
      static_cast<unsigned>(args.num("threads", std::max(2u, std::thread::hardware_concurrency())));
  asio::io_context io(static_cast<int>(threads));
  auto client =
      k8s::make_api_client(io.get_executor(), config,
                           client_options(metadata_secrets ? "scale-sync-metadata" : "scale-sync"));
  std::vector<std::unique_ptr<k8s::Informer>> informers;
  std::atomic<bool> synced{false};
  std::atomic<std::uint64_t> events{0};

  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (ec) return;
    for (auto& i : informers) i->stop();
    io.stop();
  });

  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        if (auto r = co_await client->discover(); !r) die("discovery: " + r.error().describe());
        for (const auto& gvk : {service_monitor(), pod_monitor(), probe(), secret_kind()}) {
          k8s::InformerOptions o;
          o.gvk = gvk;
          if (gvk == secret_kind()) o.transform.metadata_only = metadata_secrets;
          o.page_size = static_cast<std::size_t>(args.num("page-size", 500));
          auto inf = k8s::make_informer(io.get_executor(), *client, std::move(o));
          k8s::EventHandler h;
          h.on_add = [&](const k8s::ObjectPtr&) {
            if (synced.load(std::memory_order_relaxed)) events.fetch_add(1);
          };
          h.on_update = [&](const k8s::ObjectPtr&, const k8s::ObjectPtr&) { events.fetch_add(1); };
          h.on_delete = [&](const k8s::ObjectPtr&) { events.fetch_add(1); };
          inf->add_handler(std::move(h));
          informers.push_back(std::move(inf));
        }
        for (auto& i : informers) i->start();
        asio::steady_timer timer(co_await asio::this_coro::executor);
        std::vector<double> synced_ms(informers.size(), -1);
        for (;;) {
          bool all = true;
          for (std::size_t i = 0; i < informers.size(); ++i) {
            const bool done = informers[i]->has_synced();
            if (done && synced_ms[i] < 0) synced_ms[i] = ms_between(started, Clock::now());
            all = all && done;
          }
          if (all) break;
          timer.expires_after(2ms);  // poll: has_synced has no notification
          co_await timer.async_wait(asio::use_awaitable);
        }
        if (memory_report) {
          for (std::size_t i = 0; i < informers.size(); ++i) {
            std::fprintf(stderr, "synced %s after %.0f ms\n",
                         informers[i]->options().gvk.kind.c_str(), synced_ms[i]);
          }
        }
        std::size_t objects = 0;
        for (auto& i : informers) objects += i->store().size();
        events.store(0);
        synced.store(true);
        std::printf("synced %zu\n", objects);
        std::fflush(stdout);
        if (memory_report) report_memory(informers);
        std::uint64_t last = 0;
        for (;;) {
          timer.expires_after(50ms);
          co_await timer.async_wait(asio::use_awaitable);
          const auto n = events.load();
          if (n != last) {
            std::printf("events %llu\n", static_cast<unsigned long long>(n));
            std::fflush(stdout);
            last = n;
          }
        }
      },
      asio::detached);
  run_threads(io, threads);
  return 0;
}

// ---- floor -----------------------------------------------------------------------------

int run_floor(const Args& args) {
  if (args.positional.empty()) die("floor needs the files of saved LIST pages");
  std::vector<std::string> pages;
  std::size_t bytes = 0;
  for (const auto& f : args.positional) {
    std::ifstream in(f, std::ios::binary);
    if (!in) die("cannot read " + f);
    std::stringstream ss;
    ss << in.rdbuf();
    pages.push_back(ss.str());
    bytes += pages.back().size();
  }
  const double cpu0 = cpu_seconds();
  const auto t0 = Clock::now();
  std::size_t items = 0;
  for (const auto& p : pages) {
    boost::system::error_code ec;
    json::value v = json::parse(p, ec);
    if (ec) die("invalid JSON in a saved page: " + ec.message());
    items += v.at("items").as_array().size();
  }
  const double wall = ms_between(t0, Clock::now()) / 1000;
  json::object out{{"parse_seconds", wall},
                   {"parse_cpu_seconds", cpu_seconds() - cpu0},
                   {"bytes", bytes},
                   {"items", items}};
  std::cout << json::serialize(out) << std::endl;
  return 0;
}

// ---- churn -----------------------------------------------------------------------------

std::optional<k8s::ObjectKey> parse_key(const std::string& s) {
  const auto slash = s.find('/');
  if (slash == std::string::npos) return std::nullopt;
  return k8s::ObjectKey{s.substr(0, slash), s.substr(slash + 1)};
}

// spec.endpoints with endpoints[0].relabelings[0].replacement = value.
json::value endpoints_patch(const json::array& endpoints, const std::string& value) {
  json::array eps = endpoints;
  if (!eps.empty() && eps[0].is_object()) {
    auto& ep = eps[0].as_object();
    auto* rl = ep.if_contains("relabelings");
    if (rl != nullptr && rl->is_array() && !rl->as_array().empty() &&
        rl->as_array()[0].is_object()) {
      rl->as_array()[0].as_object()["replacement"] = value;
    } else {
      ep["relabelings"] = json::array{
          json::object{{"targetLabel", "churn"}, {"replacement", value}, {"action", "replace"}}};
    }
  }
  return json::object{{"spec", json::object{{"endpoints", std::move(eps)}}}};
}

std::optional<std::string> gunzip(std::string_view in) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) return std::nullopt;
  std::string out;
  char buf[1 << 16];
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&zs);
      return std::nullopt;
    }
    out.append(buf, sizeof buf - zs.avail_out);
  }
  inflateEnd(&zs);
  return out;
}

// The largest "<tag><n>" in the Secret's agent.yml, or -1. The tag carries a per-run
// nonce, so markers left in the config by an earlier run are not taken for this run's.
long long marker_in_secret(const json::value& secret, std::string_view tag) {
  const auto* data = secret.is_object() ? secret.as_object().if_contains("data") : nullptr;
  if (data == nullptr || !data->is_object()) return -1;
  const auto* yml = data->as_object().if_contains("agent.yml");
  if (yml == nullptr || !yml->is_string()) return -1;
  const auto raw = k8s::base64_decode(yml->as_string());
  if (!raw) return -1;
  std::optional<std::string> inflated;
  if (raw->starts_with("\x1f\x8b")) {  // gzip magic: configs above 100 KiB
    inflated = gunzip(*raw);
    if (!inflated) return -1;
  }
  const std::string_view text = inflated ? *inflated : *raw;
  long long best = -1;
  for (auto pos = text.find(tag); pos != std::string::npos; pos = text.find(tag, pos + 1)) {
    long long n = 0;
    std::size_t i = pos + tag.size();
    bool digits = false;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      n = n * 10 + (text[i++] - '0');
      digits = true;
    }
    if (digits) best = std::max(best, n);
  }
  return best;
}

struct Marker {
  Clock::time_point sent;
  std::optional<double> latency_ms;
};

int run_churn(const Args& args) {
  const auto config = load_config(args.need("kubeconfig"));
  const double rate = args.num("rate", 2000);  // 0: markers only
  const double seconds = args.num("seconds", 60);
  const double marker_rate = args.num("marker-rate", 10);
  const double drain = args.num("drain", 10);
  const auto exclude = parse_key(args.get("exclude"));
  const auto marker = parse_key(args.get("marker"));
  const auto secret = parse_key(args.get("secret"));
  if (marker && !secret) die("--marker needs --secret NS/NAME (the config Secret to watch)");
  const std::string marker_tag =
      "scale-marker-" +
      std::to_string(std::chrono::system_clock::now().time_since_epoch().count() % 1000000007) +
      "-";
  constexpr std::size_t kWorkers = 48;  // requests in flight at most

  asio::io_context io(1);
  auto client =
      k8s::make_api_client(io.get_executor(), config, client_options("scale-churn", kWorkers + 4));
  struct Target {
    k8s::ObjectKey key;
    json::array endpoints;
  };
  std::vector<Target> targets;
  json::array marker_endpoints;
  std::vector<double> patch_ms;
  std::uint64_t applied = 0, errors = 0;
  std::string first_error;
  std::mutex marker_mutex;  // owns markers (one io thread; kept for clarity)
  std::vector<Marker> markers;
  Clock::time_point t0, t_end;
  long long seen_marker = -1;

  auto resolve = [&](long long seen, Clock::time_point at) {
    const std::lock_guard lock(marker_mutex);
    for (long long s = 0; s <= seen && s < static_cast<long long>(markers.size()); ++s) {
      auto& m = markers[static_cast<std::size_t>(s)];
      if (!m.latency_ms) m.latency_ms = ms_between(m.sent, at);
    }
  };

  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        if (auto r = co_await client->discover(); !r) die("discovery: " + r.error().describe());
        k8s::ListOptions lo;
        lo.limit = 500;
        auto list = co_await client->list(service_monitor(), "", lo);
        if (!list) die("listing ServiceMonitors: " + list.error().describe());
        for (auto& item : list->items) {
          auto& o = item.as_object();
          k8s::ObjectKey key{json::value_to<std::string>(o.at("metadata").at("namespace")),
                             json::value_to<std::string>(o.at("metadata").at("name"))};
          const auto* eps = o.at("spec").as_object().if_contains("endpoints");
          json::array endpoints =
              eps != nullptr && eps->is_array() ? eps->as_array() : json::array{};
          if (marker && key.ns == marker->ns && key.name == marker->name) {
            marker_endpoints = endpoints;
            continue;
          }
          if (exclude && key.ns == exclude->ns && key.name == exclude->name) continue;
          targets.push_back({std::move(key), std::move(endpoints)});
        }
        if (targets.empty()) die("no ServiceMonitors to churn");
        if (marker && marker_endpoints.empty()) die("marker ServiceMonitor not found");
        const auto total = static_cast<std::uint64_t>(rate * seconds);
        auto ex = co_await asio::this_coro::executor;

        // The marker Secret watch: resolves markers as the config shows them.
        std::unique_ptr<k8s::WatchStream> watch;
        if (marker) {
          k8s::WatchOptions wo;
          wo.field_selector = "metadata.name=" + secret->name;
          wo.timeout = std::chrono::seconds(3600);
          auto w = co_await client->watch(secret_kind(), secret->ns, wo);
          if (!w) die("watching the config Secret: " + w.error().describe());
          watch = std::move(*w);
          asio::co_spawn(
              ex,
              [&]() -> asio::awaitable<void> {
                for (;;) {
                  auto ev = co_await watch->next();
                  if (!ev) co_return;
                  if (ev->type != k8s::WatchEvent::Type::added &&
                      ev->type != k8s::WatchEvent::Type::modified)
                    continue;
                  const auto now = Clock::now();
                  const long long m = marker_in_secret(ev->object, marker_tag);
                  if (m > seen_marker) {
                    seen_marker = m;
                    resolve(m, now);
                  }
                }
              },
              asio::detached);
        }

        t0 = Clock::now();
        std::printf("started\n");  // the driver times the churn from here
        std::fflush(stdout);
        // The patch workers and the marker loop; the churn ends when all have finished.
        std::atomic<std::size_t> running{kWorkers + (marker ? 1 : 0)};
        const auto t_stop = t0 + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(seconds));
        asio::steady_timer all_done(ex, Clock::time_point::max());
        for (std::size_t w = 0; w < kWorkers; ++w) {
          asio::co_spawn(
              ex,
              [&, w]() -> asio::awaitable<void> {
                asio::steady_timer timer(co_await asio::this_coro::executor);
                for (std::uint64_t seq = w; seq < total; seq += kWorkers) {
                  const auto due =
                      t0 + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(static_cast<double>(seq) / rate));
                  if (due > Clock::now()) {
                    timer.expires_at(due);
                    co_await timer.async_wait(asio::use_awaitable);
                  }
                  const auto& t = targets[seq % targets.size()];
                  const auto start = Clock::now();
                  auto r = co_await client->patch(
                      service_monitor(), t.key, k8s::PatchType::merge,
                      endpoints_patch(t.endpoints, "churn-" + std::to_string(seq)));
                  patch_ms.push_back(ms_between(start, Clock::now()));
                  if (r) {
                    ++applied;
                  } else {
                    if (errors++ == 0) first_error = r.error().describe();
                  }
                }
                if (--running == 0) all_done.cancel();
              },
              asio::detached);
        }
        if (marker) {
          asio::co_spawn(
              ex,
              [&]() -> asio::awaitable<void> {
                asio::steady_timer timer(co_await asio::this_coro::executor);
                const auto period = std::chrono::duration_cast<Clock::duration>(
                    std::chrono::duration<double>(1.0 / marker_rate));
                auto due = t0;
                while (Clock::now() < t_stop) {
                  std::size_t seq = 0;
                  {
                    const std::lock_guard lock(marker_mutex);
                    seq = markers.size();
                    markers.push_back({Clock::now(), std::nullopt});
                  }
                  auto r = co_await client->patch(
                      service_monitor(), *marker, k8s::PatchType::merge,
                      endpoints_patch(marker_endpoints, marker_tag + std::to_string(seq)));
                  if (!r) {
                    if (errors++ == 0) first_error = r.error().describe();
                  }
                  due += period;
                  timer.expires_at(std::max(due, Clock::now()));
                  co_await timer.async_wait(asio::use_awaitable);
                }
                if (--running == 0) all_done.cancel();
              },
              asio::detached);
        }
        boost::system::error_code ec;
        co_await all_done.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        t_end = Clock::now();
        // Let the last markers through the operator before giving up on them.
        if (marker) {
          asio::steady_timer timer(ex);
          const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                   std::chrono::duration<double>(drain));
          for (;;) {
            bool pending = false;
            {
              const std::lock_guard lock(marker_mutex);
              for (const auto& m : markers) pending = pending || !m.latency_ms;
            }
            if (!pending || Clock::now() >= deadline) break;
            timer.expires_after(20ms);
            co_await timer.async_wait(asio::use_awaitable);
          }
          watch->close();
        }
        io.stop();
      },
      asio::detached);
  io.run();

  const double secs = ms_between(t0, t_end) / 1000;
  json::object out{{"applied", applied},
                   {"errors", errors},
                   {"seconds", secs},
                   {"rate", secs > 0 ? static_cast<double>(applied) / secs : 0.0},
                   {"target_rate", rate},
                   {"patch_p50_ms", percentile(patch_ms, 50)},
                   {"patch_p99_ms", percentile(patch_ms, 99)},
                   {"cpu_seconds", cpu_seconds()}};
  if (!first_error.empty()) out["first_error"] = first_error;
  if (marker) {
    std::vector<double> lat;
    std::size_t unresolved = 0;
    double worst_pending = 0;
    const auto now = Clock::now();
    for (const auto& m : markers) {
      if (m.latency_ms) {
        lat.push_back(*m.latency_ms);
      } else {
        ++unresolved;
        worst_pending = std::max(worst_pending, ms_between(m.sent, now));
      }
    }
    // An unresolved marker counts with the time it waited so far (a lower bound).
    std::vector<double> all = lat;
    for (const auto& m : markers) {
      if (!m.latency_ms) all.push_back(ms_between(m.sent, now));
    }
    out["markers"] =
        json::object{{"sent", markers.size()},
                     {"resolved", lat.size()},
                     {"unresolved", unresolved},
                     {"p50_ms", percentile(all, 50)},
                     {"p99_ms", percentile(all, 99)},
                     {"max_ms", all.empty() ? 0.0 : *std::max_element(all.begin(), all.end())},
                     {"last_seen", seen_marker}};
  }
  // NaN (no samples) is not JSON.
  for (auto& [k, v] : out) {
    if (v.is_double() && std::isnan(v.as_double())) v = nullptr;
    if (v.is_object()) {
      for (auto& [k2, v2] : v.as_object()) {
        if (v2.is_double() && std::isnan(v2.as_double())) v2 = nullptr;
      }
    }
  }
  std::cout << json::serialize(out) << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  aop::net::log::set_output(stderr);
  aop::net::log::configure(aop::net::log::Level::warn, aop::net::log::Format::text);
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "sync") return run_sync(Args(argc, argv, {"metadata-secrets", "memory-report"}));
  if (cmd == "floor") return run_floor(Args(argc, argv, {}));
  if (cmd == "churn") return run_churn(Args(argc, argv, {}));
  std::cerr << "usage: scale_client sync|floor|churn ... (see bench/scale/scale_client.cpp)\n";
  return 2;
}

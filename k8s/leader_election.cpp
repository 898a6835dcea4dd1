// Lease-based leader election: the pure record/observer logic (k8s/lease.hpp) and the
// coroutine that acquires, renews and releases.
//
// Timing, with the defaults (lease 15 s, renew deadline 10 s, retry period 2 s):
// - a candidate tries to take the lease every retry period; it succeeds once the lease
//   is free or its holder has not renewed for the lease duration as observed here;
// - the leader renews every retry period and steps down when it has not renewed for
//   the renew deadline, even while a renewal is still in flight (a watchdog timer, not
//   the request's completion, decides). renew deadline < lease duration leaves a
//   margin in which the old leader has stopped before anyone else may start.
#include "k8s/leader_election.hpp"

#include <atomic>
#include <ctime>
#include <random>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include "k8s/lease.hpp"
#include "net/log.hpp"
#include "net/metrics.hpp"

namespace aop::k8s {
namespace json = boost::json;
namespace asio = boost::asio;

namespace {

const GroupVersionKind& lease_kind() {
  static const GroupVersionKind kind{"coordination.k8s.io", "v1", "Lease"};
  return kind;
}
// A release writes a lease duration of one second, so a standby takes over at its next
// retry instead of waiting for the full duration (client-go does the same).
constexpr int kReleasedLeaseSeconds = 1;
// A release that meets a conflict (our own renewal landing first) is retried this often.
constexpr int kReleaseAttempts = 3;

std::string_view str(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string_view(v->get_string()) : std::string_view{};
}

int integer(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_number() ? static_cast<int>(v->to_number<std::int64_t>()) : 0;
}

}  // namespace

// --- pure parts --------------------------------------------------------------------

std::string micro_time(std::chrono::system_clock::time_point t) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch());
  const std::time_t secs = static_cast<std::time_t>(us.count() / 1000000);
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(us.count() % 1000000));
  return buf;
}

LeaseRecord lease_record_from(const json::value& lease) {
  LeaseRecord r;
  const auto* o = lease.if_object();
  const auto* spec = o != nullptr ? o->if_contains("spec") : nullptr;
  if (spec == nullptr || !spec->is_object()) return r;
  const auto& s = spec->get_object();
  r.holder = str(s, "holderIdentity");
  r.lease_duration_seconds = integer(s, "leaseDurationSeconds");
  r.acquire_time = str(s, "acquireTime");
  r.renew_time = str(s, "renewTime");
  r.lease_transitions = integer(s, "leaseTransitions");
  return r;
}

void set_lease_record(json::value& lease, const LeaseRecord& r) {
  auto& spec = lease.as_object()["spec"];
  if (!spec.is_object()) spec = json::object();
  auto& s = spec.get_object();
  s["holderIdentity"] = r.holder;
  s["leaseDurationSeconds"] = r.lease_duration_seconds;
  s["acquireTime"] = r.acquire_time;
  s["renewTime"] = r.renew_time;
  s["leaseTransitions"] = r.lease_transitions;
}

json::value make_lease(std::string_view ns, std::string_view name, const LeaseRecord& record) {
  json::value lease = json::object{{"apiVersion", "coordination.k8s.io/v1"},
                                   {"kind", "Lease"},
                                   {"metadata", {{"namespace", ns}, {"name", name}}}};
  set_lease_record(lease, record);
  return lease;
}

bool LeaseObserver::observe(const LeaseRecord& record, net::TimePoint now) {
  if (record_ && *record_ == record) return false;
  record_ = record;
  observed_at_ = now;
  return true;
}

bool LeaseObserver::can_acquire(std::string_view identity, net::TimePoint now,
                                net::Duration fallback_duration) const {
  if (!record_ || record_->holder.empty() || record_->holder == identity) return true;
  const net::Duration duration =
      record_->lease_duration_seconds > 0
          ? net::Duration(std::chrono::seconds(record_->lease_duration_seconds))
          : fallback_duration;
  return now >= observed_at_ + duration;
}

LeaseRecord LeaseObserver::next_record(std::string_view identity,
                                       std::chrono::seconds lease_duration,
                                       std::string_view now_micro_time) const {
  LeaseRecord r;
  r.holder = std::string(identity);
  r.lease_duration_seconds = static_cast<int>(lease_duration.count());
  r.renew_time = std::string(now_micro_time);
  const bool ours = record_ && record_->holder == identity;
  r.acquire_time =
      ours && !record_->acquire_time.empty() ? record_->acquire_time : std::string(now_micro_time);
  r.lease_transitions = record_ ? record_->lease_transitions + (ours ? 0 : 1) : 0;
  return r;
}

// --- the elector -------------------------------------------------------------------

namespace {

struct ElectionMetrics {
  net::metrics::Family<net::metrics::Gauge>& master;
  static ElectionMetrics& instance() {
    static ElectionMetrics m{net::metrics::registry().gauge(
        "leader_election_master_status",
        "1 while this process is the leader of the named lease, 0 otherwise.", {"name"})};
    return m;
  }
};

struct ElectionState {
  ElectionState(const asio::any_io_executor& executor, ApiClient& c, LeaderElectionConfig cfg)
      : client(c),
        config(std::move(cfg)),
        strand(asio::make_strand(executor)),
        timer(strand),
        rng(std::random_device{}()),
        gauge(ElectionMetrics::instance().master.with({config.lease_name})) {}

  ApiClient& client;
  const LeaderElectionConfig config;
  asio::strand<asio::any_io_executor> strand;
  asio::steady_timer timer;          // strand: the retry-period sleeps
  LeaseObserver observer;            // strand
  std::optional<json::value> lease;  // strand: the last lease read or written (for its RV)
  std::string reported_leader;       // strand: last value given to on_new_leader
  std::mt19937_64 rng;               // strand
  std::atomic<bool> leader{false};
  std::atomic<bool> stopped{false};
  net::metrics::Gauge& gauge;
};

// A renewal's outcome, shared between the attempt and the watchdog waiting for it.
struct Attempt {
  explicit Attempt(asio::strand<asio::any_io_executor>& strand) : done(strand) {}
  std::optional<bool> succeeded;
  asio::steady_timer done;  // cancelled when the attempt finishes
};

net::Duration jittered(ElectionState& s, net::Duration d) {
  // A little below the period, so retries of several candidates spread out without
  // ever stretching the time to fail over.
  std::uniform_real_distribution<double> f(0.8, 1.0);
  return std::chrono::duration_cast<net::Duration>(d * f(s.rng));
}

asio::awaitable<void> sleep(ElectionState& s, net::Duration d) {
  s.timer.expires_after(d);
  boost::system::error_code ec;
  co_await s.timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

void report_leader(ElectionState& s, const std::string& holder) {
  if (holder == s.reported_leader) return;
  s.reported_leader = holder;
  if (!holder.empty()) {
    net::log::info(
        "new leader observed",
        {{"lease", s.config.lease_namespace + "/" + s.config.lease_name}, {"leader", holder}});
  }
  if (s.config.on_new_leader) s.config.on_new_leader(holder);
}

// One try: read the lease; take or renew it if allowed. True when we hold it now.
asio::awaitable<bool> try_acquire_or_renew(std::shared_ptr<ElectionState> s) {
  const ObjectKey key{s->config.lease_namespace, s->config.lease_name};
  const auto lease_seconds = std::chrono::ceil<std::chrono::seconds>(s->config.lease_duration);
  auto got = co_await s->client.get(lease_kind(), key);
  const auto now = std::chrono::steady_clock::now();
  const std::string now_text = micro_time(std::chrono::system_clock::now());
  if (s->stopped) co_return false;
  if (!got) {
    if (!got.error().not_found()) {
      net::log::warn("cannot read the leader election lease",
                     {{"lease", key.str()}, {"error", got.error().describe()}});
      co_return false;
    }
    LeaseRecord record = LeaseObserver().next_record(s->config.identity, lease_seconds, now_text);
    auto created = co_await s->client.create(make_lease(key.ns, key.name, record));
    if (!created) co_return false;  // someone else created it first: try again later
    s->observer.observe(record, std::chrono::steady_clock::now());
    s->lease = std::move(*created);
    report_leader(*s, s->config.identity);
    co_return true;
  }
  const LeaseRecord current = lease_record_from(*got);
  s->observer.observe(current, now);
  s->lease = std::move(*got);
  report_leader(*s, current.holder);
  if (!s->observer.can_acquire(s->config.identity, now, s->config.lease_duration)) {
    co_return false;
  }
  const LeaseRecord record = s->observer.next_record(s->config.identity, lease_seconds, now_text);
  json::value updated = *s->lease;
  set_lease_record(updated, record);
  auto written = co_await s->client.update(updated);
  if (!written) {
    if (!written.error().conflict()) {
      net::log::warn("cannot update the leader election lease",
                     {{"lease", key.str()}, {"error", written.error().describe()}});
    }
    co_return false;
  }
  s->observer.observe(record, std::chrono::steady_clock::now());
  s->lease = std::move(*written);
  report_leader(*s, s->config.identity);
  co_return true;
}

void start_leading(ElectionState& s) {
  s.leader.store(true, std::memory_order_release);
  s.gauge.set(1);
  net::log::info("became leader", {{"lease", s.config.lease_namespace + "/" + s.config.lease_name},
                                   {"identity", s.config.identity}});
  if (s.config.on_started_leading) s.config.on_started_leading();
}

// Leadership ends: the flag drops before the callback, so writes gated on is_leader()
// stop at once.
void stop_leading(ElectionState& s, std::string_view why) {
  if (!s.leader.exchange(false, std::memory_order_acq_rel)) return;
  s.gauge.set(0);
  const auto level = s.stopped.load() ? net::log::Level::info : net::log::Level::warn;
  if (net::log::enabled(level)) {
    net::log::write(level, "stopped leading",
                    {{"lease", s.config.lease_namespace + "/" + s.config.lease_name},
                     {"identity", s.config.identity},
                     {"reason", why}});
  }
  if (s.config.on_stopped_leading) s.config.on_stopped_leading();
}

// Renews, but gives up at `deadline` even if the request has not returned.
asio::awaitable<std::optional<bool>> renew_before(std::shared_ptr<ElectionState> s,
                                                  net::TimePoint deadline) {
  auto attempt = std::make_shared<Attempt>(s->strand);
  attempt->done.expires_at(deadline);
  asio::co_spawn(
      s->strand,
      [](std::shared_ptr<ElectionState> st, std::shared_ptr<Attempt> a) -> asio::awaitable<void> {
        const bool ok = co_await try_acquire_or_renew(st);
        a->succeeded = ok;
        a->done.cancel();
      }(s, attempt),
      asio::detached);
  boost::system::error_code ec;
  co_await attempt->done.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  co_return attempt->succeeded;  // nullopt: the deadline passed first
}

asio::awaitable<void> run_elector(std::shared_ptr<ElectionState> s) {
  while (!s->stopped) {
    // Candidate: try every retry period.
    while (!s->stopped) {
      const bool acquired = co_await try_acquire_or_renew(s);
      if (acquired) break;
      co_await sleep(*s, jittered(*s, s->config.retry_period));
    }
    if (s->stopped) break;
    start_leading(*s);
    auto last_renew = std::chrono::steady_clock::now();
    // Leader: renew every retry period until a renewal cannot be made in time.
    while (!s->stopped && s->leader) {
      co_await sleep(*s, s->config.retry_period);
      if (s->stopped) break;
      const auto deadline = last_renew + s->config.renew_deadline;
      bool renewed = false;
      bool taken = false;
      while (!s->stopped && std::chrono::steady_clock::now() < deadline) {
        const auto result = co_await renew_before(s, deadline);
        if (result && *result) {
          renewed = true;
          break;
        }
        if (!result) break;  // the deadline passed mid-request
        const auto& seen = s->observer.record();
        if (seen && seen->holder != s->config.identity) {
          taken = true;  // someone else holds the lease: we are not the leader, now
          break;
        }
        // Failed quickly (conflict, server error): retry soon, within the deadline.
        co_await sleep(*s, std::min<net::Duration>(s->config.retry_period / 2,
                                                   deadline - std::chrono::steady_clock::now()));
      }
      if (s->stopped) break;
      if (taken) {
        stop_leading(*s, "another holder took the lease");
        break;
      }
      if (!renewed) {
        stop_leading(*s, "the lease could not be renewed within the renew deadline");
        break;
      }
      last_renew = std::chrono::steady_clock::now();
    }
  }
}

// Steps down and, if configured, releases the lease: the holder is cleared so a
// standby takes over at its next retry.
asio::awaitable<void> stop_on_strand(std::shared_ptr<ElectionState> s) {
  s->timer.cancel();
  const bool was_leader = s->leader.load();
  stop_leading(*s, "stopping");
  if (!was_leader || !s->config.release_on_cancel) co_return;
  const ObjectKey key{s->config.lease_namespace, s->config.lease_name};
  for (int i = 0; i < kReleaseAttempts; ++i) {
    auto got = co_await s->client.get(lease_kind(), key);
    if (!got) break;
    LeaseRecord record = lease_record_from(*got);
    if (record.holder != s->config.identity) break;  // no longer ours
    const std::string now = micro_time(std::chrono::system_clock::now());
    record.holder.clear();
    record.lease_duration_seconds = kReleasedLeaseSeconds;
    record.renew_time = now;
    record.acquire_time = now;
    set_lease_record(*got, record);
    auto written = co_await s->client.update(*got);
    if (written) {
      net::log::info("released the leader election lease", {{"lease", key.str()}});
      break;
    }
    if (!written.error().conflict()) break;  // a conflict: our own renewal landed first
  }
}

class LeaseElector final : public LeaderElector {
 public:
  LeaseElector(const asio::any_io_executor& executor, ApiClient& client,
               LeaderElectionConfig config)
      : s_(std::make_shared<ElectionState>(executor, client, std::move(config))) {}

  ~LeaseElector() override {
    s_->stopped = true;
    asio::post(s_->strand, [s = s_] { s->timer.cancel(); });
  }

  asio::awaitable<void> run() override {
    co_await asio::co_spawn(s_->strand, run_elector(s_), asio::use_awaitable);
  }

  asio::awaitable<void> stop() override {
    if (s_->stopped.exchange(true)) co_return;
    co_await asio::co_spawn(s_->strand, stop_on_strand(s_), asio::use_awaitable);
  }

  bool is_leader() const override { return s_->leader.load(std::memory_order_acquire); }

 private:
  std::shared_ptr<ElectionState> s_;
};

}  // namespace

std::unique_ptr<LeaderElector> make_leader_elector(asio::any_io_executor executor,
                                                   ApiClient& client, LeaderElectionConfig config) {
  return std::make_unique<LeaseElector>(std::move(executor), client, std::move(config));
}

}  // namespace aop::k8s

// Leader election against the test cluster (kube-sim, and the real kube-apiserver in the
// integration-real run): three contenders, each with its own client and User-Agent (the
// server records the writer of every write), and a "controller" per contender that
// writes only while its elector says it leads.
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include "k8s/api_client.hpp"
#include "k8s/leader_election.hpp"
#include "tests/k8s/async_helpers.hpp"
#include "tests/k8s/cluster.hpp"
#include "tests/k8s/gate_client.hpp"

namespace json = boost::json;
namespace asio = boost::asio;
namespace tst = aop::testing;
using namespace aop::k8s;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// Short periods so the tests run in seconds; the same ratios as the 15/10/2 defaults.
constexpr auto kLeaseDuration = 2000ms;
constexpr auto kRenewDeadline = 1400ms;
constexpr auto kRetryPeriod = 300ms;
// Allowance for request latency on a loaded machine in the failover bound.
constexpr auto kSlack = 1000ms;

using aop::testing::kConfigMap;

struct Event {
  std::string who;
  std::string what;  // "started" / "stopped"
  Clock::time_point at;
};

struct EventLog {
  std::mutex mutex;  // owns events
  std::vector<Event> events;
  void add(const std::string& who, const std::string& what) {
    const std::lock_guard lock(mutex);
    events.push_back({who, what, Clock::now()});
  }
  std::vector<Event> copy() {
    const std::lock_guard lock(mutex);
    return events;
  }
};

struct Contender {
  std::string id;
  std::string ns;  // of the shared ConfigMap "work" and the Lease
  std::unique_ptr<ApiClient> client;
  std::unique_ptr<tst::GateClient> gate;
  std::unique_ptr<LeaderElector> elector;
  std::atomic<bool> controller_stop{false};
  std::atomic<bool> controller_done{false};

  bool leads() const { return elector && elector->is_leader(); }
};

// Writes to a shared ConfigMap every 20 ms while leading.
asio::awaitable<void> controller(Contender& c) {
  auto ex = co_await asio::this_coro::executor;
  int n = 0;
  while (!c.controller_stop) {
    if (c.leads()) {
      json::object data;
      data["writer"] = c.id;
      data["n"] = std::to_string(++n);
      json::object patch;
      patch["data"] = std::move(data);
      // (Named, not a braced temporary: GCC 12 destroys braced temporaries in a co_await
      // expression twice.)
      const ObjectKey key{c.ns, "work"};
      co_await c.gate->patch(kConfigMap, key, PatchType::merge, patch, false);
    }
    asio::steady_timer t(ex, 20ms);
    co_await t.async_wait(asio::use_awaitable);
  }
  c.controller_done = true;
}

class LeaderElectionSim : public ::testing::Test {
 protected:
  LeaderElectionSim() {
    auto setup = make_api_client(io.executor(), cluster->client_config(), {});
    json::value cm = json::parse(
        R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"work","namespace":")" + ns +
        R"("}})");
    EXPECT_TRUE(io.run(setup->create(cm)));
    for (int i = 0; i < 3; ++i) {
      auto c = std::make_unique<Contender>();
      c->id = "contender-" + std::to_string(i);
      c->ns = ns;
      ApiClientOptions o;
      o.user_agent = c->id;  // the server counts writes by User-Agent
      o.qps = 0;
      o.request_timeout = 2s;
      c->client = make_api_client(io.executor(), cluster->client_config(), o);
      c->gate = std::make_unique<tst::GateClient>(*c->client);
      LeaderElectionConfig config;
      config.lease_namespace = ns;
      config.lease_name = "agent-operator";
      config.identity = c->id;
      config.lease_duration = kLeaseDuration;
      config.renew_deadline = kRenewDeadline;
      config.retry_period = kRetryPeriod;
      config.on_started_leading = [this, id = c->id] { log.add(id, "started"); };
      config.on_stopped_leading = [this, id = c->id] { log.add(id, "stopped"); };
      c->elector = make_leader_elector(io.executor(), *c->gate, config);
      contenders.push_back(std::move(c));
    }
    for (auto& c : contenders) {
      asio::co_spawn(io.io(), c->elector->run(), asio::detached);
      asio::co_spawn(io.io(), controller(*c), asio::detached);
    }
  }

  ~LeaderElectionSim() override {
    for (auto& c : contenders) c->controller_stop = true;
    tst::wait_until([&] {
      for (auto& c : contenders) {
        if (!c->controller_done) return false;
      }
      return true;
    });
    for (auto& c : contenders) {
      if (c->elector) io.run(c->elector->stop());
    }
    io.stop();
  }

  int leaders() const {
    int n = 0;
    for (const auto& c : contenders) n += c->leads() ? 1 : 0;
    return n;
  }
  Contender* leader() const {
    for (const auto& c : contenders) {
      if (c->leads()) return c.get();
    }
    return nullptr;
  }

  // Waits until `who` has made `more` further writes, checking at every poll that there
  // is never more than one leader. Progress-based: no fixed waiting time.
  void run_for_writes(Contender& who, std::uint64_t more, int& max_leaders) {
    const auto target = cluster->writes_by(who.id) + more;
    EXPECT_TRUE(tst::wait_until([&] {
      max_leaders = std::max(max_leaders, leaders());
      return cluster->writes_by(who.id) >= target;
    })) << who.id
        << " did not keep writing";
  }

  void stop_controller(Contender& c) {
    c.controller_stop = true;
    EXPECT_TRUE(tst::wait_until([&] { return c.controller_done.load(); }));
  }

  std::unique_ptr<tst::Cluster> cluster = tst::start_cluster();
  tst::TestObjects objects{*cluster};
  const std::string ns = objects.test_namespace("le");
  tst::IoThreads io{2};
  EventLog log;
  std::vector<std::unique_ptr<Contender>> contenders;
};

}  // namespace

TEST_F(LeaderElectionSim, ElectsExactlyOneAndFailsOverWhenTheLeaderStops) {
  ASSERT_TRUE(tst::wait_until([&] { return leaders() == 1; })) << "no leader elected";
  Contender* first = leader();
  int max_leaders = 0;
  run_for_writes(*first, 30, max_leaders);
  EXPECT_EQ(max_leaders, 1);
  // Standbys only read the lease: their one create attempt at start-up, which lost the
  // race (a slow standby may make it after the leader was elected), is all they wrote
  // while the leader renewed 30 times.
  for (const auto& c : contenders) {
    if (c.get() == first) continue;
    EXPECT_LE(cluster->writes_by(c->id), 1u) << c->id << " wrote without leading";
  }

  // The leader dies without releasing the lease: its process stops renewing.
  stop_controller(*first);
  const auto died = Clock::now();
  first->elector.reset();  // no release
  ASSERT_TRUE(tst::wait_until([&] { return leaders() == 1; })) << "no failover";
  const auto failover = Clock::now() - died;
  EXPECT_LE(failover, kLeaseDuration + kRetryPeriod + kSlack)
      << "failover took " << std::chrono::duration_cast<std::chrono::milliseconds>(failover).count()
      << " ms";
  Contender* second = leader();
  ASSERT_NE(second, first);
  max_leaders = 0;
  run_for_writes(*second, 20, max_leaders);
  EXPECT_EQ(max_leaders, 1);

  // A graceful stop releases the lease: the standby takes over without waiting for it
  // to expire.
  stop_controller(*second);
  const auto stopping = Clock::now();
  io.run(second->elector->stop());
  EXPECT_FALSE(second->elector->is_leader());
  ASSERT_TRUE(tst::wait_until([&] { return leaders() == 1; })) << "no takeover after release";
  EXPECT_LT(Clock::now() - stopping, kLeaseDuration) << "the release did not speed up takeover";
  Contender* third = leader();
  EXPECT_NE(third, second);
  EXPECT_NE(third, first);
}

TEST_F(LeaderElectionSim, APartitionedLeaderStepsDownAndMakesNoFurtherWrites) {
  ASSERT_TRUE(tst::wait_until([&] { return leaders() == 1; })) << "no leader elected";
  Contender* old_leader = leader();
  int max_leaders = 0;
  run_for_writes(*old_leader, 20, max_leaders);

  // Partition the leader: its requests hang (renewals never complete).
  old_leader->gate->set(tst::GateClient::Mode::hang);
  ASSERT_TRUE(tst::wait_until([&] { return !old_leader->leads(); }))
      << "the partitioned leader kept leading";
  ASSERT_TRUE(tst::wait_until([&] {
    Contender* l = leader();
    return l != nullptr && l != old_leader;
  })) << "no other contender took over";
  Contender* new_leader = leader();

  // The old leader stopped leading before the new one started.
  Clock::time_point stopped_at{}, started_at{};
  for (const auto& e : log.copy()) {
    if (e.who == old_leader->id && e.what == "stopped") stopped_at = e.at;
    if (e.who == new_leader->id && e.what == "started") started_at = e.at;
  }
  ASSERT_NE(stopped_at, Clock::time_point{});
  ASSERT_NE(started_at, Clock::time_point{});
  EXPECT_LT(stopped_at, started_at) << "two leaders at once";

  // The partition heals; the deposed leader must not write again.
  old_leader->gate->set(tst::GateClient::Mode::open);
  const auto writes_after_heal = cluster->writes_by(old_leader->id);
  max_leaders = 0;
  run_for_writes(*new_leader, 40, max_leaders);
  EXPECT_EQ(max_leaders, 1);
  EXPECT_FALSE(old_leader->leads());
  EXPECT_EQ(cluster->writes_by(old_leader->id), writes_after_heal)
      << "the deposed leader wrote after losing the lease";
}

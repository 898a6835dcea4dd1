// The reflector state machine driven by a scripted fake transport and a fake clock:
// each test plays the API server's side, answering the machine's requests in turn.
#include "k8s/reflector.hpp"

#include <set>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "net/error.hpp"

namespace json = boost::json;
using namespace aop;
using namespace aop::k8s;
using namespace std::chrono_literals;

namespace {

json::value cm(const std::string& name, const std::string& rv, const std::string& ns = "default") {
  // As in a LIST response: items carry neither apiVersion nor kind.
  return json::object{{"metadata", {{"name", name}, {"namespace", ns}, {"resourceVersion", rv}}},
                      {"data", {{"k", name + "@" + rv}}}};
}

json::value bookmark(const std::string& rv, bool initial_end = false) {
  json::object md{{"resourceVersion", rv}};
  if (initial_end) md["annotations"] = json::object{{"k8s.io/initial-events-end", "true"}};
  return json::object{{"kind", "ConfigMap"}, {"apiVersion", "v1"}, {"metadata", md}};
}

json::value status(int code, const std::string& reason) {
  return json::object{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
                      {"code", code},     {"reason", reason},   {"message", "injected"}};
}

ApiError error(int code, std::string reason = {}) {
  ApiError e;
  e.code = code;
  e.reason = std::move(reason);
  return e;
}

ApiError end_of_stream() {
  ApiError e;
  e.transport = boost::asio::error::eof;
  return e;
}

// What the transport reports when a watch received nothing for its idle timeout.
ApiError stalled() {
  ApiError e;
  e.transport = net::Errc::idle_timeout;
  e.message = "reading the watch stream: stream received nothing within its idle timeout";
  return e;
}

ApiError connection_reset() {
  ApiError e;
  e.transport = boost::asio::error::connection_reset;
  return e;
}

// The fake server side plus the clock. Every respond_* call feeds the machine's
// current request and checks that the machine asked for what the script expects.
class Script {
 public:
  explicit Script(ReflectorConfig config = make_config()) : reflector_(std::move(config), store_) {}

  static ReflectorConfig make_config() {
    ReflectorConfig c;
    c.gvk = {"", "v1", "ConfigMap"};
    c.page_size = 2;
    c.seed = 42;
    return c;
  }

  void start() { take(reflector_.start(clock_.now())); }

  Reflector::ListRequest expect_list() {
    const auto* req = std::get_if<Reflector::ListRequest>(&step_.next);
    EXPECT_NE(req, nullptr) << "expected a list request, got action #" << step_.next.index();
    return req != nullptr ? *req : Reflector::ListRequest{};
  }
  Reflector::WatchRequest expect_watch() {
    const auto* req = std::get_if<Reflector::WatchRequest>(&step_.next);
    EXPECT_NE(req, nullptr) << "expected a watch request, got action #" << step_.next.index();
    return req != nullptr ? *req : Reflector::WatchRequest{};
  }
  net::Duration expect_sleep() {
    const auto* s = std::get_if<Reflector::Sleep>(&step_.next);
    EXPECT_NE(s, nullptr) << "expected a sleep, got action #" << step_.next.index();
    return s != nullptr ? s->delay : net::Duration{};
  }
  void expect_read() {
    EXPECT_TRUE(std::holds_alternative<Reflector::ReadEvent>(step_.next))
        << "expected to read an event, got action #" << step_.next.index();
  }

  void page(std::vector<json::value> items, std::string rv, std::string cont = {}) {
    expect_list();
    ListPage p;
    p.items = std::move(items);
    p.resource_version = std::move(rv);
    p.continue_token = std::move(cont);
    take(reflector_.on_list_page(clock_.now(), std::move(p)));
  }
  void list_fails(ApiError e) {
    expect_list();
    take(reflector_.on_list_page(clock_.now(), std::move(e)));
  }
  void open() {
    expect_watch();
    take(reflector_.on_watch_opened(clock_.now(), {}));
  }
  void open_fails(ApiError e) {
    expect_watch();
    take(reflector_.on_watch_opened(clock_.now(), ApiResult<void>(std::move(e))));
  }
  void event(WatchEvent::Type type, json::value object) {
    expect_read();
    take(reflector_.on_event(clock_.now(), WatchEvent{type, std::move(object)}));
  }
  void stream_fails(ApiError e) {
    expect_read();
    take(reflector_.on_event(clock_.now(), std::move(e)));
  }
  // Sleeps for the requested delay on the fake clock and wakes the machine.
  net::Duration sleep() {
    const auto d = expect_sleep();
    clock_.advance(d);
    take(reflector_.on_wake(clock_.now()));
    return d;
  }

  // The changes delivered so far as "type name@rv" strings, then cleared.
  std::vector<std::string> changes() {
    std::vector<std::string> out;
    for (const auto& c : changes_) {
      const auto& o = c.new_object ? c.new_object : c.old_object;
      const char* t = c.type == StoreChange::Type::added     ? "add"
                      : c.type == StoreChange::Type::updated ? "update"
                                                             : "delete";
      out.push_back(std::string(t) + " " + std::string(o->name()) + "@" +
                    std::string(o->resource_version()));
    }
    changes_.clear();
    return out;
  }
  std::set<std::string> store_contents() const {
    std::set<std::string> out;
    for (const auto& o : store_.list()) {
      out.insert(std::string(o->name()) + "@" + std::string(o->resource_version()));
    }
    return out;
  }

  Reflector& reflector() { return reflector_; }
  Store& store() { return store_; }
  net::FakeClock& clock() { return clock_; }

 private:
  void take(Reflector::Step step) {
    for (auto& c : step.changes) changes_.push_back(std::move(c));
    step_ = std::move(step);
  }

  Store store_;
  net::FakeClock clock_;
  Reflector reflector_;
  Reflector::Step step_{{}, Reflector::Stopped{}};
  std::vector<StoreChange> changes_;
};

using T = WatchEvent::Type;
using Strings = std::vector<std::string>;

// Lists a, b, c in two pages at resourceVersion 10 and opens the watch.
void list_abc(Script& s) {
  s.start();
  EXPECT_EQ(s.expect_list().continue_token, "");
  EXPECT_EQ(s.expect_list().limit, 2u);
  s.page({cm("a", "1"), cm("b", "2")}, "10", "page2");
  EXPECT_EQ(s.expect_list().continue_token, "page2");
  s.page({cm("c", "3")}, "10");
}

}  // namespace

TEST(Reflector, ListsAllPagesThenWatchesFromTheListResourceVersion) {
  Script s;
  s.start();
  EXPECT_EQ(s.reflector().phase(), Reflector::Phase::listing);
  s.page({cm("a", "1"), cm("b", "2")}, "10", "page2");
  EXPECT_TRUE(s.changes().empty()) << "nothing is stored before the last page";
  EXPECT_FALSE(s.reflector().has_synced());
  s.page({cm("c", "3")}, "10");
  EXPECT_EQ(s.changes(), (Strings{"add a@1", "add b@2", "add c@3"}));
  EXPECT_TRUE(s.reflector().has_synced());

  const auto w = s.expect_watch();
  EXPECT_EQ(w.resource_version, "10");
  EXPECT_FALSE(w.send_initial_events);
  EXPECT_GE(w.timeout, 300s);
  EXPECT_LE(w.timeout, 600s);
  // List items get the informer's kind.
  EXPECT_EQ(s.store().get({"default", "a"})->kind(), "ConfigMap");
  EXPECT_EQ(s.store().get({"default", "a"})->api_version(), "v1");
}

TEST(Reflector, AppliesWatchEventsAndResumesFromTheLastResourceVersion) {
  Script s;
  list_abc(s);
  s.changes();
  s.open();
  EXPECT_EQ(s.reflector().phase(), Reflector::Phase::watching);
  s.event(T::added, cm("d", "11"));
  s.event(T::modified, cm("a", "12"));
  s.event(T::modified, cm("a", "12"));  // a repeat of a stored version is no change
  s.event(T::deleted, cm("b", "13"));
  EXPECT_EQ(s.changes(), (Strings{"add d@11", "update a@12", "delete b@13"}));
  s.event(T::bookmark, bookmark("20"));
  EXPECT_EQ(s.reflector().resource_version(), "20");

  // The server ends the stream (its timeout): resume at once from the bookmark.
  s.clock().advance(5min);
  s.stream_fails(end_of_stream());
  EXPECT_EQ(s.expect_watch().resource_version, "20");
  s.open();
  s.event(T::modified, cm("c", "21"));
  EXPECT_EQ(s.changes(), (Strings{"update c@21"}));
  EXPECT_EQ(s.store_contents(), (std::set<std::string>{"a@12", "c@21", "d@11"}));
  EXPECT_EQ(s.reflector().stats().failures, 0u);
}

TEST(Reflector, GoneOnResumeRelistsAndReportsObjectsDeletedWhileDisconnected) {
  Script s;
  list_abc(s);
  s.changes();
  s.open();
  s.event(T::added, cm("d", "11"));
  EXPECT_EQ(s.changes(), (Strings{"add d@11"}));
  s.stream_fails(connection_reset());
  // A broken stream is a failure: back off, then resume the watch (no relist).
  const auto d = s.sleep();
  EXPECT_GE(d, 400ms);
  EXPECT_LE(d, 800ms);
  EXPECT_EQ(s.expect_watch().resource_version, "11");
  // Meanwhile history moved on: the server no longer has resourceVersion 11.
  s.open_fails(error(410, "Expired"));
  s.sleep();
  // Relist: b was deleted and c changed while we were away; e is new.
  s.page({cm("a", "1"), cm("c", "30")}, "40", "p2");
  s.page({cm("d", "11"), cm("e", "35")}, "40");
  auto changes = s.changes();
  std::sort(changes.begin(), changes.end());
  EXPECT_EQ(changes, (Strings{"add e@35", "delete b@2", "update c@30"}));
  EXPECT_EQ(s.store_contents(), (std::set<std::string>{"a@1", "c@30", "d@11", "e@35"}));
  EXPECT_EQ(s.expect_watch().resource_version, "40");
  EXPECT_EQ(s.reflector().stats().relists_gone, 1u);
  EXPECT_EQ(s.reflector().stats().lists, 2u);
}

TEST(Reflector, ErrorEventGoneInsideTheStreamRelists) {
  Script s;
  list_abc(s);
  s.open();
  s.event(T::error, status(410, "Expired"));
  s.sleep();
  s.expect_list();
  EXPECT_EQ(s.reflector().stats().relists_gone, 1u);
}

TEST(Reflector, OtherErrorEventsResumeTheWatchAfterBackoff) {
  Script s;
  list_abc(s);
  s.open();
  s.event(T::modified, cm("a", "15"));
  s.event(T::error, status(500, "InternalError"));
  s.sleep();
  EXPECT_EQ(s.expect_watch().resource_version, "15");
  EXPECT_EQ(s.reflector().last_error()->code, 500);
}

TEST(Reflector, BackoffDoublesToThirtySecondsAndResetsAfterTwoHealthyMinutes) {
  Script s;
  list_abc(s);
  std::vector<net::Duration> delays;
  for (int i = 0; i < 10; ++i) {
    s.open_fails(error(503, "ServiceUnavailable"));
    delays.push_back(s.sleep());
  }
  // Jitter draws from [base/2, base]; bases 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30, 30...
  const double bases[] = {0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30, 30, 30, 30};
  for (int i = 0; i < 10; ++i) {
    const double secs = std::chrono::duration<double>(delays[i]).count();
    EXPECT_GE(secs, bases[i] / 2 - 1e-9) << "failure " << i;
    EXPECT_LE(secs, bases[i] + 1e-9) << "failure " << i;
  }
  // A watch that stays healthy for over two minutes resets the backoff.
  s.open();
  s.clock().advance(3min);
  s.stream_fails(connection_reset());
  EXPECT_LE(s.expect_sleep(), 800ms);
}

TEST(Reflector, AStalledWatchIsReplacedFromItsLastResourceVersion) {
  ReflectorConfig config = Script::make_config();
  config.stall_timeout = 3s;
  Script s(config);
  list_abc(s);
  s.changes();
  // Every watch carries the stall timeout for the transport to enforce.
  EXPECT_EQ(s.expect_watch().idle_timeout, 3s);
  s.open();
  s.clock().advance(1s);
  s.event(T::modified, cm("a", "11"));
  const auto last_heard = s.clock().now();
  EXPECT_EQ(s.reflector().last_event_at(), last_heard);
  s.clock().advance(2s);
  s.event(T::bookmark, bookmark("15"));
  EXPECT_EQ(s.reflector().last_event_at(), last_heard + 2s) << "a bookmark is a sign of life";
  EXPECT_FALSE(s.reflector().disconnected_since());

  // Nothing more: the transport gives up after 3 s of silence.
  s.clock().advance(3s);
  s.stream_fails(stalled());
  EXPECT_EQ(s.reflector().stats().stalls, 1u);
  // Disconnected since the stream last delivered something, not since it was noticed.
  EXPECT_EQ(s.reflector().disconnected_since(), last_heard + 2s);
  // The usual backoff, then the watch resumes where the dead one stopped (no relist).
  const auto delay = s.sleep();
  EXPECT_GE(delay, 400ms);
  EXPECT_LE(delay, 1200ms);
  const auto w = s.expect_watch();
  EXPECT_EQ(w.resource_version, "15");
  EXPECT_EQ(w.idle_timeout, 3s);
  s.open();
  EXPECT_FALSE(s.reflector().disconnected_since());
  // A change made during the stall arrives on the new stream.
  s.event(T::modified, cm("b", "16"));
  EXPECT_EQ(s.changes(), (Strings{"update a@11", "update b@16"}));
  EXPECT_EQ(s.reflector().stats().lists, 1u);
  EXPECT_EQ(s.reflector().stats().stalls, 1u);
}

TEST(Reflector, DisconnectedSinceCoversEveryGapBetweenWatches) {
  Script s;
  const auto started = s.clock().now();
  s.start();
  EXPECT_EQ(s.reflector().disconnected_since(), started);
  s.clock().advance(1s);
  s.page({cm("a", "1")}, "10");
  EXPECT_EQ(s.reflector().disconnected_since(), started) << "a list is not a watch";
  s.open();
  EXPECT_FALSE(s.reflector().disconnected_since());

  // A clean end: disconnected until the next watch opens.
  s.clock().advance(5min);
  const auto ended = s.clock().now();
  s.stream_fails(end_of_stream());
  EXPECT_EQ(s.reflector().disconnected_since(), ended);
  s.open();
  EXPECT_FALSE(s.reflector().disconnected_since());

  // The server goes away: every retry keeps the first moment of the outage.
  s.clock().advance(1min);
  const auto outage = s.clock().now();
  s.stream_fails(connection_reset());
  for (int i = 0; i < 4; ++i) {
    s.sleep();
    s.open_fails(connection_reset());
    EXPECT_EQ(s.reflector().disconnected_since(), outage);
  }
  EXPECT_EQ(s.reflector().last_event_at(), outage - 1min) << "last heard when the watch opened";
  s.sleep();
  s.open();
  EXPECT_FALSE(s.reflector().disconnected_since());
  EXPECT_EQ(s.reflector().stats().stalls, 0u);
}

TEST(Reflector, ExpiredContinueTokenRestartsTheListAtOnce) {
  Script s;
  s.start();
  s.page({cm("a", "1"), cm("b", "2")}, "10", "page2");
  s.list_fails(error(410, "Expired"));
  // No wait, and the first attempt's pages are discarded.
  EXPECT_EQ(s.expect_list().continue_token, "");
  s.page({cm("b", "20")}, "30");
  EXPECT_EQ(s.changes(), (Strings{"add b@20"}));
  EXPECT_EQ(s.store_contents(), (std::set<std::string>{"b@20"}));
}

TEST(Reflector, ListFailureBacksOffAndListsAgain) {
  Script s;
  s.start();
  s.list_fails(error(429, "TooManyRequests"));
  s.sleep();
  EXPECT_EQ(s.expect_list().continue_token, "");
  s.list_fails(connection_reset());
  const auto second = s.sleep();
  EXPECT_GE(second, 800ms);  // doubled
  s.page({cm("a", "1")}, "5");
  EXPECT_TRUE(s.reflector().has_synced());
}

TEST(Reflector, AWatchClosedAtOnceWithoutEventsBacksOff) {
  Script s;
  list_abc(s);
  s.open();
  s.stream_fails(end_of_stream());
  s.expect_sleep();
  s.sleep();
  s.open();
  s.event(T::added, cm("z", "11"));
  s.stream_fails(end_of_stream());
  EXPECT_EQ(s.expect_watch().resource_version, "11");  // progress was made: no wait
}

TEST(Reflector, WatchTimeoutsAreRandomizedBetweenFiveAndTenMinutes) {
  Script s;
  list_abc(s);
  std::set<long> seen;
  for (int i = 0; i < 50; ++i) {
    const auto w = s.expect_watch();
    EXPECT_GE(w.timeout, 300s);
    EXPECT_LE(w.timeout, 600s);
    seen.insert(static_cast<long>(w.timeout.count()));
    s.open();
    s.event(T::added, cm("x" + std::to_string(i), std::to_string(100 + i)));
    s.stream_fails(end_of_stream());
  }
  EXPECT_GT(seen.size(), 10u);
}

TEST(Reflector, StreamingListBuffersInitialEventsUntilTheEndBookmark) {
  auto config = Script::make_config();
  config.streaming_list = true;
  Script s(config);
  s.start();
  auto w = s.expect_watch();
  EXPECT_TRUE(w.send_initial_events);
  EXPECT_EQ(w.resource_version, "");
  s.open();
  s.event(T::added, cm("a", "1"));
  s.event(T::added, cm("b", "2"));
  s.event(T::bookmark, bookmark("5"));  // progress bookmark, not the end
  EXPECT_TRUE(s.changes().empty());
  EXPECT_FALSE(s.reflector().has_synced());
  s.event(T::bookmark, bookmark("7", true));
  EXPECT_EQ(s.changes(), (Strings{"add a@1", "add b@2"}));
  EXPECT_TRUE(s.reflector().has_synced());
  EXPECT_EQ(s.reflector().resource_version(), "7");
  // The same stream goes on as a normal watch.
  s.event(T::modified, cm("a", "8"));
  EXPECT_EQ(s.changes(), (Strings{"update a@8"}));
  // After a drop it resumes as a plain watch.
  s.stream_fails(end_of_stream());
  w = s.expect_watch();
  EXPECT_FALSE(w.send_initial_events);
  EXPECT_EQ(w.resource_version, "8");
}

TEST(Reflector, StreamingListInterruptedBeforeTheEndStartsOver) {
  auto config = Script::make_config();
  config.streaming_list = true;
  Script s(config);
  s.start();
  s.open();
  s.event(T::added, cm("a", "1"));
  s.stream_fails(end_of_stream());
  s.sleep();
  EXPECT_TRUE(s.expect_watch().send_initial_events);
  s.open();
  s.event(T::added, cm("b", "2"));
  s.event(T::bookmark, bookmark("3", true));
  EXPECT_EQ(s.store_contents(), (std::set<std::string>{"b@2"}));
}

TEST(Reflector, RefusedStreamingListFallsBackToListAndWatch) {
  auto config = Script::make_config();
  config.streaming_list = true;
  Script s(config);
  s.start();
  s.open_fails(error(422, "Invalid"));
  EXPECT_FALSE(s.reflector().streaming_list());
  s.page({cm("a", "1")}, "4");  // immediately, no backoff
  EXPECT_TRUE(s.reflector().has_synced());
  s.open();
  s.event(T::error, status(410, "Expired"));
  s.sleep();
  s.expect_list();  // relists stay list+watch
}

TEST(Reflector, AppliesTheTransform) {
  auto config = Script::make_config();
  config.transform.metadata_only = true;
  Script s(config);
  s.start();
  s.page({cm("a", "1")}, "2");
  const auto obj = s.store().get({"default", "a"});
  EXPECT_FALSE(obj->at({"data"}).has_value());
  EXPECT_EQ(obj->kind(), "ConfigMap");
}

TEST(Reflector, StopEndsEverything) {
  Script s;
  list_abc(s);
  s.open();
  const auto step = s.reflector().stop();
  EXPECT_TRUE(std::holds_alternative<Reflector::Stopped>(step.next));
  EXPECT_TRUE(std::holds_alternative<Reflector::Stopped>(
      s.reflector().on_event(s.clock().now(), WatchEvent{T::added, cm("q", "99")}).next));
  EXPECT_EQ(s.store().get({"default", "q"}), nullptr);
}

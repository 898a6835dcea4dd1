// The dependency index: object reads, namespace-scoped, all-namespace and
// namespace-selector selections; updates test old and new labels (an object leaving a
// hierarchy reconciles it); Namespace label changes; atomic replacement and removal;
// lookups that examine only the entries filed under the object's labels; and the
// informer handlers over real cached objects.
#include "reconcile/runtime/dependency_index.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "k8s/object.hpp"

namespace aop::runtime {
namespace {

using Roots = std::vector<std::string>;

GroupKind sm_kind() {
  return {"monitoring.coreos.com", "ServiceMonitor"};
}
GroupKind secret_kind() {
  return {"", "Secret"};
}

k8s::LabelSelector sel(std::string_view s) {
  auto r = k8s::parse_label_selector_string(s);
  EXPECT_TRUE(r.has_value()) << s;
  return r.value();
}

KindSelection in_ns(const GroupKind& kind, std::string ns, std::string_view selector) {
  KindSelection k;
  k.kind = kind;
  k.scope = NamespaceScope::one;
  k.ns = std::move(ns);
  k.selector = sel(selector);
  return k;
}

KindSelection in_selected(const GroupKind& kind, std::string_view ns_selector,
                          std::string_view selector) {
  KindSelection k;
  k.kind = kind;
  k.scope = NamespaceScope::selected;
  k.namespace_selector = sel(ns_selector);
  k.selector = sel(selector);
  return k;
}

KindSelection in_all(const GroupKind& kind, std::string_view selector) {
  KindSelection k;
  k.kind = kind;
  k.scope = NamespaceScope::all;
  k.selector = sel(selector);
  return k;
}

RootDependencies selecting(std::vector<KindSelection> s) {
  RootDependencies d;
  d.selections = std::move(s);
  return d;
}

struct L {
  Labels map;
  k8s::MapLabels view{map};
  explicit L(Labels m) : map(std::move(m)) {}
  L(const L&) = delete;
  L& operator=(const L&) = delete;
};

TEST(DependencyIndex, AnObjectReadFindsItsRoot) {
  DependencyIndex index;
  RootDependencies d;
  d.objects.push_back({secret_kind(), {"ns1", "creds"}});
  index.set("ns1/agent", d);
  L none(Labels{});
  EXPECT_EQ(index.affected(secret_kind(), "ns1", "creds", none.view), Roots{"ns1/agent"});
  EXPECT_EQ(index.affected(secret_kind(), "ns1", "other", none.view), Roots{});
  EXPECT_EQ(index.affected(secret_kind(), "ns2", "creds", none.view), Roots{});
  EXPECT_EQ(index.affected(GroupKind{"", "ConfigMap"}, "ns1", "creds", none.view), Roots{});
}

TEST(DependencyIndex, NamespaceScopedSelectionsMatchKindNamespaceAndLabels) {
  DependencyIndex index;
  index.set("a", selecting({in_ns(sm_kind(), "ns1", "app=x")}));
  index.set("b", selecting({in_ns(sm_kind(), "ns1", "app=y")}));
  index.set("c", selecting({in_ns(sm_kind(), "ns2", "app=x")}));
  index.set("d", selecting({in_ns(sm_kind(), "ns1", "")}));               // everything in ns1
  index.set("e", selecting({in_ns(sm_kind(), "ns1", "tier in (a,b)")}));  // unpinned
  L x(Labels{{"app", "x"}});
  L xb(Labels{{"app", "x"}, {"tier", "b"}});
  EXPECT_EQ(index.affected(sm_kind(), "ns1", "m", x.view), (Roots{"a", "d"}));
  EXPECT_EQ(index.affected(sm_kind(), "ns1", "m", xb.view), (Roots{"a", "d", "e"}));
  EXPECT_EQ(index.affected(sm_kind(), "ns2", "m", x.view), Roots{"c"});
  EXPECT_EQ(index.affected(GroupKind{"monitoring.coreos.com", "PodMonitor"}, "ns1", "m", x.view),
            Roots{});
}

TEST(DependencyIndex, AnUpdateReconcilesTheHierarchiesTheObjectLeavesAndJoins) {
  DependencyIndex index;
  index.set("x-root", selecting({in_ns(sm_kind(), "ns1", "app=x")}));
  index.set("y-root", selecting({in_ns(sm_kind(), "ns1", "app=y")}));
  index.set("z-root", selecting({in_ns(sm_kind(), "ns1", "app=z")}));
  L x(Labels{{"app", "x"}});
  L y(Labels{{"app", "y"}});
  // Relabelled from x to y: x's hierarchy loses it, y's gains it; z is untouched.
  EXPECT_EQ(index.affected(sm_kind(), "ns1", "m", x.view, y.view), (Roots{"x-root", "y-root"}));
  // Relabelled out of every selection: the old one still hears of it.
  L other(Labels{{"app", "other"}});
  EXPECT_EQ(index.affected(sm_kind(), "ns1", "m", x.view, other.view), Roots{"x-root"});
}

TEST(DependencyIndex, ASelectorThatSelectsNothingIsNeverMatched) {
  DependencyIndex index;
  KindSelection k = in_ns(sm_kind(), "ns1", "");
  k.selector = k8s::LabelSelector::nothing();
  index.set("a", selecting({k}));
  L x(Labels{{"app", "x"}});
  EXPECT_EQ(index.affected(sm_kind(), "ns1", "m", x.view), Roots{});
}

TEST(DependencyIndex, AllNamespaceSelections) {
  DependencyIndex index;
  index.set("everywhere", selecting({in_all(sm_kind(), "team=infra")}));
  L infra(Labels{{"team", "infra"}});
  L web(Labels{{"team", "web"}});
  EXPECT_EQ(index.affected(sm_kind(), "any", "m", infra.view), Roots{"everywhere"});
  EXPECT_EQ(index.affected(sm_kind(), "other", "m", infra.view), Roots{"everywhere"});
  EXPECT_EQ(index.affected(sm_kind(), "any", "m", web.view), Roots{});
}

TEST(DependencyIndex, NamespaceSelectorRulesUseTheNamespacesLabels) {
  DependencyIndex index;
  index.set("sel", selecting({in_selected(sm_kind(), "team=a", "app=x")}));
  L x(Labels{{"app", "x"}});
  // The namespace is not known yet: nothing matches; its arrival reconciles the root.
  EXPECT_EQ(index.affected(sm_kind(), "ns1", "m", x.view), Roots{});
  const Labels team_a = {{"team", "a"}};
  EXPECT_EQ(index.namespace_changed("ns1", nullptr, &team_a), Roots{"sel"});
  EXPECT_EQ(index.affected(sm_kind(), "ns1", "m", x.view), Roots{"sel"});
  // A label change that keeps it matching reads nothing new.
  const Labels team_a_more = {{"team", "a"}, {"env", "prod"}};
  EXPECT_EQ(index.namespace_changed("ns1", &team_a, &team_a_more), Roots{});
  // Moved out of the selection: the root loses everything in it.
  const Labels team_b = {{"team", "b"}};
  EXPECT_EQ(index.namespace_changed("ns1", &team_a_more, &team_b), Roots{"sel"});
  EXPECT_EQ(index.affected(sm_kind(), "ns1", "m", x.view), Roots{});
  // Back in, then deleted.
  EXPECT_EQ(index.namespace_changed("ns1", &team_b, &team_a), Roots{"sel"});
  EXPECT_EQ(index.namespace_changed("ns1", &team_a, nullptr), Roots{"sel"});
  EXPECT_EQ(index.affected(sm_kind(), "ns1", "m", x.view), Roots{});
}

TEST(DependencyIndex, ReplacingDependenciesIsAtomicAndRemovalForgetsTheRoot) {
  DependencyIndex index;
  EXPECT_TRUE(index.set("r", selecting({in_ns(sm_kind(), "ns1", "app=x")})));
  EXPECT_FALSE(index.set("r", selecting({in_ns(sm_kind(), "ns1", "app=x")})));  // unchanged
  L x(Labels{{"app", "x"}});
  EXPECT_EQ(index.affected(sm_kind(), "ns1", "m", x.view), Roots{"r"});
  EXPECT_TRUE(index.set("r", selecting({in_ns(sm_kind(), "ns2", "app=x")})));
  EXPECT_EQ(index.affected(sm_kind(), "ns1", "m", x.view), Roots{});
  EXPECT_EQ(index.affected(sm_kind(), "ns2", "m", x.view), Roots{"r"});
  EXPECT_EQ(index.dependencies("r").selections.front().ns, "ns2");
  index.remove("r");
  EXPECT_EQ(index.affected(sm_kind(), "ns2", "m", x.view), Roots{});
  EXPECT_EQ(index.root_count(), 0u);
  // Ids are reused without leaking old entries.
  index.set("s", selecting({in_ns(sm_kind(), "ns3", "app=x")}));
  EXPECT_EQ(index.affected(sm_kind(), "ns2", "m", x.view), Roots{});
  EXPECT_EQ(index.affected(sm_kind(), "ns3", "m", x.view), Roots{"s"});
}

TEST(DependencyIndex, ASharedObjectReconcilesEveryRootThatReadsIt) {
  DependencyIndex index;
  RootDependencies d;
  d.objects.push_back({secret_kind(), {"ns1", "shared"}});
  d.selections.push_back(in_ns(sm_kind(), "ns1", "app=x"));
  index.set("one", d);
  index.set("two", d);
  L x(Labels{{"app", "x"}});
  EXPECT_EQ(index.affected(secret_kind(), "ns1", "shared", x.view), (Roots{"one", "two"}));
  EXPECT_EQ(index.affected(sm_kind(), "ns1", "m", x.view), (Roots{"one", "two"}));
}

// 10,000 roots in ONE namespace, each selecting its own instance label: a lookup
// examines the one entry filed under the object's label, not 10,000.
TEST(DependencyIndex, LookupsDoNotScanEveryRootOfANamespace) {
  DependencyIndex index;
  for (int i = 0; i < 10000; ++i) {
    index.set("ns/root-" + std::to_string(i),
              selecting({in_ns(sm_kind(), "ns", "instance=i" + std::to_string(i))}));
  }
  L l(Labels{{"instance", "i1234"}, {"app", "web"}});
  const auto before = index.selections_examined();
  EXPECT_EQ(index.affected(sm_kind(), "ns", "m", l.view), Roots{"ns/root-1234"});
  EXPECT_LE(index.selections_examined() - before, 2u);
}

k8s::ObjectPtr obj(std::string_view json) {
  return k8s::Object::from_json(boost::json::parse(json));
}

TEST(DependencyIndex, InformerHandlersEnqueueDependentsOfRealObjects) {
  DependencyIndex index;
  index.set("ns1/x", selecting({in_ns(sm_kind(), "ns1", "app=x")}));
  index.set("ns1/y", selecting({in_ns(sm_kind(), "ns1", "app=y")}));
  Roots enqueued;
  auto h = dependents_event_handler(index, sm_kind(),
                                    [&](const std::string& r) { enqueued.push_back(r); });
  auto before = obj(R"({"metadata":{"namespace":"ns1","name":"m","labels":{"app":"x"}}})");
  auto after = obj(R"({"metadata":{"namespace":"ns1","name":"m","labels":{"app":"y"}}})");
  h.on_update(before, after);
  EXPECT_EQ(enqueued, (Roots{"ns1/x", "ns1/y"}));
  enqueued.clear();
  h.on_delete(after);
  EXPECT_EQ(enqueued, Roots{"ns1/y"});
}

TEST(DependencyIndex, NamespaceHandlerCombinesSelectorRulesAndDirectReads) {
  DependencyIndex index;
  index.set("by-selector", selecting({in_selected(sm_kind(), "team=a", "")}));
  RootDependencies direct;
  direct.objects.push_back({GroupKind{"", "Namespace"}, {"", "ns1"}});
  index.set("direct", direct);
  Roots enqueued;
  auto h = namespace_event_handler(index, [&](const std::string& r) { enqueued.push_back(r); });
  auto v1 = obj(R"({"metadata":{"name":"ns1","labels":{"team":"a"}}})");
  auto v2 = obj(R"({"metadata":{"name":"ns1","labels":{"team":"b"}}})");
  h.on_add(v1);
  EXPECT_EQ(enqueued, (Roots{"by-selector", "direct"}));
  enqueued.clear();
  h.on_update(v1, v2);
  EXPECT_EQ(enqueued, (Roots{"by-selector", "direct"}));
  enqueued.clear();
  auto sm = obj(R"({"metadata":{"namespace":"ns1","name":"m"}})");
  EXPECT_EQ(index.affected(sm_kind(), "ns1", "m", sm->labels()), Roots{});
}

// A reconcile reads the caches, then records what it read. A member created in
// between is looked up against the root's old dependencies (none, for a new root) and
// finds nothing; the read window reports it so the root runs again.
TEST(DependencyIndex, AnEventBetweenReadingAndRecordingIsNotLost) {
  DependencyIndex index;
  Roots enqueued;
  auto h = dependents_event_handler(index, sm_kind(),
                                    [&](const std::string& r) { enqueued.push_back(r); });
  auto member = obj(R"({"metadata":{"namespace":"ns1","name":"m","labels":{"app":"x"}}})");
  auto stranger = obj(R"({"metadata":{"namespace":"ns1","name":"s","labels":{"app":"z"}}})");

  {  // the member arrives while the new root renders: missed, and said so
    auto window = index.open_read_window();
    h.on_add(member);
    EXPECT_EQ(enqueued, Roots{}) << "no root selects it yet";
    const auto r =
        index.set("ns1/root", selecting({in_ns(sm_kind(), "ns1", "app=x")}), std::move(window));
    EXPECT_TRUE(r.changed);
    EXPECT_TRUE(r.missed_event);
  }
  {  // an object the new dependencies do not select: nothing missed
    auto window = index.open_read_window();
    h.on_add(stranger);
    const auto r = index.set("ns1/root", selecting({in_ns(sm_kind(), "ns1", "app in (x,y)")}),
                             std::move(window));
    EXPECT_TRUE(r.changed);
    EXPECT_FALSE(r.missed_event);
  }
  {  // unchanged dependencies saw the event themselves (it was enqueued): nothing to add
    auto window = index.open_read_window();
    h.on_update(member, member);
    EXPECT_EQ(enqueued, Roots{"ns1/root"});
    const auto r = index.set("ns1/root", selecting({in_ns(sm_kind(), "ns1", "app in (x,y)")}),
                             std::move(window));
    EXPECT_FALSE(r.changed);
    EXPECT_FALSE(r.missed_event);
  }
  {  // an event before the window opened was in the caches the reconcile read
    h.on_delete(member);
    auto window = index.open_read_window();
    const auto r =
        index.set("ns1/root", selecting({in_ns(sm_kind(), "ns1", "app=x")}), std::move(window));
    EXPECT_TRUE(r.changed);
    EXPECT_FALSE(r.missed_event);
  }
}

TEST(DependencyIndex, ANamespaceRelabelledWhileReadingIsNotLost) {
  DependencyIndex index;
  auto h = namespace_event_handler(index, [](const std::string&) {});
  auto v1 = obj(R"({"metadata":{"name":"ns1","labels":{"team":"b"}}})");
  auto v2 = obj(R"({"metadata":{"name":"ns1","labels":{"team":"a"}}})");
  h.on_add(v1);
  auto window = index.open_read_window();
  h.on_update(v1, v2);
  const auto r =
      index.set("root", selecting({in_selected(sm_kind(), "team=a", "")}), std::move(window));
  EXPECT_TRUE(r.missed_event);
}

TEST(DependencyIndex, EventsAreKeptOnlyWhileAWindowIsOpen) {
  DependencyIndex index;
  auto h = dependents_event_handler(index, sm_kind(), [](const std::string&) {});
  auto member = obj(R"({"metadata":{"namespace":"ns1","name":"m","labels":{"app":"x"}}})");
  auto first = index.open_read_window();
  h.on_add(member);
  {
    // A window opened after the event does not see it; the older one still does.
    auto second = index.open_read_window();
    EXPECT_FALSE(
        index.set("ns1/b", selecting({in_ns(sm_kind(), "ns1", "app=x")}), std::move(second))
            .missed_event);
  }
  EXPECT_TRUE(index.set("ns1/a", selecting({in_ns(sm_kind(), "ns1", "app=x")}), std::move(first))
                  .missed_event);
  // set() closed both windows: nothing is noted any more.
  h.on_add(member);
  auto third = index.open_read_window();
  EXPECT_FALSE(index.set("ns1/c", selecting({in_ns(sm_kind(), "ns1", "app=x")}), std::move(third))
                   .missed_event);
}

TEST(DependencyIndex, AWindowThatOutlivedItsNotedEventsAssumesItMissedOne) {
  DependencyIndex index;
  auto h = dependents_event_handler(index, sm_kind(), [](const std::string&) {});
  auto stranger = obj(R"({"metadata":{"namespace":"ns9","name":"s","labels":{"app":"z"}}})");
  auto window = index.open_read_window();
  // More events than the index keeps for open windows (a stalled read under churn):
  // the oldest are dropped, and with them the proof that none concerned this root.
  for (int i = 0; i < 20000; ++i) h.on_update(stranger, stranger);
  EXPECT_TRUE(index.set("ns1/a", selecting({in_ns(sm_kind(), "ns1", "app=x")}), std::move(window))
                  .missed_event);
}

TEST(DependencyIndex, OwnerHandlerEnqueuesTheOwningRoot) {
  Roots enqueued;
  auto h = owner_event_handler(GroupKind{"monitoring.grafana.com", "GrafanaAgent"}, true, true,
                               [&](const std::string& r) { enqueued.push_back(r); });
  h.on_delete(obj(R"({"metadata":{"namespace":"ns1","name":"agent-0","ownerReferences":[
      {"apiVersion":"monitoring.grafana.com/v1alpha1","kind":"GrafanaAgent","name":"agent",
       "uid":"u1","controller":true},
      {"apiVersion":"v1","kind":"ConfigMap","name":"other","uid":"u2","controller":false}]}})"));
  EXPECT_EQ(enqueued, Roots{"ns1/agent"});
  enqueued.clear();
  // Not a controller reference: ignored when controller_only.
  h.on_add(obj(R"({"metadata":{"namespace":"ns1","name":"s","ownerReferences":[
      {"apiVersion":"monitoring.grafana.com/v1alpha1","kind":"GrafanaAgent","name":"agent",
       "uid":"u1"}]}})"));
  EXPECT_EQ(enqueued, Roots{});
}

}  // namespace
}  // namespace aop::runtime

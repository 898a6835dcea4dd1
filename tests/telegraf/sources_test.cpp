// Sources → targets: reading Namespaces and Applications, merging several sources into
// one target namespace, conflicts, missing destinations, invalid annotations.
#include "reconcile/telegraf/sources.hpp"

#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/telegraf/fixtures.hpp"

namespace aop::telegraf {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::make_application;
using testing::make_namespace;
using ::testing::SizeIs;

std::vector<std::string> names(const std::vector<Endpoint>& eps) {
  std::vector<std::string> out;
  out.reserve(eps.size());
  for (const auto& e : eps) out.push_back(e.name);
  return out;
}

std::vector<std::string> refs(const std::vector<SourceRef>& rs) {
  std::vector<std::string> out;
  out.reserve(rs.size());
  for (const auto& r : rs) out.push_back(r.str());
  return out;
}

// Reads every object, collecting sources and problems.
struct Read {
  std::vector<Source> sources;
  std::vector<Problem> problems;
};
Read read_all(const std::vector<boost::json::value>& objects, const TelegrafOptions& o = {}) {
  Read out;
  for (const auto& obj : objects) {
    SourceRead r = read_source(obj, o);
    out.problems.insert(out.problems.end(), r.problems.begin(), r.problems.end());
    if (r.source) out.sources.push_back(*r.source);
  }
  return out;
}

TEST(ReadSource, AnnotatedNamespaceTargetsItself) {
  SourceRead r = read_source(make_namespace("nublado", "hub: http://hub/\n", "u-1"), {});
  ASSERT_TRUE(r.source);
  EXPECT_THAT(r.problems, IsEmpty());
  EXPECT_EQ(r.source->ref.str(), "Namespace/nublado");
  EXPECT_EQ(r.source->ref.uid, "u-1");
  EXPECT_EQ(r.source->target_namespace, "nublado");
  EXPECT_EQ(r.source->application_name, "nublado");
  EXPECT_TRUE(r.source->valid);
  EXPECT_THAT(names(r.source->endpoints), ElementsAre("hub"));
}

TEST(ReadSource, ApplicationTargetsItsDestination) {
  SourceRead r =
      read_source(make_application("argocd", "sasquatch", "sasquatch-ns", "a: http://a/"), {});
  ASSERT_TRUE(r.source);
  EXPECT_EQ(r.source->ref.str(), "Application/argocd/sasquatch");
  EXPECT_EQ(r.source->target_namespace, "sasquatch-ns");
  EXPECT_EQ(r.source->application_name, "sasquatch");
}

TEST(ReadSource, UnannotatedObjectsAreNotSourcesAndSayNothing) {
  SourceRead ns = read_source(make_namespace("quiet", std::nullopt), {});
  EXPECT_FALSE(ns.source);
  EXPECT_THAT(ns.problems, IsEmpty());
  EXPECT_EQ(ns.ignored, "");
  SourceRead app = read_source(make_application("argocd", "quiet", "quiet", std::nullopt), {});
  EXPECT_FALSE(app.source);
  EXPECT_THAT(app.problems, IsEmpty());
}

TEST(ReadSource, ApplicationWithoutDestinationIsAnError) {
  SourceRead r = read_source(make_application("argocd", "lost", std::nullopt, "a: http://a/"), {});
  ASSERT_TRUE(r.source);
  EXPECT_EQ(r.source->target_namespace, "");
  ASSERT_THAT(r.problems, SizeIs(1));
  EXPECT_EQ(r.problems[0].reason, ProblemReason::missing_destination);
  EXPECT_EQ(r.problems[0].source.str(), "Application/argocd/lost");
  EXPECT_THAT(r.problems[0].message,
              AllOf(HasSubstr("Application/argocd/lost"), HasSubstr("spec.destination.namespace"),
                    HasSubstr("annotate the Namespace instead")));

  SourceRead empty = read_source(make_application("argocd", "lost", "", "a: http://a/"), {});
  ASSERT_THAT(empty.problems, SizeIs(1));
  EXPECT_EQ(empty.problems[0].reason, ProblemReason::missing_destination);

  SourceRead bad =
      read_source(make_application("argocd", "lost", "Not_A_Name", "a: http://a/"), {});
  ASSERT_THAT(bad.problems, SizeIs(1));
  EXPECT_THAT(bad.problems[0].message, HasSubstr("not a valid namespace name"));
}

TEST(ReadSource, InvalidAnnotationNamesObjectEndpointAndRule) {
  SourceRead r = read_source(make_namespace("argocd", "- redis: ftp://redis/\n"), {});
  ASSERT_TRUE(r.source);
  EXPECT_FALSE(r.source->valid);
  ASSERT_THAT(r.problems, SizeIs(1));
  EXPECT_EQ(r.problems[0].reason, ProblemReason::invalid_annotation);
  EXPECT_THAT(r.problems[0].message,
              AllOf(HasSubstr("Namespace/argocd"),
                    HasSubstr("telegraf.influxdata.com/rubin-telegraf-operator"),
                    HasSubstr("endpoint \"redis\""), HasSubstr("use http or https"),
                    HasSubstr("keeps its last good configuration")));
}

TEST(ReadSource, NonStringAnnotation) {
  boost::json::value ns = make_namespace("x", std::nullopt);
  ns.as_object()["metadata"].as_object()["annotations"] =
      boost::json::object{{testing::kKey, boost::json::array{"a"}}};
  SourceRead r = read_source(ns, {});
  ASSERT_THAT(r.problems, SizeIs(1));
  EXPECT_EQ(r.problems[0].reason, ProblemReason::invalid_annotation);
  EXPECT_THAT(r.problems[0].message, HasSubstr("must be a string"));
}

TEST(ReadSource, WatchedApplicationNamespacesOnly) {
  auto app = make_application("elsewhere", "x", "x", "a: http://a/");
  SourceRead r = read_source(app, {});
  EXPECT_FALSE(r.source);
  EXPECT_THAT(r.ignored, HasSubstr("not among the watched Application namespaces"));
  TelegrafOptions all;
  all.all_application_namespaces = true;
  EXPECT_TRUE(read_source(app, all).source);
  TelegrafOptions listed;
  listed.application_namespaces = {"argocd", "elsewhere"};
  EXPECT_TRUE(read_source(app, listed).source);
}

TEST(ReadSource, ObjectsBeingDeletedAreNotSources) {
  auto ns = make_namespace("gone", "a: http://a/");
  ns.as_object()["metadata"].as_object()["deletionTimestamp"] = "2024-01-01T00:00:00Z";
  SourceRead r = read_source(ns, {});
  EXPECT_FALSE(r.source);
  EXPECT_THAT(r.ignored, HasSubstr("being deleted"));
}

TEST(ReadSource, OtherKindsAndMalformedObjects) {
  SourceRead cm = read_source(boost::json::parse(R"({"apiVersion":"v1","kind":"ConfigMap",
      "metadata":{"name":"x","annotations":{"telegraf.influxdata.com/rubin-telegraf-operator":"a: http://a/"}}})"),
                              {});
  EXPECT_FALSE(cm.source);
  EXPECT_THAT(cm.ignored, HasSubstr("ConfigMap"));
  EXPECT_THAT(read_source(boost::json::value("text"), {}).ignored, HasSubstr("not a JSON object"));

  SourceRead nameless = read_source(boost::json::parse(R"({"apiVersion":"v1","kind":"Namespace",
      "metadata":{"annotations":{"telegraf.influxdata.com/rubin-telegraf-operator":"a: http://a/"}}})"),
                                    {});
  ASSERT_THAT(nameless.problems, SizeIs(1));
  EXPECT_EQ(nameless.problems[0].reason, ProblemReason::invalid_object);

  SourceRead bad_name = read_source(make_namespace("Not_A_Namespace", "a: http://a/"), {});
  EXPECT_FALSE(bad_name.source);
  ASSERT_THAT(bad_name.problems, SizeIs(1));
  EXPECT_THAT(bad_name.problems[0].message, HasSubstr("not a valid namespace name"));
}

TEST(ReadSource, AnnotationKeyComesFromOptions) {
  TelegrafOptions o;
  o.annotation_key = "example.com/scrape";
  boost::json::value ns = make_namespace("x", std::nullopt);
  ns.as_object()["metadata"].as_object()["annotations"] =
      boost::json::object{{"example.com/scrape", "a: http://a/"}, {testing::kKey, "broken: ["}};
  SourceRead r = read_source(ns, o);
  ASSERT_TRUE(r.source);
  EXPECT_TRUE(r.source->valid);
}

// --- merging --------------------------------------------------------------------------

TEST(PlanTarget, NamespaceAndApplicationsMergeInStableOrder) {
  Read in = read_all({
      make_application("argocd", "b-app", "shared", "- b1: http://b1/\n- common: http://c/\n"),
      make_application("argocd", "a-app", "shared", "- a1: http://a1/\n"),
      make_namespace("shared", "- n1: http://n1/\n- common: http://c/\n", "ns-uid"),
      make_namespace("other", "- o: http://o/\n"),
  });
  ASSERT_THAT(in.problems, IsEmpty());
  TargetPlan plan = plan_target("shared", in.sources);
  EXPECT_EQ(plan.ns, "shared");
  EXPECT_THAT(refs(plan.sources), ElementsAre("Namespace/shared", "Application/argocd/a-app",
                                              "Application/argocd/b-app"));
  // Namespace first, then Applications by namespace/name; identical definitions of
  // `common` count once, at their first position.
  EXPECT_THAT(names(plan.endpoints), ElementsAre("n1", "common", "a1", "b1"));
  EXPECT_THAT(plan.problems, IsEmpty());
  EXPECT_FALSE(plan.held());
  ASSERT_TRUE(plan.owner);
  EXPECT_EQ(plan.owner->uid, "ns-uid");
  EXPECT_EQ(plan.application, "shared");

  // Input order does not matter.
  std::vector<Source> reversed(in.sources.rbegin(), in.sources.rend());
  TargetPlan again = plan_target("shared", reversed);
  EXPECT_EQ(refs(again.sources), refs(plan.sources));
  EXPECT_EQ(again.endpoints, plan.endpoints);
}

TEST(PlanTarget, ConflictIsReportedOnBothSourcesAndLeftOut) {
  Read in = read_all({
      make_namespace("argocd", "- redis: http://redis-a/\n- server: http://server/\n"),
      make_application("argocd", "argocd", "argocd",
                       "- redis: http://redis-b/\n- repo: http://repo/\n"),
  });
  TargetPlan plan = plan_target("argocd", in.sources);
  EXPECT_THAT(names(plan.endpoints), ElementsAre("server", "repo"));  // the others deploy
  ASSERT_THAT(plan.problems, SizeIs(2));
  EXPECT_EQ(plan.problems[0].source.str(), "Namespace/argocd");
  EXPECT_EQ(plan.problems[1].source.str(), "Application/argocd/argocd");
  for (const Problem& p : plan.problems) {
    EXPECT_EQ(p.reason, ProblemReason::endpoint_conflict);
    EXPECT_THAT(p.message, AllOf(HasSubstr("endpoint \"redis\""), HasSubstr("http://redis-a/"),
                                 HasSubstr("http://redis-b/"), HasSubstr("left out")));
  }
  EXPECT_THAT(plan.problems[0].message,
              AllOf(HasSubstr("Namespace/argocd: "),
                    HasSubstr("also defined by Application/argocd/argocd")));
  EXPECT_THAT(plan.problems[1].message, HasSubstr("also defined by Namespace/argocd"));
  EXPECT_FALSE(plan.held());
}

TEST(PlanTarget, SameUrlDifferentOptionsIsAConflictToo) {
  Read in = read_all({
      make_namespace("ns", "x: {url: 'http://x/', interval: 30s}"),
      make_application("argocd", "ns", "ns", "x: {url: 'http://x/', interval: 60s}"),
  });
  TargetPlan plan = plan_target("ns", in.sources);
  EXPECT_THAT(plan.endpoints, IsEmpty());
  ASSERT_THAT(plan.problems, SizeIs(2));
  EXPECT_THAT(plan.problems[0].message, HasSubstr("same url, different interval"));
}

TEST(PlanTarget, ThreeSourcesOneDissenter) {
  Read in = read_all({
      make_namespace("ns", "x: http://x/"),
      make_application("argocd", "a", "ns", "x: http://x/"),
      make_application("argocd", "b", "ns", "x: http://other/"),
  });
  TargetPlan plan = plan_target("ns", in.sources);
  EXPECT_THAT(plan.endpoints, IsEmpty());
  ASSERT_THAT(plan.problems, SizeIs(3));
  EXPECT_THAT(plan.problems[0].message,
              HasSubstr("also defined by Application/argocd/a, Application/argocd/b"));
}

TEST(PlanTarget, InvalidSourceHoldsTheTarget) {
  Read in = read_all({
      make_namespace("ns", "good: http://good/"),
      make_application("argocd", "broken", "ns", "- bad name: http://x/"),
  });
  ASSERT_THAT(in.problems, SizeIs(1));
  TargetPlan plan = plan_target("ns", in.sources);
  EXPECT_TRUE(plan.held());
  EXPECT_THAT(refs(plan.held_by), ElementsAre("Application/argocd/broken"));
  // The valid part is still computed (render prints it).
  EXPECT_THAT(refs(plan.sources), ElementsAre("Namespace/ns"));
  EXPECT_THAT(names(plan.endpoints), ElementsAre("good"));
}

TEST(PlanTarget, ApplicationOnlyTargetHasNoOwner) {
  Read in = read_all({make_application("argocd", "app", "target", "a: http://a/")});
  TargetPlan plan = plan_target("target", in.sources);
  EXPECT_FALSE(plan.owner);
  EXPECT_EQ(plan.application, "app");
  // A Namespace without a known uid (a hand-written manifest) cannot be an owner.
  Read no_uid = read_all({make_namespace("target", "a: http://a/", "")});
  EXPECT_FALSE(plan_target("target", no_uid.sources).owner);
}

TEST(PlanTarget, ApplicationName) {
  // An Application named after the namespace wins over others.
  Read in = read_all({
      make_application("argocd", "aaa", "svc", "a: http://a/"),
      make_application("argocd", "svc", "svc", "b: http://b/"),
  });
  EXPECT_EQ(plan_target("svc", in.sources).application, "svc");
  // Otherwise the first Application in order.
  Read other = read_all({
      make_application("argocd", "zeta", "svc", "a: http://a/"),
      make_application("argocd", "beta", "svc", "b: http://b/"),
  });
  EXPECT_EQ(plan_target("svc", other.sources).application, "beta");
}

TEST(PlanTarget, TheSameSourceTwiceCountsOnceLaterWins) {
  Read in = read_all({
      make_namespace("ns", "old: http://old/"),
      make_namespace("ns", "new: http://new/"),
  });
  TargetPlan plan = plan_target("ns", in.sources);
  EXPECT_THAT(names(plan.endpoints), ElementsAre("new"));
  EXPECT_THAT(plan.problems, IsEmpty());
}

TEST(PlanTargets, OnePlanPerTargetSorted) {
  Read in = read_all({
      make_namespace("zeta", "z: http://z/"),
      make_application("argocd", "alpha", "alpha", "a: http://a/"),
      make_application("argocd", "lost", std::nullopt, "l: http://l/"),
      make_namespace("mid", "m: http://m/"),
  });
  std::vector<TargetPlan> plans = plan_targets(in.sources);
  ASSERT_THAT(plans, SizeIs(3));
  EXPECT_EQ(plans[0].ns, "alpha");
  EXPECT_EQ(plans[1].ns, "mid");
  EXPECT_EQ(plans[2].ns, "zeta");
}

TEST(TargetNamespaceOf, WithoutParsingTheAnnotation) {
  EXPECT_EQ(target_namespace_of(make_namespace("ns", std::nullopt)), "ns");
  EXPECT_EQ(target_namespace_of(make_namespace("ns", "not: [valid")), "ns");
  EXPECT_EQ(target_namespace_of(make_application("argocd", "a", "dest", std::nullopt)), "dest");
  EXPECT_EQ(target_namespace_of(make_application("elsewhere", "a", "dest", "x")), "dest");
  EXPECT_EQ(target_namespace_of(make_application("argocd", "a", std::nullopt, "x")), std::nullopt);
  EXPECT_EQ(target_namespace_of(make_application("argocd", "a", "Bad_Name", "x")), std::nullopt);
  EXPECT_EQ(target_namespace_of(boost::json::parse(R"({"apiVersion":"v1","kind":"Pod"})")),
            std::nullopt);
}

TEST(SourcesAnnotation, RoundTrips) {
  std::vector<SourceRef> sources{{SourceKind::namespace_, "", "shared", "uid"},
                                 {SourceKind::application, "argocd", "a-app", ""},
                                 {SourceKind::application, "argocd", "b.app", ""}};
  auto parsed = parse_sources_annotation(
      "Namespace/shared,Application/argocd/a-app,Application/argocd/b.app");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(*parsed, sources);
  EXPECT_THAT(parse_sources_annotation("").value(), IsEmpty());
  for (std::string_view bad :
       {"Namespace", "Namespace/", "Pod/x", "Application/argocd", "Application/argocd/",
        "Application/a/b/c", "Namespace/a,,Namespace/b", "Namespace/Bad"}) {
    EXPECT_FALSE(parse_sources_annotation(bad)) << bad;
  }
}

}  // namespace
}  // namespace aop::telegraf

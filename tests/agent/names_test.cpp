// Generated names against the API server's rules (reconcile/agent/names.hpp): each rule
// at its limit and one past it, the fields checked, and the message naming the root, the
// names and the longest name the root could have.
#include "reconcile/agent/names.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace aop::agent {
namespace {

namespace json = boost::json;

Step apply_step(Kind kind, const std::string& name, json::object object = {}) {
  Step s;
  s.action = Step::Action::apply;
  s.kind = kind;
  s.key = k8s::ObjectKey{"ns", name};
  object["metadata"] = json::object{{"name", name}, {"namespace", "ns"}};
  s.object = std::move(object);
  return s;
}

std::vector<std::string> fields(const std::vector<NameProblem>& problems) {
  std::vector<std::string> out;
  out.reserve(problems.size());
  for (const auto& p : problems) out.push_back(std::string(kind_name(p.kind)) + " " + p.field);
  return out;
}

TEST(GeneratedNames, ServiceNamesAreDns1035LabelsOfAtMost63) {
  EXPECT_TRUE(check_generated_names({apply_step(Kind::service, std::string(63, 'a'))}).empty());
  const auto long_name = check_generated_names({apply_step(Kind::service, std::string(64, 'a'))});
  ASSERT_EQ(long_name.size(), 1u);
  EXPECT_EQ(long_name[0].max_length, 63u);
  EXPECT_EQ(long_name[0].field, "metadata.name");
  // A GrafanaAgent name may start with a digit or hold dots; a Service name may not.
  EXPECT_EQ(check_generated_names({apply_step(Kind::service, "1agent-operated")}).size(), 1u);
  EXPECT_EQ(check_generated_names({apply_step(Kind::service, "a.b-operated")}).size(), 1u);
}

TEST(GeneratedNames, StatefulSetNamesLeaveRoomForTheRevisionHashLabel) {
  EXPECT_TRUE(
      check_generated_names({apply_step(Kind::stateful_set, std::string(52, 'a'))}).empty());
  const auto p = check_generated_names({apply_step(Kind::stateful_set, std::string(53, 'a'))});
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].max_length, 52u);
  EXPECT_NE(p[0].rule.find("controller-revision-hash"), std::string::npos) << p[0].rule;
  EXPECT_EQ(check_generated_names({apply_step(Kind::stateful_set, "a.b")}).size(), 1u)
      << "pod host names are labels: no dots";
}

TEST(GeneratedNames, OtherKindsAreDnsSubdomains) {
  EXPECT_TRUE(check_generated_names({apply_step(Kind::secret, std::string(253, 'a')),
                                     apply_step(Kind::daemon_set, std::string(242, 'b')),
                                     apply_step(Kind::deployment, "a.b-c")})
                  .empty());
  EXPECT_EQ(fields(check_generated_names({apply_step(Kind::secret, std::string(254, 'a')),
                                          apply_step(Kind::daemon_set, std::string(243, 'b'))})),
            (std::vector<std::string>{"Secret metadata.name", "DaemonSet metadata.name"}));
}

TEST(GeneratedNames, LabelValuesSelectorsAndVolumeNamesAreChecked) {
  const std::string v64(64, 'x');
  json::object sts{
      {"spec",
       json::object{
           {"selector", json::object{{"matchLabels", json::object{{"app", v64}}}}},
           {"template",
            json::object{
                {"metadata", json::object{{"labels", json::object{{"app", v64}}}}},
                {"spec", json::object{{"volumes", json::array{json::object{{"name", v64}}}}}}}},
           {"volumeClaimTemplates",
            json::array{json::object{{"metadata", json::object{{"name", "Bad_Name"}}}}}}}}};
  Step s = apply_step(Kind::stateful_set, "agent", std::move(sts));
  s.object["metadata"].as_object()["labels"] = json::object{{"ok", "fine"}, {"bad", "-x"}};
  EXPECT_EQ(fields(check_generated_names({s})),
            (std::vector<std::string>{"StatefulSet metadata.labels[bad]",
                                      "StatefulSet spec.selector.matchLabels[app]",
                                      "StatefulSet spec.template.metadata.labels[app]",
                                      "StatefulSet spec.template.spec.volumes[0].name",
                                      "StatefulSet spec.volumeClaimTemplates[0].metadata.name"}));
  // Not an apply step: nothing to check.
  Step del = apply_step(Kind::service, std::string(70, 'a'));
  del.action = Step::Action::delete_if_managed;
  EXPECT_TRUE(check_generated_names({del}).empty());
}

TEST(GeneratedNames, TheErrorNamesTheRootEachNameAndTheLongestNameThatFits) {
  GrafanaAgent agent;
  agent.metadata.ns = "monitoring";
  agent.metadata.name = std::string(55, 'a');
  const auto problems =
      check_generated_names({apply_step(Kind::secret, agent.metadata.name + "-config"),
                             apply_step(Kind::service, agent.metadata.name + "-operated"),
                             apply_step(Kind::stateful_set, agent.metadata.name)});
  ASSERT_EQ(problems.size(), 2u);
  const auto e = generated_names_error(agent, problems);
  ASSERT_TRUE(e.has_value());
  const std::string& m = e->message;
  EXPECT_EQ(m.rfind("GrafanaAgent monitoring/" + agent.metadata.name + ": ", 0), 0u) << m;
  EXPECT_NE(m.find("nothing was created or changed"), std::string::npos) << m;
  EXPECT_NE(m.find("Service " + agent.metadata.name + "-operated (64 characters)"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("StatefulSet " + agent.metadata.name + " (55 characters)"), std::string::npos)
      << m;
  // The Service allows 54, the StatefulSet 52: the root fits with 52.
  EXPECT_NE(m.find("Shorten metadata.name to at most 52 characters (it has 55"), std::string::npos)
      << m;
  EXPECT_FALSE(generated_names_error(agent, {}).has_value());
}

}  // namespace
}  // namespace aop::agent

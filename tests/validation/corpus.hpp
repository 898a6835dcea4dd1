// The corpus of invalid inputs (tests/validation/corpus/): the converged base hierarchy
// and, per row, the objects after the row's change and the report it must produce.
// Shared by the unit-level run (corpus_test.cpp) and the run against the live controller
// on kube-sim.
#pragma once

#include <string>
#include <vector>

#include <boost/json/value.hpp>

namespace aop::test {

// What a row's problem leads to.
enum class Scope {
  member,                     // the member is left out, the rest of the root deploys
  root,                       // the root is refused; its deployment stays as it was
  additional_scrape_configs,  // the instance's additional scrape configs are left out
};

struct CorpusExpect {
  std::string kind;
  std::string ns;
  std::string name;
  std::string field;
  std::string message;  // a phrase of the message
  bool warning = false;
};

struct CorpusRow {
  std::string id;
  std::string cls;
  Scope scope = Scope::member;
  std::string api_version;  // of the expected object's kind
  // The objects the row adds or changes (after the change), and all objects.
  std::vector<boost::json::value> changed;
  std::vector<boost::json::value> objects;
  CorpusExpect expect;
};

struct Corpus {
  std::vector<boost::json::value> base;
  std::vector<CorpusRow> rows;
};

// Loads tests/validation/corpus/{base,rows}.yaml from the source tree. Throws
// std::runtime_error naming the row when a row is malformed (a test bug).
Corpus load_corpus();

// RFC 7386 JSON merge patch.
void merge_patch(boost::json::value& target, const boost::json::value& patch);

}  // namespace aop::test

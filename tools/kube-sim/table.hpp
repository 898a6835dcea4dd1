// Server-side printing: the meta.k8s.io/v1 Table representation kubectl asks for
// (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`) so `kubectl get` shows the
// columns a real cluster shows: the usual columns of common built-in kinds, a CRD's
// additionalPrinterColumns (a JSONPath subset: fields, [n], [*] and [?(@.k=="v")]), and
// NAME/AGE otherwise. Watches in Table form send one single-row Table per event, which
// is what `kubectl get -w` prints.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "tools/kube-sim/resources.hpp"
#include "tools/kube-sim/store.hpp"

namespace aop::sim {

enum class TableObjects { none, metadata, object };  // the includeObject parameter

class TablePrinter {
 public:
  TablePrinter(const ResourceType& type, std::chrono::system_clock::time_point now,
               TableObjects include = TableObjects::metadata);

  boost::json::array column_definitions() const;
  boost::json::object row(const StoredObject& o) const;
  // A Table document; `metadata` is the list metadata (resourceVersion, continue, ...).
  std::string render(const std::vector<ObjectPtr>& objects, boost::json::object metadata) const;
  std::string render_one(const StoredObject& o, boost::json::object metadata) const;

 private:
  struct Column {
    std::string name;
    std::string type;  // string, integer, number, boolean, date
    std::string format;
    std::string description;
    int priority = 0;
    std::string json_path;  // CRD columns
    std::string builtin;    // built-in cell function id
  };
  boost::json::value cell(const Column& c, const boost::json::object& obj) const;

  std::vector<Column> columns_;
  std::string api_version_;
  std::chrono::system_clock::time_point now_;
  TableObjects include_;
};

// Go's duration.HumanDuration, as kubectl's AGE column shows it ("45s", "3m12s", "5d").
std::string human_duration(std::chrono::seconds d);

// Evaluates a JSONPath of the subset CRD printer columns use; every match, in order.
std::vector<boost::json::value> eval_json_path(const boost::json::value& root,
                                               std::string_view path);

}  // namespace aop::sim

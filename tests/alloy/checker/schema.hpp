// The schema of the components the operator's Alloy backend emits: per block, the
// attributes and nested blocks it may hold (the mapping tables of the backend's
// specification are the allow-lists, written here by hand), in the order the writer must
// use, with their value kinds and required fields.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace aop::alloy::check::schema {

enum class Kind {
  string,   // a string literal or string expression (sys.env, coalesce, +, constants)
  number,   // a number literal
  integer,  // an integral number literal
  boolean,
  duration,          // a string literal Go's time.ParseDuration accepts
  bytesize,          // a string literal such as "1048576B" or "10MiB"
  strings,           // a list of strings
  numbers,           // a list of numbers
  string_map,        // an object of strings
  list_map,          // an object of lists of strings
  objects,           // a list of objects of strings
  targets,           // a target list: reference, list of objects, array.concat of those
  metric_receivers,  // a list of references to metric receivers
  log_receivers,     // a list of references to log receivers
};

struct Attr {
  std::string name;
  Kind kind = Kind::string;
  bool required = false;
  std::vector<std::string> one_of = {};  // allowed literal values of a string attribute
};

struct Nested {
  std::string name;  // block name inside the body
  std::string body;  // schema id of its body
  bool repeated = false;
  bool labelled = false;  // `walk_param "<name>" { ... }`
};

struct Body {
  std::vector<Attr> attrs;
  std::vector<Nested> blocks;
  // Exporter arguments: attributes and blocks each in bytewise name order instead of the
  // order of the lists above.
  bool bytewise = false;
  // Pipeline stages: nested blocks in source order, any of them repeated.
  bool free_block_order = false;

  const Attr* attr(std::string_view n) const;
  const Nested* block(std::string_view n) const;
  std::size_t attr_index(std::string_view n) const;
  std::size_t block_index(std::string_view n) const;
};

enum class Receiver { none, metrics, logs };

struct Component {
  std::string body;                  // schema id of the component's body
  std::vector<std::string> exports;  // `targets`, `output`, `receiver`
  Receiver receiver = Receiver::none;
};

// Body by schema id (a top-level block name, or `<parent>/<block>` for nested ones).
const Body* body(std::string_view id);
// Top-level components (everything but `logging`); nullptr when unknown.
const Component* component(std::string_view name);

}  // namespace aop::alloy::check::schema

// The CEL subset of cel.hpp: a recursive-descent parser into a small tree, and a tree
// walk over JSON values. Integers are int64 (doubles compare with them numerically).
#include "tools/kube-sim/cel.hpp"

#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <vector>

#include <re2/re2.h>

#include <boost/json.hpp>

namespace aop::sim::cel {

namespace json = boost::json;

struct Node;
using NodePtr = std::unique_ptr<Node>;

struct Node {
  enum class Type {
    literal,  // value
    ident,    // name
    select,   // args[0].name
    index,    // args[0][args[1]]
    call,     // name(args...) or args[0].name(args[1..]) when receiver
    unary,    // op args[0]
    binary,   // args[0] op args[1]
    ternary,  // args[0] ? args[1] : args[2]
    list,     // [args...]
    has,      // has(args[0]) where args[0] is a select
    macro,    // args[0].name(var, args[1])   (all, exists)
  } type = Type::literal;
  json::value value;
  std::string name;  // identifier, field, function, operator or macro variable
  std::string var;   // macro variable
  bool receiver = false;
  std::vector<NodePtr> args;
};

class Program {
 public:
  NodePtr root;
};

namespace {

// ---- parsing ---------------------------------------------------------------------------

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  NodePtr parse() {
    auto n = ternary();
    space();
    if (i_ != s_.size()) fail("unexpected text at offset " + std::to_string(i_));
    return n;
  }

 private:
  [[noreturn]] void fail(const std::string& m) { throw std::runtime_error(m); }

  void space() {
    while (i_ < s_.size() &&
           (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) {
      ++i_;
    }
  }
  bool eat(std::string_view tok) {
    space();
    if (s_.substr(i_, tok.size()) != tok) return false;
    // Keywords and word operators must end at a word boundary.
    const bool word = std::isalpha(static_cast<unsigned char>(tok.back())) != 0;
    if (word && i_ + tok.size() < s_.size() &&
        (std::isalnum(static_cast<unsigned char>(s_[i_ + tok.size()])) ||
         s_[i_ + tok.size()] == '_')) {
      return false;
    }
    i_ += tok.size();
    return true;
  }
  void expect(std::string_view tok) {
    if (!eat(tok)) fail("expected " + std::string(tok) + " at offset " + std::to_string(i_));
  }

  static NodePtr make(Node::Type t) {
    auto n = std::make_unique<Node>();
    n->type = t;
    return n;
  }

  NodePtr ternary() {
    auto c = logical_or();
    if (eat("?")) {
      auto n = make(Node::Type::ternary);
      n->args.push_back(std::move(c));
      n->args.push_back(ternary());
      expect(":");
      n->args.push_back(ternary());
      return n;
    }
    return c;
  }
  NodePtr binary(NodePtr l, std::string op, NodePtr r) {
    auto n = make(Node::Type::binary);
    n->name = std::move(op);
    n->args.push_back(std::move(l));
    n->args.push_back(std::move(r));
    return n;
  }
  NodePtr logical_or() {
    auto l = logical_and();
    while (eat("||")) l = binary(std::move(l), "||", logical_and());
    return l;
  }
  NodePtr logical_and() {
    auto l = relation();
    while (eat("&&")) l = binary(std::move(l), "&&", relation());
    return l;
  }
  NodePtr relation() {
    auto l = additive();
    for (const char* op : {"==", "!=", "<=", ">=", "<", ">", "in"}) {
      if (eat(op)) return binary(std::move(l), op, additive());
    }
    return l;
  }
  NodePtr additive() {
    auto l = multiplicative();
    for (;;) {
      if (eat("+")) {
        l = binary(std::move(l), "+", multiplicative());
      } else if (eat("-")) {
        l = binary(std::move(l), "-", multiplicative());
      } else {
        return l;
      }
    }
  }
  NodePtr multiplicative() {
    auto l = unary();
    for (;;) {
      if (eat("*")) {
        l = binary(std::move(l), "*", unary());
      } else if (eat("/")) {
        l = binary(std::move(l), "/", unary());
      } else if (eat("%")) {
        l = binary(std::move(l), "%", unary());
      } else {
        return l;
      }
    }
  }
  NodePtr unary() {
    if (eat("!")) {
      auto n = make(Node::Type::unary);
      n->name = "!";
      n->args.push_back(unary());
      return n;
    }
    if (eat("-")) {
      auto n = make(Node::Type::unary);
      n->name = "-";
      n->args.push_back(unary());
      return n;
    }
    return member();
  }
  std::string ident() {
    space();
    const std::size_t start = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_'))
      ++i_;
    if (i_ == start || std::isdigit(static_cast<unsigned char>(s_[start]))) {
      fail("expected an identifier at offset " + std::to_string(start));
    }
    return std::string(s_.substr(start, i_ - start));
  }
  std::vector<NodePtr> arguments() {
    std::vector<NodePtr> out;
    if (eat(")")) return out;
    for (;;) {
      out.push_back(ternary());
      if (eat(")")) return out;
      expect(",");
    }
  }
  NodePtr member() {
    auto n = primary();
    for (;;) {
      if (eat(".")) {
        std::string name = ident();
        if (eat("(")) {
          if (name == "all" || name == "exists") {
            auto m = make(Node::Type::macro);
            m->name = name;
            m->var = ident();
            expect(",");
            m->args.push_back(std::move(n));
            m->args.push_back(ternary());
            expect(")");
            n = std::move(m);
          } else {
            if (name != "size" && name != "matches" && name != "startsWith" && name != "endsWith" &&
                name != "contains") {
              fail("unsupported function " + name);
            }
            auto c = make(Node::Type::call);
            c->name = name;
            c->receiver = true;
            c->args.push_back(std::move(n));
            for (auto& a : arguments()) c->args.push_back(std::move(a));
            n = std::move(c);
          }
        } else {
          auto sel = make(Node::Type::select);
          sel->name = name;
          sel->args.push_back(std::move(n));
          n = std::move(sel);
        }
      } else if (eat("[")) {
        auto idx = make(Node::Type::index);
        idx->args.push_back(std::move(n));
        idx->args.push_back(ternary());
        expect("]");
        n = std::move(idx);
      } else {
        return n;
      }
    }
  }
  NodePtr primary() {
    space();
    if (i_ >= s_.size()) fail("unexpected end of rule");
    const char c = s_[i_];
    if (eat("(")) {
      auto n = ternary();
      expect(")");
      return n;
    }
    if (eat("[")) {
      auto n = make(Node::Type::list);
      if (eat("]")) return n;
      for (;;) {
        n->args.push_back(ternary());
        if (eat("]")) return n;
        expect(",");
      }
    }
    if (c == '\'' || c == '"') return string_literal();
    if (std::isdigit(static_cast<unsigned char>(c))) {
      const std::size_t start = i_;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
      if (i_ < s_.size() && (s_[i_] == '.' || s_[i_] == 'e')) fail("floating-point literals");
      if (i_ < s_.size() && s_[i_] == 'u') ++i_;
      auto n = make(Node::Type::literal);
      n->value = static_cast<std::int64_t>(std::stoll(std::string(s_.substr(start, i_ - start))));
      return n;
    }
    if (eat("true")) {
      auto n = make(Node::Type::literal);
      n->value = true;
      return n;
    }
    if (eat("false")) {
      auto n = make(Node::Type::literal);
      n->value = false;
      return n;
    }
    if (eat("null")) return make(Node::Type::literal);
    std::string name = ident();
    if (eat("(")) {
      if (name == "has") {
        auto h = make(Node::Type::has);
        h->args.push_back(ternary());
        expect(")");
        if (h->args[0]->type != Node::Type::select) fail("has() needs a field selection");
        return h;
      }
      if (name != "size") fail("unsupported function " + name);
      auto call = make(Node::Type::call);
      call->name = name;
      call->args = arguments();
      return call;
    }
    auto id = make(Node::Type::ident);
    id->name = std::move(name);
    return id;
  }
  NodePtr string_literal() {
    const char q = s_[i_++];
    std::string out;
    while (i_ < s_.size() && s_[i_] != q) {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) {
        const char e = s_[++i_];
        switch (e) {
          case 'n':
            out += '\n';
            break;
          case 't':
            out += '\t';
            break;
          case '\\':
            out += '\\';
            break;
          case '\'':
            out += '\'';
            break;
          case '"':
            out += '"';
            break;
          default:
            out += '\\';
            out += e;
        }
        ++i_;
        continue;
      }
      out += s_[i_++];
    }
    if (i_ >= s_.size()) fail("unterminated string");
    ++i_;
    auto n = make(Node::Type::literal);
    n->value = json::string(out);
    return n;
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

// ---- evaluation -----------------------------------------------------------------------

struct EvalError {
  std::string message;
};

using Env = std::vector<std::pair<std::string, json::value>>;

[[noreturn]] void error(std::string m) {
  throw EvalError{std::move(m)};
}

bool is_int(const json::value& v) {
  return v.is_int64() || v.is_uint64();
}
double num(const json::value& v) {
  if (v.is_int64()) return static_cast<double>(v.get_int64());
  if (v.is_uint64()) return static_cast<double>(v.get_uint64());
  if (v.is_double()) return v.get_double();
  error("no such overload");
}
std::int64_t integer(const json::value& v) {
  if (v.is_int64()) return v.get_int64();
  if (v.is_uint64()) return static_cast<std::int64_t>(v.get_uint64());
  error("no such overload");
}
bool boolean(const json::value& v) {
  if (!v.is_bool()) error("no such overload: expected a bool");
  return v.get_bool();
}

json::value eval(const Node& n, const Env& env);

bool equal(const json::value& a, const json::value& b) {
  if (a.is_number() && b.is_number()) return num(a) == num(b);
  return a == b;
}

json::value binary(const Node& n, const Env& env) {
  const std::string& op = n.name;
  if (op == "&&") {
    if (!boolean(eval(*n.args[0], env))) return false;
    return boolean(eval(*n.args[1], env));
  }
  if (op == "||") {
    if (boolean(eval(*n.args[0], env))) return true;
    return boolean(eval(*n.args[1], env));
  }
  const json::value a = eval(*n.args[0], env);
  const json::value b = eval(*n.args[1], env);
  if (op == "==") return equal(a, b);
  if (op == "!=") return !equal(a, b);
  if (op == "in") {
    if (b.is_array()) {
      for (const auto& x : b.get_array()) {
        if (equal(a, x)) return true;
      }
      return false;
    }
    if (b.is_object() && a.is_string()) return b.get_object().contains(a.get_string());
    error("no such overload: in");
  }
  if (op == "<" || op == "<=" || op == ">" || op == ">=") {
    int cmp = 0;
    if (a.is_string() && b.is_string()) {
      cmp = a.get_string() < b.get_string() ? -1 : (a.get_string() == b.get_string() ? 0 : 1);
    } else {
      const double x = num(a);
      const double y = num(b);
      cmp = x < y ? -1 : (x == y ? 0 : 1);
    }
    if (op == "<") return cmp < 0;
    if (op == "<=") return cmp <= 0;
    if (op == ">") return cmp > 0;
    return cmp >= 0;
  }
  if (op == "+" && a.is_string() && b.is_string()) {
    return json::string(std::string(a.get_string()) + std::string(b.get_string()));
  }
  if (op == "+" && a.is_array() && b.is_array()) {
    json::array out = a.get_array();
    for (const auto& x : b.get_array()) out.push_back(x);
    return out;
  }
  if (is_int(a) && is_int(b)) {
    const std::int64_t x = integer(a);
    const std::int64_t y = integer(b);
    std::int64_t r = 0;
    if (op == "+" && !__builtin_add_overflow(x, y, &r)) return r;
    if (op == "-" && !__builtin_sub_overflow(x, y, &r)) return r;
    if (op == "*" && !__builtin_mul_overflow(x, y, &r)) return r;
    if (op == "/" || op == "%") {
      if (y == 0) error("division by zero");
      return op == "/" ? x / y : x % y;
    }
    error("return error for overflow");
  }
  const double x = num(a);
  const double y = num(b);
  if (op == "+") return x + y;
  if (op == "-") return x - y;
  if (op == "*") return x * y;
  if (op == "/") return x / y;
  error("no such overload: " + op);
}

json::value call(const Node& n, const Env& env) {
  std::vector<json::value> args;
  for (const auto& a : n.args) args.push_back(eval(*a, env));
  const std::string& f = n.name;
  if (f == "size" && args.size() == 1) {
    const auto& v = args[0];
    if (v.is_string()) {
      // Code points, not bytes.
      std::int64_t count = 0;
      for (const char c : v.get_string()) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
      return count;
    }
    if (v.is_array()) return static_cast<std::int64_t>(v.get_array().size());
    if (v.is_object()) return static_cast<std::int64_t>(v.get_object().size());
    error("no such overload: size");
  }
  if (n.receiver && args.size() == 2 && args[0].is_string() && args[1].is_string()) {
    const std::string_view s = args[0].get_string();
    const std::string_view p = args[1].get_string();
    if (f == "matches") {
      RE2::Options o;
      o.set_log_errors(false);
      const RE2 re(std::string(p), o);
      if (!re.ok()) error("invalid regular expression: " + re.error());
      return RE2::PartialMatch(std::string(s), re);
    }
    if (f == "startsWith") return s.substr(0, p.size()) == p;
    if (f == "endsWith") return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
    if (f == "contains") return s.find(p) != std::string_view::npos;
  }
  error("no such function: " + f);
}

json::value eval(const Node& n, const Env& env) {
  switch (n.type) {
    case Node::Type::literal:
      return n.value;
    case Node::Type::ident:
      for (auto it = env.rbegin(); it != env.rend(); ++it) {
        if (it->first == n.name) return it->second;
      }
      error("undeclared reference to '" + n.name + "'");
    case Node::Type::select: {
      const json::value base = eval(*n.args[0], env);
      if (!base.is_object()) error("no such key: " + n.name);
      const auto* v = base.get_object().if_contains(n.name);
      if (v == nullptr) error("no such key: " + n.name);
      return *v;
    }
    case Node::Type::index: {
      const json::value base = eval(*n.args[0], env);
      const json::value key = eval(*n.args[1], env);
      if (base.is_array() && is_int(key)) {
        const auto i = integer(key);
        if (i < 0 || static_cast<std::size_t>(i) >= base.get_array().size())
          error("index out of range");
        return base.get_array()[static_cast<std::size_t>(i)];
      }
      if (base.is_object() && key.is_string()) {
        const auto* v = base.get_object().if_contains(key.get_string());
        if (v == nullptr) error("no such key");
        return *v;
      }
      error("no such overload: index");
    }
    case Node::Type::has: {
      const Node& sel = *n.args[0];
      const json::value base = eval(*sel.args[0], env);
      if (!base.is_object()) error("has() on a non-object");
      const auto* v = base.get_object().if_contains(sel.name);
      return v != nullptr;
    }
    case Node::Type::call:
      return call(n, env);
    case Node::Type::unary: {
      const json::value v = eval(*n.args[0], env);
      if (n.name == "!") return !boolean(v);
      if (is_int(v)) return -integer(v);
      return -num(v);
    }
    case Node::Type::binary:
      return binary(n, env);
    case Node::Type::ternary:
      return boolean(eval(*n.args[0], env)) ? eval(*n.args[1], env) : eval(*n.args[2], env);
    case Node::Type::list: {
      json::array out;
      for (const auto& a : n.args) out.push_back(eval(*a, env));
      return out;
    }
    case Node::Type::macro: {
      const json::value range = eval(*n.args[0], env);
      std::vector<json::value> items;
      if (range.is_array()) {
        for (const auto& x : range.get_array()) items.push_back(x);
      } else if (range.is_object()) {
        for (const auto& kv : range.get_object()) items.emplace_back(json::string(kv.key()));
      } else {
        error("no such overload: " + n.name);
      }
      Env inner = env;
      inner.emplace_back(n.var, json::value());
      const bool all = n.name == "all";
      for (const auto& x : items) {
        inner.back().second = x;
        const bool r = boolean(eval(*n.args[1], inner));
        if (all && !r) return false;
        if (!all && r) return true;
      }
      return all;
    }
  }
  error("unsupported expression");
}

}  // namespace

std::shared_ptr<const Program> compile(std::string_view rule, std::string* err) {
  try {
    auto p = std::make_shared<Program>();
    p->root = Parser(rule).parse();
    return p;
  } catch (const std::exception& e) {
    if (err != nullptr) *err = e.what();
    return nullptr;
  }
}

Outcome evaluate(const Program& program, const json::value& self) {
  Outcome out;
  try {
    const Env env{{"self", self}};
    const json::value v = eval(*program.root, env);
    if (!v.is_bool()) {
      out.error = "the rule does not evaluate to a bool";
      return out;
    }
    out.value = v.get_bool();
  } catch (const EvalError& e) {
    out.error = e.message;
  }
  return out;
}

}  // namespace aop::sim::cel

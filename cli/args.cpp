#include "cli/args.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <system_error>

#include "cli/usage.h"
#include "core/file_read.h"
#include "core/json_parse.h"
#include "core/text.h"
#include "engines/store/task.h"

namespace ct::cli {

struct OperationOptions::Binding {
  const ParamSpec* param = nullptr;
  CLI::Option* option = nullptr;
  CLI::Option* negation = nullptr;  // --no-<name>, for Bool params that default to true
  bool flag = false;                // CLI11 writes Bool flags here
  bool negated_flag = false;
  std::vector<std::string> more_words;  // unquoted words that continue a free-text or list positional
};

namespace {

std::string_view type_name(const ParamSpec& param) {
  switch (param.type) {
    case ParamType::String: return "TEXT";
    case ParamType::Int: return "INT";
    case ParamType::Bool: return "";
    case ParamType::Enum: return "CHOICE";
    case ParamType::TaskId: return "ID";
    case ParamType::Object: return "JSON";
    case ParamType::Scalar: return "VALUE";
    case ParamType::Array:
      return param.item_type == ParamType::TaskId ? "ID..." : param.item_type == ParamType::Enum ? "CHOICE..." : "TEXT...";
  }
  return "VALUE";
}

Error invalid_param(const ParamSpec& param, std::string message) {
  return Error(ErrorCode::InvalidParams, "--" + kebab_case(param.name) + ": " + std::move(message))
      .with_detail("field", std::string(param.name));
}

/// A `ct --json` envelope given where an Object is expected stands for its data: this lets
/// `ct tasks export --json > out.json` feed `ct tasks import --tasks @out.json`.
json::Value unwrap_envelope(json::Value value) {
  if (value.is_object() && value["success"] == json::Value(true) && value.contains("data")) {
    json::Value data = value["data"];
    return data;
  }
  return value;
}

Result<json::Value> object_value(const ParamSpec& param, const std::string& text, const InputSource& input) {
  std::string source = text;
  std::string origin = "the value";
  if (text == "-") {
    if (!input.read_stdin) return fail(invalid_param(param, "cannot read stdin here"));
    CT_TRY_ASSIGN(source, input.read_stdin());
    origin = "stdin";
  } else if (text.starts_with("@")) {
    if (!input.read_file) return fail(invalid_param(param, "cannot read files here"));
    CT_TRY_ASSIGN(source, input.read_file(text.substr(1)));
    origin = text.substr(1);
  } else if (param.positional && input.read_file && !json::parse(text)) {
    // A positional that is not JSON names a file (`ct import tasks.json`), as @file would.
    std::string_view first = trim(text);
    if (!first.empty() && first.front() != '{' && first.front() != '[') {
      CT_TRY_ASSIGN(source, input.read_file(text));
      origin = text;
    }
  }
  auto parsed = json::parse(source);
  if (!parsed && param.or_text && origin == "the value") {
    // A param that also takes text (evidence: a note) gets the words as they are.
    std::string_view first = trim(text);
    if (first.empty() || (first.front() != '{' && first.front() != '[')) return json::Value(text);
  }
  if (!parsed) {
    // JSON Lines (beads' issues.jsonl, MANIFEST.jsonl): one value per line reads as an array.
    auto lines = json::parse_lines(source);
    if (lines) return std::move(*lines);
    return fail(invalid_param(param, origin + " is not valid JSON (" + parsed.error().message +
                                         "); pass JSON text or JSON Lines, @file or - for stdin"));
  }
  return unwrap_envelope(std::move(*parsed));
}

json::Value int_value(const std::string& text) {
  std::int64_t number = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, number);
  // Not an integer: pass the text on, so the router reports the type error like for any caller.
  if (ec != std::errc() || ptr != end || text.empty()) return json::Value(text);
  return json::Value(number);
}

/// A Scalar param as the JSON an agent would send: 20 → 20, 0.8 → 0.8 (a decimal only when it
/// reads back as the same text), true → true, anything else as text.
json::Value scalar_value(const std::string& text) {
  if (text == "true" || text == "false") return json::Value(text == "true");
  json::Value number = int_value(text);
  if (!number.is_string()) return number;
  double real = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, real);
  if (ec == std::errc() && ptr == end && !text.empty() && json::Value(real).dump() == text) return json::Value(real);
  return number;
}

}  // namespace

InputSource InputSource::system() {
  InputSource input;
  input.read_file = [](const std::string& path) -> Result<std::string> {
    // Regular files only (never /dev/zero or a FIFO that never ends), and at most kMaxInputBytes.
    auto text = read_regular_file(path, {static_cast<std::int64_t>(kMaxInputBytes), std::chrono::milliseconds(30000)});
    if (text) return text;
    const Error& why = text.error();
    if (why.details["reason"] == json::Value("notRegular"))
      return fail(Error(ErrorCode::InvalidInput, path + " is not a regular file")
                      .with_fix("pass a JSON file, or - to read standard input"));
    if (why.details["reason"] == json::Value("tooLarge"))
      return fail(Error(ErrorCode::InvalidInput, path + " is larger than " + std::to_string(kMaxInputBytes >> 20) + " MiB")
                      .with_fix("split it into smaller files"));
    if (why.code == ErrorCode::NotFound)
      return fail(Error(ErrorCode::FileError, "cannot read " + path + ": No such file or directory")
                      .with_fix("check the path (relative paths start at the current directory)"));
    return fail(Error(ErrorCode::FileError, why.message).with_fix("check the path (relative paths start at the current directory)"));
  };
  input.existing_path = [](const std::string& word) -> std::optional<std::string> {
    std::error_code ec;
    if (word.empty() || !std::filesystem::exists(word, ec)) return std::nullopt;
    std::filesystem::path absolute = std::filesystem::absolute(word, ec);
    if (ec) return std::nullopt;
    return absolute.lexically_normal().string();
  };
  input.read_stdin = []() -> Result<std::string> {
    std::string out;
    char chunk[65536];
    std::size_t n = 0;
    while ((n = std::fread(chunk, 1, sizeof chunk, stdin)) > 0) {
      out.append(chunk, n);
      if (out.size() > kMaxInputBytes)
        return fail(Error(ErrorCode::InvalidInput, "standard input is larger than " +
                                                       std::to_string(kMaxInputBytes >> 20) + " MiB")
                        .with_fix("split the input"));
    }
    if (std::ferror(stdin)) return fail(ErrorCode::FileError, "cannot read stdin");
    return out;
  };
  return input;
}

std::vector<std::string> flag_spellings(const ParamSpec& param) {
  std::vector<std::string> out;
  if (char letter = disclosure::short_flag(param.name)) out.push_back(std::string("-") + letter);
  out.push_back("--" + kebab_case(param.name));
  if (!param.alias.empty()) out.push_back("--" + kebab_case(param.alias));
  return out;
}

OperationOptions::OperationOptions(CLI::App& app, const OperationSpec& spec) : spec_(spec) {
  for (const auto& param : spec.params) {
    auto binding = std::make_unique<Binding>();
    binding->param = &param;
    std::string flag = "--" + kebab_case(param.name);
    std::string help = param_help(param);
    std::string names = join(flag_spellings(param), ",");
    if (param.type == ParamType::Bool) {
      binding->option = app.add_flag(names, binding->flag, help);
      if (param.default_json == "true") {
        binding->negation = app.add_flag("--no-" + kebab_case(param.name), binding->negated_flag,
                                         "Turn off " + flag);
        binding->negation->excludes(binding->option);
      }
    } else {
      if (param.positional) names = kebab_case(param.name) + "," + names;
      binding->option = app.add_option(names);
      binding->option->description(help);
      binding->option->type_name(std::string(type_name(param)));
      binding->option->expected(1);
      binding->option->allow_extra_args(false);
      binding->option->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    }
    bindings_.push_back(std::move(binding));
  }
}

OperationOptions::~OperationOptions() = default;

namespace {

/// An Array param's words as its items: split on commas where the param's items never hold one.
json::Value list_value(const ParamSpec& param, const std::vector<std::string>& words) {
  json::Value items = json::Value::array();
  for (const auto& text : words) {
    if (splits_on_commas(param)) {
      for (auto& piece : split_list(text)) items.push_back(std::move(piece));
    } else if (!trim(text).empty()) {
      items.push_back(text);
    }
  }
  return items;
}

/// A bulk operation's `id` and the words after it: several ids (or a range) become `ids` — one
/// call, one transaction.
Result<void> gather_ids(json::Value& params, const std::vector<std::string>& more_ids) {
  std::vector<std::string> words = {params["id"].as_string()};
  words.insert(words.end(), more_ids.begin(), more_ids.end());
  std::vector<std::string> ids;
  for (const auto& word : words) {
    auto expanded = expand_task_ids(word);
    if (!expanded) return fail(std::move(expanded.error()).with_detail("field", "ids"));
    if (*expanded) {
      ids.insert(ids.end(), (*expanded)->begin(), (*expanded)->end());
    } else {
      ids.push_back(word);  // not an id: the router says so, as for any caller
    }
  }
  if (ids.size() > 1 || words.front().find("..") != std::string::npos) {
    params.erase("id");
    params.set("ids", json::Value::array_of(ids));
  }
  return {};
}

}  // namespace

Result<json::Value> OperationOptions::params(const InputSource& input) const {
  json::Value out = json::Value::object();
  for (const auto& binding : bindings_) {
    const ParamSpec& param = *binding->param;
    if (param.type == ParamType::Bool) {
      if (binding->negation && binding->negation->count() > 0) {
        out.set(param.name, !binding->negated_flag);
      } else if (binding->option->count() > 0) {
        out.set(param.name, binding->flag);
      }
      continue;
    }
    const std::vector<std::string>& given = binding->option->results();
    if (given.empty()) continue;
    if (param.type == ParamType::Array) {
      std::vector<std::string> words = given;
      words.insert(words.end(), binding->more_words.begin(), binding->more_words.end());
      out.set(param.name, list_value(param, words));
      continue;
    }
    if (given.size() > 1) {
      std::string values;
      for (const auto& text : given) values += (values.empty() ? "'" : ", '") + text + "'";
      return fail(invalid_param(param, "given " + std::to_string(given.size()) + " times (" + values +
                                           "); give it once"));
    }
    std::string text = given.front();
    for (const auto& word : binding->more_words) text += " " + word;
    switch (param.type) {
      case ParamType::Int: out.set(param.name, int_value(text)); break;
      case ParamType::Scalar: out.set(param.name, scalar_value(text)); break;
      case ParamType::Object: {
        // A file or folder the handler reads itself (tasks.import: a store is more than one file).
        if (!param.path_param.empty() && input.existing_path && text != "-" && !text.starts_with("@") &&
            !json::parse(text)) {
          if (auto path = input.existing_path(text)) {
            out.set(param.path_param, *path);
            break;
          }
        }
        CT_TRY_ASSIGN(json::Value value, object_value(param, text, input));
        out.set(param.name, std::move(value));
        break;
      }
      default: out.set(param.name, text); break;
    }
  }
  if (!label_words_.empty()) {
    json::Value labels = out.contains("labels") ? out["labels"] : json::Value::array();
    for (const auto& word : label_words_) labels.push_back(word);
    out.set("labels", std::move(labels));
  }
  if (spec_.bulk && out["id"].is_string()) CT_TRY(gather_ids(out, more_ids_));
  return out;
}

Result<std::optional<std::vector<std::string>>> expand_task_ids(std::string_view word) {
  using Ids = std::optional<std::vector<std::string>>;
  auto dots = word.find("..");
  if (dots == std::string_view::npos) {
    auto id = normalize_task_id(word);
    if (!id) return Ids();
    return Ids(std::vector<std::string>{*id});
  }
  auto first = normalize_task_id(word.substr(0, dots));
  auto last = normalize_task_id(word.substr(dots + 2));
  if (!first || !last) return Ids();
  std::int64_t from = *parse_task_id(*first), to = *parse_task_id(*last);
  if (to < from)
    return fail(Error(ErrorCode::InvalidParams, "range " + std::string(word) + " runs backwards")
                    .with_fix("write the lower id first: " + *last + ".." + *first));
  if (to - from >= kMaxBulkIds)
    return fail(Error(ErrorCode::InvalidParams, "range " + std::string(word) + " names " + std::to_string(to - from + 1) +
                                                    " tasks; at most " + std::to_string(kMaxBulkIds) + " at once")
                    .with_fix("split it into smaller ranges"));
  std::vector<std::string> ids;
  for (std::int64_t n = from; n <= to; ++n) ids.push_back(format_task_id(n));
  return Ids(std::move(ids));
}

bool OperationOptions::accept_words(const std::vector<std::string>& words) {
  const ParamSpec* labels = spec_.find_param("labels");
  const bool has_labels = labels && labels->type == ParamType::Array;
  // Taking a label off is an update's business (tasks.update: a leading - removes it).
  const bool removes_labels = has_labels && spec_.find_param("mode") != nullptr;
  std::vector<std::string> ids, label_words, rest;
  for (const auto& word : words) {
    if (spec_.bulk && expand_task_ids(word).value_or(std::nullopt)) {
      ids.push_back(word);
    } else if (word.size() > 1 && has_labels && word.front() == '+' && std::isalnum(static_cast<unsigned char>(word[1]))) {
      label_words.push_back(word.substr(1));
    } else if (word.size() > 2 && removes_labels && word.front() == '-' &&
               std::isalnum(static_cast<unsigned char>(word[1]))) {
      label_words.push_back(word);
    } else {
      rest.push_back(word);
    }
  }
  if (!rest.empty() && !continue_last_positional(rest)) return false;
  more_ids_.insert(more_ids_.end(), ids.begin(), ids.end());
  label_words_.insert(label_words_.end(), label_words.begin(), label_words.end());
  return true;
}

bool OperationOptions::continue_last_positional(const std::vector<std::string>& words) {
  Binding* last = nullptr;
  for (const auto& binding : bindings_)
    if (binding->param->positional) last = binding.get();
  if (!last || (last->param->type != ParamType::String && last->param->type != ParamType::Array) ||
      last->option->count() != 1 || words.empty())
    return false;
  for (const auto& word : words)
    if (word.empty() || word.front() == '-') return false;
  last->more_words = words;
  return true;
}

std::vector<std::string> OperationOptions::flag_names() const {
  std::vector<std::string> names;
  for (const auto& binding : bindings_) {
    for (auto& spelling : flag_spellings(*binding->param))
      if (spelling.starts_with("--")) names.push_back(std::move(spelling));
    if (binding->negation) names.push_back("--no-" + kebab_case(binding->param->name));
  }
  return names;
}

Error unexpected_arguments(const std::vector<std::string>& leftovers, const OperationOptions& options,
                           std::string_view command) {
  std::vector<std::string> args;
  for (const auto& arg : leftovers)
    if (arg != "--") args.push_back(arg);
  std::string fix = std::string(command) + " --help";
  for (const auto& arg : args) {
    if (arg.size() < 2 || arg.front() != '-') continue;
    std::string name = arg.substr(0, arg.find('='));
    return Error(ErrorCode::InvalidParams, "unknown option '" + name + "' for " + std::string(command))
        .with_fix(fix)
        .with_detail("field", name)
        .with_choices(name, options.flag_names());
  }
  std::string listed;
  for (const auto& arg : args) listed += (listed.empty() ? "'" : ", '") + arg + "'";
  std::string positionals;
  for (const auto& param : options.spec().params)
    if (param.positional) positionals += " <" + kebab_case(param.name) + ">";
  std::string message = "unexpected argument" + std::string(args.size() > 1 ? "s " : " ") + listed + " for " +
                        std::string(command);
  message += positionals.empty() ? " (it takes no positional arguments)"
                                 : " (it takes" + positionals + "; quote text that has spaces)";
  return Error(ErrorCode::InvalidParams, std::move(message)).with_fix(fix);
}

Result<json::Value> parse_operation_args(const OperationSpec& spec, const std::vector<std::string>& args,
                                         const InputSource& input) {
  CLI::App app(std::string(spec.summary), "ct");
  app.allow_extras();
  OperationOptions options(app, spec);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& error) {
    return fail(Error(ErrorCode::InvalidInput, error.what()).with_fix(command_prefix(spec) + " --help"));
  }
  std::vector<std::string> leftovers;
  for (auto& arg : app.remaining())
    if (arg != "--") leftovers.push_back(std::move(arg));
  if (!leftovers.empty() && !options.accept_words(leftovers))
    return fail(unexpected_arguments(leftovers, options, command_prefix(spec)));
  return options.params(input);
}

}  // namespace ct::cli

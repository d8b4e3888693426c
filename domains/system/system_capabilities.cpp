#include <algorithm>

#include "core/text.h"
#include "domains/bind.h"
#include "domains/call_text.h"
#include "domains/system/capability_matrix.h"

namespace ct {

std::vector<MatrixRow> capability_matrix(Context& context, std::string_view domain) {
  const std::filesystem::path root = context.root();
  std::vector<MatrixRow> rows;
  for (const auto& spec : context.registry->operations()) {
    if (!domain.empty() && spec.domain != domain) continue;
    MatrixRow row{&spec, {}};
    if (!spec.needs.empty() && context.capabilities) row.availability = context.capabilities->check(spec, root, *context.config);
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::string_view> registry_needs(const Registry& registry) {
  std::vector<std::string_view> needs;
  for (const auto& spec : registry.operations())
    for (auto need : spec.needs)
      if (std::find(needs.begin(), needs.end(), need) == needs.end()) needs.push_back(need);
  return needs;
}

namespace {

struct CapabilitiesArgs {
  std::optional<std::string> domain;
  std::optional<bool> available;
  Paging page;
};

Result<Reply> capabilities(Context& context, const CapabilitiesArgs& args) {
  const std::string domain = args.domain.value_or("");
  if (!domain.empty() && context.registry->operation_names(domain, Gateway::Query).empty() &&
      context.registry->operation_names(domain, Gateway::Mutate).empty()) {
    return fail(Error(ErrorCode::Validation, "domain: no operations in " + echo(domain))
                    .with_detail("field", "domain")
                    .with_choices(domain, context.registry->domains()));
  }
  const std::int64_t offset = args.page.offset;
  Reply reply;
  reply.data = json::Value::array();
  std::int64_t matched = 0;
  for (auto& row : capability_matrix(context, domain)) {
    if (args.available && *args.available != row.availability.available) continue;
    if (matched++ < offset) continue;
    json::Value out = json::Value::object();
    out.set("operation", row.spec->full_name());
    out.set("gateway", to_string(row.spec->gateway));
    out.set("engine", to_string(row.spec->engine));
    out.set("available", row.availability.available);
    if (!row.spec->needs.empty()) out.set("needs", json::Value::array_of(row.spec->needs));
    if (!row.availability.available) {
      out.set("reason", row.availability.reason);
      out.set("fix", mcp_text(row.availability.fix, *context.registry));
      if (!row.spec->alternatives.empty()) out.set("alternatives", json::Value::array_of(row.spec->alternatives));
    }
    reply.data.push_back(std::move(out));
  }
  if (!context.capabilities) reply.warnings.push_back("no capability resolver: needs were not probed");
  if (offset > 0) reply.page = Page{matched, static_cast<std::int64_t>(reply.data.as_array().size()), offset};
  if (reply.data.as_array().empty()) reply.note = ErrorCode::NoData;
  return reply;
}

}  // namespace

void register_system_capabilities(Registry& registry) {
  const auto args = bind(
      field(&CapabilitiesArgs::domain, {.name = "domain", .type = ParamType::String, .max = 40,
                                        .description = "Only this domain's operations"}),
      field(&CapabilitiesArgs::available, {.name = "available", .type = ParamType::Bool,
                                           .description = "true: only available operations; false: only unavailable ones"}),
      offset_only(&CapabilitiesArgs::page));
  registry.add({.domain = "system", .name = "capabilities", .gateway = Gateway::Query,
                .summary = "Which operations can run here: engine, availability, reason and fix",
                .params = args.specs(),
                .returns = "[{operation, gateway, engine native|subprocess|hybrid, available, needs?, reason?, fix?, "
                           "alternatives?}] in registry order",
                .examples = {{R"({"available":false})", "what cannot run here, and how to fix it"},
                             {R"({"domain":"tasks"})", "one domain"}},
                .idempotent = true, .tier = 2, .shortcut = "capabilities",
                .row_fields = {"operation", "gateway", "engine", "available", "needs", "reason", "fix", "alternatives"},
                .handler = args.handler(capabilities)});
}

}  // namespace ct

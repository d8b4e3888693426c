#include "disclosure/product.h"

#include "disclosure/disclosure_ops.h"
#include "domains/call_text.h"
#include "domains/context.h"

namespace ct {
namespace {

/// system.init, then the project injection (into instruction files that already exist: init
/// stays non-invasive; each block keeps its level). A failed injection does not undo the
/// project; it becomes a warning.
void extend_init(Registry& registry) {
  OperationSpec* init = registry.find_mutable("system", "init");
  if (!init) return;
  init->returns = "{root, created, db?, instructions?[{file, action}] (files written by the project injection)}; "
                  "E_ALREADY_EXISTS note when the project exists";
  init->handler = [plain = std::move(init->handler)](Context& context, const Params& params) -> Result<Reply> {
    CT_TRY_ASSIGN(Reply reply, plain(context, params));
    auto written = disclosure::inject_after_init(*context.registry, reply.data["root"].as_string());
    if (!written) {
      const Error& error = written.error();
      reply.warnings.push_back("agent instructions not written: " + error.message +
                               (error.fix.empty() ? "" : " (fix: " + mcp_text(error.fix, *context.registry) + ")"));
    } else if (!written->empty()) {
      if (reply.note) {
        // The project existed: the note answers for the reply, so say what was refreshed.
        std::string files;
        for (const auto& file : written->as_array())
          files += (files.empty() ? "" : ", ") + file["file"].as_string() + " (" + file["action"].as_string() + ")";
        reply.warnings.push_back("agent instructions refreshed: " + files);
      }
      reply.data.set("instructions", std::move(*written));
    }
    return reply;
  };
}

}  // namespace

const Registry& registry() {
  static const Registry instance = [] {
    Registry r;
    register_domain_operations(r);
    disclosure::register_disclosure_operations(r);
    extend_init(r);
    return r;
  }();
  return instance;
}

}  // namespace ct

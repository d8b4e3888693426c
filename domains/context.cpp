#include "domains/context.h"

#include "engines/project/git_worktree.h"

namespace ct {

namespace fs = std::filesystem;

std::optional<fs::path> Context::project_worktree(const fs::path& dir) const {
  auto tree = git::at_top(dir);
  auto ours = git::locate(root());
  if (!tree || !ours || tree->common_dir != ours->common_dir) return std::nullopt;
  return tree->top;
}

Place Context::project_place() const {
  if (place.worktree.empty() || !project_worktree(place.worktree)) return {};
  return place;
}

const fs::path& Context::work_root() const {
  if (!work_root_) {
    auto caller = place.worktree.empty() ? std::nullopt : project_worktree(place.worktree);
    work_root_ = caller ? work_root_in(*caller) : root();
  }
  return *work_root_;
}

fs::path Context::work_root_in(const fs::path& top) const {
  auto ours = git::locate(root());
  if (!ours) return top;
  std::error_code error;
  if (fs::equivalent(top, ours->top, error)) return root();  // the project's own work tree
  fs::path here = fs::weakly_canonical(root(), error);       // as git's paths are
  if (error) here = root().lexically_normal();
  const fs::path within = here.lexically_relative(ours->top);
  return within.empty() || within == "." ? top : (top / within).lexically_normal();
}

}  // namespace ct

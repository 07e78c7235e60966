// Built only while the tree has no libdwfl symbolizer library (the
// spoor::symbolizer target): the Symbolizer API with no symbol lookup, so
// every address prints as module+0xoffset and the analyses work unchanged.
#include <deque>
#include <map>

#include "spoor/symbolizer/symbolizer.h"

namespace spoor::symbolizer {

struct Symbolizer::State {
  std::vector<ModuleInfo> modules;
  std::map<std::pair<ModuleId, uint64_t>, Location> memo;
  std::vector<ModuleProblem> problems;
};

Symbolizer::Symbolizer(Options) : state_(std::make_unique<State>()) {}
Symbolizer::Symbolizer(Symbolizer&&) noexcept = default;
Symbolizer& Symbolizer::operator=(Symbolizer&&) noexcept = default;
Symbolizer::~Symbolizer() = default;

ModuleId Symbolizer::add_module(const ModuleInfo& module) {
  state_->modules.push_back(module);
  state_->problems.push_back({module.path, "not symbolized: this build of spoor has no symbolizer"});
  return static_cast<ModuleId>(state_->modules.size() - 1);
}

const Location& Symbolizer::symbolize(ModuleId module, uint64_t address) {
  auto [it, inserted] = state_->memo.try_emplace({module, address});
  if (inserted) {
    const ModuleInfo& m = state_->modules.at(module);
    it->second.frames.emplace_back();
    it->second.module = m.path;
    it->second.module_address = address - m.bias;
  }
  return it->second;
}

const Location& Symbolizer::symbolize_file(const std::string& elf_path, uint64_t address) {
  auto [it, inserted] = state_->memo.try_emplace({~ModuleId{0}, address});
  if (inserted) {
    it->second.frames.emplace_back();
    it->second.module = elf_path;
    it->second.module_address = address;
  }
  return it->second;
}

const std::vector<ModuleProblem>& Symbolizer::problems() const { return state_->problems; }

}  // namespace spoor::symbolizer

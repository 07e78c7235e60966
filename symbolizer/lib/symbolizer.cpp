// The public Symbolizer: module table, file sharing and the memo of
// results per (file, address).
#include "spoor/symbolizer/symbolizer.h"

#include <map>
#include <unordered_map>
#include <utility>

#include "elf_module.h"

namespace spoor::symbolizer {
namespace {

// libdwfl's search path: the user's directories first, then beside the
// file, its .debug/ directory, and the system's debug directory (under the
// sysroot when there is one). A leading '+' is libdwfl's "check the
// .gnu_debuglink CRC", which keeps a stale debug file from misresolving.
std::string debuginfo_path(const Options& options) {
  std::string path = "+";
  for (const std::string& dir : options.debug_dirs) path += dir + ":";
  path += ":.debug:" + options.sysroot + "/usr/lib/debug";
  return path;
}

}  // namespace

struct Symbolizer::State {
  Options options;
  std::string search_path;
  char* search_path_cstr = nullptr;  // libdwfl keeps a char** to it

  struct Module {
    ModuleInfo info;  // without the image once its file is open
    size_t file = SIZE_MAX;  // index in files; SIZE_MAX until first lookup
  };
  std::vector<Module> modules;
  std::vector<std::unique_ptr<ElfModule>> files;
  // Modules with the same file (path and build ID) share one ElfModule and
  // one memo, across processes.
  std::map<std::pair<std::string, std::vector<uint8_t>>, size_t> file_by_key;
  std::unordered_map<std::string, ModuleId> module_by_elf_path;  // symbolize_file's modules
  struct Key {
    size_t file;
    uint64_t address;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return std::hash<uint64_t>()(k.address * 31 + k.file); }
  };
  // Node-based: references handed out stay valid as it grows.
  std::unordered_map<Key, Location, KeyHash> memo;
  std::vector<ModuleProblem> problems;
  Location nowhere;  // for ids that name no module

  size_t open_file(Module& module) {
    if (module.file != SIZE_MAX) return module.file;
    std::pair<std::string, std::vector<uint8_t>> key{module.info.path, module.info.build_id};
    // A captured image is its own file, whatever its path says.
    if (!module.info.image.empty()) key.first = "[image " + std::to_string(files.size()) + "]" + key.first;
    auto it = file_by_key.find(key);
    if (it != file_by_key.end()) return module.file = it->second;
    const std::string file = options.sysroot + module.info.path;
    files.push_back(std::make_unique<ElfModule>(module.info, file, options, &search_path_cstr, problems));
    module.info.image.clear();
    module.info.image.shrink_to_fit();
    file_by_key.emplace(std::move(key), files.size() - 1);
    return module.file = files.size() - 1;
  }

  const Location& lookup(ModuleId id, uint64_t file_address) {
    Module& module = modules[id];
    const size_t file = open_file(module);
    auto [it, inserted] = memo.try_emplace(Key{file, file_address});
    Location& location = it->second;
    if (inserted) {
      location.module = module.info.path;
      location.module_address = file_address;
      files[file]->lookup(file_address, location);
    }
    return location;
  }
};

Symbolizer::Symbolizer(Options options) : state_(std::make_unique<State>()) {
  state_->options = std::move(options);
  state_->search_path = debuginfo_path(state_->options);
  state_->search_path_cstr = state_->search_path.data();
  state_->nowhere.frames.emplace_back();
}

Symbolizer::Symbolizer(Symbolizer&&) noexcept = default;
Symbolizer& Symbolizer::operator=(Symbolizer&&) noexcept = default;
Symbolizer::~Symbolizer() = default;

ModuleId Symbolizer::add_module(const ModuleInfo& module) {
  state_->modules.push_back({module, SIZE_MAX});
  return static_cast<ModuleId>(state_->modules.size() - 1);
}

const Location& Symbolizer::symbolize(ModuleId module, uint64_t address) {
  if (module >= state_->modules.size()) return state_->nowhere;
  return state_->lookup(module, address - state_->modules[module].info.bias);
}

const Location& Symbolizer::symbolize_file(const std::string& elf_path, uint64_t address) {
  auto it = state_->module_by_elf_path.find(elf_path);
  if (it == state_->module_by_elf_path.end()) {
    ModuleInfo info;
    info.path = elf_path;
    it = state_->module_by_elf_path.emplace(elf_path, add_module(info)).first;
  }
  return state_->lookup(it->second, address);
}

const std::vector<ModuleProblem>& Symbolizer::problems() const { return state_->problems; }

}  // namespace spoor::symbolizer

#include "spoor/kernelsrc/kernel_events.h"

namespace spoor::kernelsrc {

constinit Provider g_kernel{"Spoor.Kernel"};

void register_kernel_events() {
  register_provider(g_kernel);
  // In id order, so every recording gives them the same keys.
  for (const spoor_event_desc* e : std::initializer_list<const spoor_event_desc*>{
           &kCpuSample, &kContextSwitch, &kPageFault, &kSyscallEnter, &kSyscallExit, &kMmap, &kComm, &kFork, &kExit,
           &kLost, &kSchedSwitch, &kSchedWaking, &kBlockRequest, &kSession, &kBlockDevice, &kKernelSymbol,
           &kVdsoImage})
    if (__atomic_load_n(e->key, __ATOMIC_RELAXED) == 0) register_event(*e);
}

}  // namespace spoor::kernelsrc

#include "rule_store.h"

#include <sys/mman.h>
#include <unistd.h>

#include "../shared_rules.h"

namespace spoor::record {

int create_rule_store() {
  const size_t bytes = preload::shared_rules_bytes();
  const int fd = memfd_create("spoor-rules", MFD_CLOEXEC);
  if (fd < 0) return -1;
  void* p = MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(bytes)) == 0)
    p = mmap(nullptr, sizeof(preload::SharedRulesHeader), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    close(fd);
    return -1;
  }
  preload::init_shared_rules(p);  // fresh memfd pages are zero: every slot free
  munmap(p, sizeof(preload::SharedRulesHeader));
  return fd;
}

}  // namespace spoor::record

// Where the recorder maps regions (preload/record/region_slots.h): a
// chunk's finished regions stay mapped until none of the chunk is in use,
// then go in one unmapping; a region past the budget goes at once; a live
// region is never unmapped.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "region_slots.h"

namespace {

using spoor::record::RegionSlots;

constexpr size_t kPage = 4096;
constexpr size_t kSlot = 4 * kPage;

// A region stand-in: a memfd mapped over the slot, its first byte written.
struct Mapped {
  void* at = nullptr;
  int fd = -1;
};
Mapped map_into(void* slot, uint8_t mark) {
  Mapped m;
  m.fd = memfd_create("slot-test", MFD_CLOEXEC);
  EXPECT_EQ(ftruncate(m.fd, kSlot), 0);
  m.at = mmap(slot, kSlot, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, m.fd, 0);
  EXPECT_EQ(m.at, slot);
  static_cast<uint8_t*>(m.at)[0] = mark;
  close(m.fd);  // the mapping keeps the memory, as a finished region's does
  return m;
}

// Whether the slot's first page is still the region's (resident memfd
// memory), not the reserved range's empty PROT_NONE page.
bool still_mapped(void* slot) {
  unsigned char resident = 0;
  return mincore(slot, kPage, &resident) == 0 && (resident & 1) != 0;
}

TEST(RegionSlots, AChunksFinishedRegionsGoTogetherOnceNoneIsInUse) {
  RegionSlots slots;
  ASSERT_TRUE(slots.reserve(kSlot, 16, 4, 1 << 20));
  std::vector<void*> taken;
  for (int i = 0; i < 5; ++i) {
    taken.push_back(slots.take(kSlot));
    ASSERT_NE(taken.back(), nullptr);
    map_into(taken.back(), static_cast<uint8_t>(i + 1));
  }
  for (int i = 0; i < 3; ++i) slots.give_back(taken[i], kPage);
  EXPECT_EQ(slots.unmappings(), 0u) << "the fourth region of the chunk is still in use";
  EXPECT_EQ(slots.deferred_bytes(), 3 * kPage);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(still_mapped(taken[i])) << "slot " << i;
    EXPECT_EQ(static_cast<uint8_t*>(taken[i])[0], i + 1) << "a live region's bytes, or a finished one's";
  }
  slots.give_back(taken[3], kPage);
  EXPECT_EQ(slots.unmappings(), 1u) << "one unmapping for the chunk";
  EXPECT_EQ(slots.deferred_bytes(), 0u);
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(still_mapped(taken[i])) << "slot " << i;
  EXPECT_TRUE(still_mapped(taken[4])) << "the next chunk's live region";
  EXPECT_EQ(static_cast<uint8_t*>(taken[4])[0], 5);
}

TEST(RegionSlots, ARegionPastTheBudgetIsUnmappedAtOnce) {
  RegionSlots slots;
  ASSERT_TRUE(slots.reserve(kSlot, 8, 4, 2 * kPage));
  void* a = slots.take(kSlot);
  void* b = slots.take(kSlot);
  map_into(a, 1);
  map_into(b, 2);
  slots.give_back(a, 3 * kPage);  // larger than the whole budget
  EXPECT_EQ(slots.unmappings(), 1u);
  EXPECT_FALSE(still_mapped(a));
  EXPECT_TRUE(still_mapped(b));
  EXPECT_EQ(static_cast<uint8_t*>(b)[0], 2);
  EXPECT_EQ(slots.deferred_bytes(), 0u);
}

TEST(RegionSlots, NoSlotForAnotherSizeOrWhenAllAreInUse) {
  RegionSlots slots;
  EXPECT_EQ(slots.take(kSlot), nullptr) << "nothing reserved";
  ASSERT_TRUE(slots.reserve(kSlot, 4, 2, 1 << 20));
  EXPECT_EQ(slots.take(2 * kSlot), nullptr);
  std::vector<void*> taken;
  for (int i = 0; i < 4; ++i) taken.push_back(slots.take(kSlot));
  for (void* t : taken) EXPECT_NE(t, nullptr);
  EXPECT_EQ(slots.take(kSlot), nullptr) << "every slot is in use";
  slots.give_back(taken[0], kPage);
  slots.give_back(taken[1], kPage);  // the first chunk goes
  EXPECT_EQ(slots.unmappings(), 1u);
  EXPECT_NE(slots.take(kSlot), nullptr) << "a released slot is taken again";
  slots.give_back(taken[1], kPage);  // given back twice: ignored
  slots.give_back(reinterpret_cast<void*>(uintptr_t{4096}), kPage);  // not a slot: ignored
  EXPECT_EQ(slots.unmappings(), 1u);
}

}  // namespace

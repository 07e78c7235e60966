#include "spoor/kernelsrc/block_devices.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace spoor::kernelsrc {
namespace {

namespace fs = std::filesystem;

// A /sys/dev/block look-alike: "8:0" with a uevent naming it, "259:1" a
// link to a device directory without DEVNAME, "7:0" neither, and a stray
// file whose name is no MAJ:MIN.
TEST(BlockDevices, NamedByUeventElseByTheLinksTarget) {
  const fs::path root = fs::temp_directory_path() / ("spoor-sysfs-" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "dev/block/8:0");
  std::ofstream(root / "dev/block/8:0/uevent") << "MAJOR=8\nMINOR=0\nDEVNAME=sda\nDEVTYPE=disk\n";
  fs::create_directories(root / "devices/pci0000:00/nvme/nvme0n1p1");
  std::ofstream(root / "devices/pci0000:00/nvme/nvme0n1p1/uevent") << "MAJOR=259\nMINOR=1\n";
  fs::create_directory_symlink("../../devices/pci0000:00/nvme/nvme0n1p1", root / "dev/block/259:1");
  fs::create_directories(root / "dev/block/7:0");
  std::ofstream(root / "dev/block/README") << "not a device\n";

  const std::vector<BlockDeviceName> names = block_device_names((root / "dev/block").string());
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0].dev, 8u << 20);
  EXPECT_EQ(names[0].name, "sda");
  EXPECT_EQ(names[1].dev, (259u << 20) | 1u);
  EXPECT_EQ(names[1].name, "nvme0n1p1");
  fs::remove_all(root);

  EXPECT_TRUE(block_device_names((root / "missing").string()).empty());
}

}  // namespace
}  // namespace spoor::kernelsrc

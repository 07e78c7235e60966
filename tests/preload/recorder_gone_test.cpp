// A traced program whose recorder is gone (SIGKILL, the OOM killer) runs
// on untraced: its rings fill, and the shim, finding its connection hung
// up, switches every provider off instead of walking stacks for events
// no one will read. Seen from outside: the lost counters of the process's
// rings, read through /proc/PID/map_files (root only), stop growing.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "../../preload/shared_region.h"
#include "run_command.h"
#include "spoor/ring.h"

namespace {

using spoor::test::run;
using namespace std::chrono_literals;

// The events the rings of `pid`'s shared region counted as lost, all CPUs;
// nothing when the region cannot be read.
std::optional<uint64_t> ring_losses(pid_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  std::ifstream maps(proc + "/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find("/memfd:spoor-region") == std::string::npos) continue;
    const int fd = open((proc + "/map_files/" + line.substr(0, line.find(' '))).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    struct stat st{};
    void* base = fstat(fd, &st) == 0 ? mmap(nullptr, st.st_size, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
    close(fd);
    if (base == MAP_FAILED) return std::nullopt;
    const auto* header = static_cast<const spoor::preload::RegionHeader*>(base);
    spoor::RingView view;
    std::optional<uint64_t> lost;
    if (spoor::ring_open(static_cast<uint8_t*>(base) + header->ring_offset, header->ring_size, &view) ==
        spoor::Status::ok) {
      lost = 0;
      for (uint32_t cpu = 0; cpu < view.cpu_count; ++cpu) *lost += view.cpus[cpu].lost.load();
    }
    munmap(base, st.st_size);
    return lost;
  }
  return std::nullopt;
}

pid_t read_pid(const std::string& path) {
  pid_t pid = 0;
  std::ifstream(path) >> pid;
  return pid;
}

template <class Done>
bool wait_until(Done done) {
  for (int i = 0; i < 500; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

TEST(RecorderGone, TheProgramStopsTracingAndRunsOn) {
  if (geteuid() != 0) GTEST_SKIP() << "reading another process's memfd through /proc/PID/map_files needs root";
  const std::string dir = spoor::test::temp_path("recorder-gone");
  std::filesystem::create_directories(dir);
  const std::string stop = dir + "/stop", program_pid = dir + "/program.pid", recorder_pid = dir + "/spoor.pid";
  const std::string output = dir + "/out";
  std::filesystem::remove(stop);
  std::filesystem::remove(program_pid);
  // Small rings: they fill soon after the recorder is gone.
  ASSERT_EQ(run("sh -c '" + std::string(SPOOR_TOOL) + " record --buffer-size 256K -o " + dir + "/t.spoor -- " +
                SPOOR_ALLOC_UNTIL + " " + stop + " " + program_pid + " >" + output + " 2>&1 & echo $! >" +
                recorder_pid + "'")
                .status,
            0);
  ASSERT_TRUE(wait_until([&] { return read_pid(program_pid) > 0 && ring_losses(read_pid(program_pid)); }))
      << "the program did not start traced";
  const pid_t program = read_pid(program_pid);
  std::this_thread::sleep_for(200ms);
  ASSERT_EQ(kill(read_pid(recorder_pid), SIGKILL), 0);

  // Its rings fill, then stop filling: nothing is written to them any more.
  ASSERT_TRUE(wait_until([&] { return ring_losses(program).value_or(0) > 0; })) << "the rings never filled";
  std::this_thread::sleep_for(300ms);
  const std::optional<uint64_t> first = ring_losses(program);
  std::this_thread::sleep_for(300ms);
  const std::optional<uint64_t> second = ring_losses(program);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(*first, *second) << "the program still records events for a recorder that is gone";

  std::ofstream(stop).put('\n');
  ASSERT_TRUE(wait_until([&] { return kill(program, 0) != 0; })) << "the program did not end";
  std::ifstream out(output);
  const std::string said((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
  EXPECT_NE(said.find("stopped after some rounds\n"), std::string::npos) << said;
  std::filesystem::remove_all(dir);
}

}  // namespace

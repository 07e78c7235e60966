// Modules and their debug info fetched by build ID from a debuginfod
// server: a local one (Debian's debuginfod package) serving a directory
// that holds the fixture's unstripped build, as debuginfod.debian.net
// serves Debian's packages. Skipped where the server is not installed
// (scripts/install-test-deps.sh installs it).
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "spoor/symbolizer/file_by_build_id.h"
#include "symbolizer_test_support.h"

namespace spoor::symbolizer::test {
namespace {

const std::string kTool = SPOOR_TOOL;
const std::string kVariants = SPOOR_SYM_VARIANTS;

// A TCP port nothing listens on, from the kernel.
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0;
  close(fd);
  return ok ? ntohs(address.sin_port) : 0;
}

std::string hex(const std::vector<uint8_t>& bytes) { return build_id_hex(bytes.data(), bytes.size()); }

class Debuginfod : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (run("command -v debuginfod >/dev/null && command -v debuginfod-find >/dev/null").status != 0) return;
    const std::string served = temp_path("debuginfod-served");
    std::filesystem::create_directories(served);
    std::filesystem::copy_file(SPOOR_SYM_PIE, served + "/spoor_sym_fixture_pie",
                               std::filesystem::copy_options::overwrite_existing);
    const int port = free_port();
    ASSERT_NE(port, 0);
    url_ = "http://127.0.0.1:" + std::to_string(port);
    const std::string database = temp_path("debuginfod.sqlite");
    server_ = fork();
    ASSERT_GE(server_, 0);
    if (server_ == 0) {
      const std::string port_text = std::to_string(port);
      const int quiet = open("/dev/null", O_WRONLY);
      dup2(quiet, STDOUT_FILENO);
      dup2(quiet, STDERR_FILENO);
      execlp("debuginfod", "debuginfod", "-F", served.c_str(), "-p", port_text.c_str(), "-d", database.c_str(),
             static_cast<char*>(nullptr));
      _exit(127);
    }
    // The server scans its directory after it starts listening: ready once
    // it answers for the fixture (each try with a cache of its own, since
    // the client remembers a miss).
    const std::string id = hex(build_id_of(SPOOR_SYM_PIE));
    for (int attempt = 0; attempt < 300 && !ready_; ++attempt) {
      ready_ = run("DEBUGINFOD_URLS=" + url_ + " DEBUGINFOD_CACHE_PATH='" + temp_path("poll-cache") +
                   std::to_string(attempt) + "' debuginfod-find executable " + id + " >/dev/null 2>&1")
                   .status == 0;
      if (!ready_) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(ready_) << "debuginfod at " << url_ << " did not serve the fixture within 30 s";
  }

  static void TearDownTestSuite() {
    if (server_ > 0) {
      kill(server_, SIGTERM);
      waitpid(server_, nullptr, 0);
    }
  }

  void SetUp() override {
    if (server_ <= 0) GTEST_SKIP() << "debuginfod is not installed (scripts/install-test-deps.sh installs it)";
    ASSERT_TRUE(ready_);
    // The client's cache for this test alone: a fetch is a fetch.
    cache_ = temp_path("cache-" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
    setenv("DEBUGINFOD_URLS", url_.c_str(), 1);
    setenv("DEBUGINFOD_CACHE_PATH", cache_.c_str(), 1);
  }

  void TearDown() override {
    unsetenv("DEBUGINFOD_URLS");
    unsetenv("DEBUGINFOD_CACHE_PATH");
  }

  static std::string temp_path(const std::string& name) { return spoor::test::test_temp_path(name); }

  static inline pid_t server_ = 0;
  static inline bool ready_ = false;
  static inline std::string url_;
  std::string cache_;
};

// A trace from another machine, or a program deleted since: the recorded
// path holds nothing, and the build comes from the server by its ID.
TEST_F(Debuginfod, AMissingModuleIsFetchedByItsBuildId) {
  Symbolizer symbolizer;
  expect_the_gone_pie_named(symbolizer);
  // Fetched into the client's cache, under the build ID.
  EXPECT_TRUE(std::filesystem::exists(cache_ + "/" + hex(build_id_of(SPOOR_SYM_PIE)) + "/executable"));
}

// A stripped binary on disk: libdwfl asks the server for its debug info.
// Run through `spoor symbolize` as a user would, with DEBUGINFOD_URLS set
// before the process starts (libdw reads it then).
TEST_F(Debuginfod, AStrippedBinarysDebugInfoComesFromTheServer) {
  const std::vector<uint64_t> addresses = code_addresses(SPOOR_SYM_PIE, 7);
  const std::string list = write_addresses(addresses, "debuginfod_input.txt");
  const CommandResult expected = run("addr2line -f -i -C -e '" SPOOR_SYM_PIE "' < '" + list + "'");
  const std::string stripped = kVariants + "/buildid/prog";
  const CommandResult without = run("env -u DEBUGINFOD_URLS " + kTool + " symbolize -f -i -C -e '" + stripped +
                                    "' < '" + list + "' 2>/dev/null");
  const CommandResult with = run(kTool + " symbolize -f -i -C -e '" + stripped + "' < '" + list + "' 2>&1");
  ASSERT_EQ(with.status, 0) << with.out.substr(0, 2000);
  ASSERT_FALSE(expected.out.empty());
  EXPECT_NE(without.out, expected.out);  // the stripped file alone names less
  EXPECT_EQ(with.out, expected.out);
}

// On a terminal a fetch shows libdebuginfod's progress line; into a pipe
// (the test above) it prints nothing of the sort.
TEST_F(Debuginfod, OnATerminalAFetchShowsItsProgress) {
  if (run("command -v script >/dev/null").status != 0) GTEST_SKIP() << "no script(1) to give spoor a terminal";
  char main_address[32];
  std::snprintf(main_address, sizeof main_address, "0x%" PRIx64, symbol_address(SPOOR_SYM_PIE, "main"));
  const std::string command = kTool + " symbolize -f -e " + kVariants + "/buildid/prog " + main_address;
  const CommandResult on_terminal = run("script -qec '" + command + "' /dev/null 2>&1");
  EXPECT_NE(on_terminal.out.find("Downloading"), std::string::npos) << on_terminal.out;
  unsetenv("DEBUGINFOD_CACHE_PATH");
  setenv("DEBUGINFOD_CACHE_PATH", (cache_ + "-pipe").c_str(), 1);
  const CommandResult into_pipe = run(command + " 2>&1");
  EXPECT_EQ(into_pipe.out.find("Downloading"), std::string::npos) << into_pipe.out;
  EXPECT_NE(into_pipe.out.find("main"), std::string::npos) << into_pipe.out;
}

// The server has no such build: the problem says where it was looked for.
TEST_F(Debuginfod, ABuildNoServerHoldsIsAProblemNamingTheServer) {
  Symbolizer symbolizer;
  ModuleInfo info;
  info.path = "/nonexistent/libgone.so";
  info.build_id = {0xde, 0xad, 0xbe, 0xef, 0xca, 0xfe};
  const Location& l = symbolizer.symbolize(symbolizer.add_module(info), 0x1234);
  EXPECT_FALSE(l.resolved);
  ASSERT_EQ(symbolizer.problems().size(), 1u);
  const std::string& message = symbolizer.problems()[0].message;
  EXPECT_NE(message.find("cannot read '/nonexistent/libgone.so'"), std::string::npos) << message;
  EXPECT_NE(message.find("no file with build ID deadbeefcafe"), std::string::npos) << message;
  EXPECT_NE(message.find("nor from debuginfod (" + url_ + ")"), std::string::npos) << message;
}

}  // namespace
}  // namespace spoor::symbolizer::test

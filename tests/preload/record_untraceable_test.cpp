// spoor record end to end: programs the shim cannot reach (static, setuid,
// a hidden or unreadable shim, sanitizer builds) run as they do alone and
// are named; usage errors are clear.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "record_test_support.h"
#include "run_command.h"

namespace {

namespace reader = spoor::reader;

using spoor::test::Process;
using spoor::test::run;
using namespace spoor::test::record;  // trace_path, stack_frames, count_heap, kSpoor, traced_processes

TEST(Record, AMissingProgramIsAClearError) {
  const Process r = run(kSpoor + " record -o " + trace_path("missing") + " -- /nonexistent/program");
  EXPECT_EQ(r.status, 127);
  EXPECT_NE(r.err.find("cannot run '/nonexistent/program'"), std::string::npos) << r.err;
}

TEST(Record, AStaticProgramRunsAndIsReportedUntraceable) {
  const Process r = run(kSpoor + " record -o " + trace_path("static") + " -- " + SPOOR_HEAP_COUNTS_STATIC + " 10 static");
  EXPECT_EQ(r.status, 7);
  EXPECT_EQ(r.out, "static\n");
  EXPECT_NE(r.err.find("never loaded libspoor-preload.so"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--no-preload --kernel=samples,switches,faults"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("spoor record: no process traced (the events are the recorder's own): "), std::string::npos)
      << r.err;
}

TEST(Record, AStaticChildRunsAndIsNamedInTheSummary) {
  const Process r = run(kSpoor + " record -o " + trace_path("static-child") + " -- sh -c '" +
                        SPOOR_HEAP_COUNTS_STATIC + " 10 child; echo $?'");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "child\n7\n");
  EXPECT_NE(r.err.find(std::string("not traced, but it ran: ") +
                       SPOOR_HEAP_COUNTS_STATIC + " (static binary)"),
            std::string::npos)
      << r.err;
}

TEST(Record, AProgramStartedWhereTheShimIsHiddenRunsAsUntraced) {
  // After chroot(), or in a mount namespace that hides the shim's path, the
  // loader cannot open the shim, and says so on the program's stderr. The
  // shim here is a copy (SPOOR_PRELOAD_LIB) in a directory a tmpfs then
  // covers, in a mount namespace of the test's own.
  if (geteuid() != 0 || run("unshare --mount true").status != 0) GTEST_SKIP() << "needs root for unshare --mount";
  const std::string dir = spoor::test::temp_path("hidden-shim");
  std::filesystem::create_directories(dir);
  const std::string shim = dir + "/libspoor-preload.so";
  std::filesystem::copy_file(SPOOR_SHIM, shim, std::filesystem::copy_options::overwrite_existing);
  const std::string cmd = "unshare --mount sh -c 'mount -t tmpfs spoor-hidden " + dir +
                          " && exec sh -c \"/bin/echo inside; /bin/echo again\"'";
  const Process alone = run(cmd);
  ASSERT_EQ(alone.status, 0) << alone.err;
  ASSERT_EQ(alone.out, "inside\nagain\n");
  const Process r = run("SPOOR_PRELOAD_LIB=" + shim + " " + kSpoor + " record -o " + trace_path("hidden-shim") +
                        " -- " + cmd);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, alone.out);
  EXPECT_EQ(r.err.find("ld.so"), std::string::npos) << "the programs' stderr is as untraced\n" << r.err;
  EXPECT_NE(r.err.find("not traced, but it ran: /usr/bin/sh (shim hidden by chroot/namespace)"), std::string::npos) << r.err;
  std::filesystem::remove_all(dir);
}

TEST(Record, AProgramWhoseUserMayNotReadTheShimRunsAsUntraced) {
  // A program that drops root for nobody, with the shim in a directory
  // of mode 700 (a home directory): nobody's loader cannot open it.
  if (geteuid() != 0 || run("setpriv --reuid=nobody --regid=nogroup --clear-groups true").status != 0)
    GTEST_SKIP() << "needs root and setpriv";
  const std::string dir = spoor::test::temp_path("private-shim");
  std::filesystem::create_directories(dir);
  ASSERT_EQ(chmod(dir.c_str(), 0700), 0);
  const std::string shim = dir + "/libspoor-preload.so";
  std::filesystem::copy_file(SPOOR_SHIM, shim, std::filesystem::copy_options::overwrite_existing);
  const std::string cmd = "setpriv --reuid=nobody --regid=nogroup --clear-groups sh -c 'echo as nobody'";
  const Process alone = run(cmd);
  ASSERT_EQ(alone.status, 0) << alone.err;
  const Process r = run("SPOOR_PRELOAD_LIB=" + shim + " " + kSpoor + " record -o " + trace_path("private-shim") +
                        " -- " + cmd);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, alone.out);
  EXPECT_EQ(r.err.find("ld.so"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(shim unreadable by its user)"), std::string::npos) << r.err;
  std::filesystem::remove_all(dir);
}

TEST(Record, AnUntraceableProgramWhoseExecFailedIsNotNamedAsRun) {
  // A 32-bit program on a kernel without IA-32 emulation (as here, and as
  // ldd's probe of /lib/ld-linux.so.2 meets): the exec fails, so the
  // summary must not say it ran. Its ELF header alone, made executable.
  const std::string program = spoor::test::temp_path("i386-header");
  {
    unsigned char header[52] = {0x7f, 'E', 'L', 'F', 1 /* ELFCLASS32 */, 1, 1};
    header[16] = 2;   // ET_EXEC
    header[18] = 3;   // EM_386
    std::FILE* f = std::fopen(program.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(header, 1, sizeof header, f);
    std::fclose(f);
    ASSERT_EQ(chmod(program.c_str(), 0755), 0);
  }
  const Process alone = run("sh -c '" + program + " 2>/dev/null; echo $?'");
  if (alone.out == "0\n") GTEST_SKIP() << "this kernel runs 32-bit programs";
  const Process r = run(kSpoor + " record -o " + trace_path("failed-exec") + " -- sh -c '" + program +
                        " 2>/dev/null; echo $?'");
  EXPECT_EQ(r.out, alone.out) << r.err;
  EXPECT_EQ(r.err.find("not traced, but it ran: " + program), std::string::npos) << r.err;
  std::filesystem::remove(program);
}

// A program built with gcc's -fsanitize=address or =thread links the
// sanitizer's runtime as a shared library that must load before any other:
// with the shim preloaded ahead of it, ASan refuses to start ("ASan runtime
// does not come first") and TSan crashes in an interceptor not yet set up.
// spoor record starts such a program without the shim, directly or as a
// child, so it prints and exits as it does alone, and says why it is
// missing from the trace.
TEST(Record, SanitizerBuildsRunAsTheyDoAloneAndAreNamed) {
  const std::pair<const char*, const char*> builds[] = {{SPOOR_HEAP_COUNTS_ASAN, "AddressSanitizer build"},
                                                        {SPOOR_HEAP_COUNTS_TSAN, "ThreadSanitizer build"}};
  for (const auto& [program, why] : builds) {
    SCOPED_TRACE(program);
    const Process alone = run(std::string(program) + " 10 ran");
    ASSERT_EQ(alone.out, "ran\n") << alone.err;

    const Process direct = run(kSpoor + " record -o " + trace_path("sanitizer-direct") + " -- " + program + " 10 ran");
    EXPECT_EQ(direct.status, alone.status) << direct.err;
    EXPECT_EQ(direct.out, alone.out) << direct.err;
    EXPECT_NE(direct.err.find(std::string("never loaded libspoor-preload.so (") + why), std::string::npos)
        << direct.err;

    const Process child = run(kSpoor + " record -o " + trace_path("sanitizer-child") + " -- sh -c '" + program +
                              " 10 child; echo $?'");
    EXPECT_EQ(child.status, 0) << child.err;
    EXPECT_EQ(child.out, "child\n" + std::to_string(alone.status) + "\n") << child.err;
    EXPECT_NE(child.err.find(std::string("not traced, but it ran: ") + program + " (" + why + ")"),
              std::string::npos)
        << child.err;
    // The shell around it is traced as usual.
    EXPECT_NE(child.err.find("1 process,"), std::string::npos) << child.err;
  }
  std::filesystem::remove(trace_path("sanitizer-direct"));
  std::filesystem::remove(trace_path("sanitizer-child"));
}

// A sanitizer build's shim (cmake --preset asan) needs its runtime loaded
// before it, which an uninstrumented program never does: preloaded, it
// crashed every program. spoor record refuses it, names it, and runs
// nothing. (Any file that needs libasan stands for such a shim here.)
TEST(Record, ASanitizerBuildOfTheShimIsRefusedWithoutRunningTheProgram) {
  const std::string marker = trace_path("sanitizer-shim-ran");
  std::filesystem::remove(marker);
  const Process r = run(std::string("SPOOR_PRELOAD_LIB=") + SPOOR_HEAP_COUNTS_ASAN + " " + kSpoor + " record -o " +
                        trace_path("sanitizer-shim") + " -- touch " + marker);
  EXPECT_EQ(r.status, 127) << r.err;
  EXPECT_NE(r.err.find(std::string(SPOOR_HEAP_COUNTS_ASAN) + " is a sanitizer build (AddressSanitizer build)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("cmake --preset release"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the program was not run";
  // A plain shim in the same variable records as usual.
  const Process plain = run(std::string("SPOOR_PRELOAD_LIB=") + SPOOR_SHIM + " " + kSpoor + " record -o " +
                            trace_path("sanitizer-shim") + " -- touch " + marker);
  EXPECT_EQ(plain.status, 0) << plain.err;
  EXPECT_TRUE(std::filesystem::exists(marker));
  std::filesystem::remove(marker);
  std::filesystem::remove(trace_path("sanitizer-shim"));
}

// A setuid program run by another user ignores LD_PRELOAD (the loader's
// secure mode): it runs, as the program or as a child, and the summary
// says it was not traced. Needs root, to make a root-owned setuid copy
// and to run spoor as nobody.
TEST(Record, ASetuidProgramRunsAndIsReportedUntraceable) {
  if (geteuid() != 0 || !spoor::test::have_program("setpriv")) GTEST_SKIP() << "needs root and setpriv";
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("spoor-setuid-" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::all | fs::perms::sticky_bit);
  const fs::path program = dir / "setuid_counts";
  fs::copy_file(SPOOR_HEAP_COUNTS, program, fs::copy_options::overwrite_existing);
  ASSERT_EQ(chmod(program.c_str(), 04755), 0);
  const std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups " + kSpoor + " record -o ";

  const Process direct = run(as_nobody + (dir / "direct.spoor").string() + " -- " + program.string() + " 10 ran");
  EXPECT_EQ(direct.status, 7) << "it ran, with its own exit status: " << direct.err;
  EXPECT_EQ(direct.out, "ran\n");
  EXPECT_NE(direct.err.find("never loaded libspoor-preload.so (a static or setuid program"), std::string::npos)
      << direct.err;

  const Process child =
      run(as_nobody + (dir / "child.spoor").string() + " -- sh -c '" + program.string() + " 10 child; echo $?'");
  EXPECT_EQ(child.status, 0) << child.err;
  EXPECT_EQ(child.out, "child\n7\n");
  EXPECT_NE(child.err.find("not traced, but it ran: " + program.string() +
                           " (setuid program)"),
            std::string::npos)
      << child.err;
  fs::remove_all(dir);
}

TEST(Record, UsageErrors) {
  EXPECT_EQ(run(kSpoor + " record").status, 2);
  EXPECT_EQ(run(kSpoor + " record --bogus -- true").status, 2);
  const Process bad_spec = run(kSpoor + " record -p 'Spoor.Heap:0x1:loud' -- true");
  EXPECT_EQ(bad_spec.status, 2);
  EXPECT_NE(bad_spec.err.find("loud"), std::string::npos) << bad_spec.err;
  // A name no provider of the shim has would record nothing at all.
  const Process unknown = run(kSpoor + " record -p hep -- true");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("no provider 'hep'"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("heap (Spoor.Heap)"), std::string::npos) << "it lists the names it takes";
}

}  // namespace

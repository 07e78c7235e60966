// Uses the installed headers and libraries: writes a trace with one event.
#include <cstdio>

#include "spoor/event.h"
#include "spoor/host/session.h"

SPOOR_DEFINE_PROVIDER(g_consumer, "Spoor.Test.Consumer");
SPOOR_EVENT(kHello, g_consumer, (spoor::EventInfo{.name = "Hello"}), spoor::Field<uint32_t>{"n"});

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  std::string error;
  auto session = spoor::host::Session::start({.output_path = argv[1]}, &error);
  if (!session) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  kHello.write(7);
  return session->stop().events == 1 ? 0 : 1;
}

// Compiled and linked with nothing but `pkg-config --cflags --libs spoor`.
#include "spoor/event.h"

constinit spoor::Provider g_pc{"Spoor.Test.PkgConfig"};

int main() { return spoor::register_provider(g_pc) == spoor::Status::ok ? 0 : 1; }

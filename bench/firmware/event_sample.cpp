// One 2-field event raised on its own, for counting the write fast path's
// instructions in the disassembly (bench/firmware_size.sh).
#include "spoor/event.h"

SPOOR_DECLARE_PROVIDER(g_app);
constinit spoor::Provider g_app{"Contoso.Firmware"};
SPOOR_EVENT(kSample, g_app, (spoor::EventInfo{.name = "Sample", .id = 1}),
            spoor::Field<uint32_t>{"value"}, spoor::Field<uint16_t>{"channel"});

void raise_sample(uint32_t value, uint16_t channel) { kSample.write(value, channel); }

// The example's provider and events: a job (start/stop pair sharing an
// activity ID), a counter with two fields, a message string, and a tick
// raised from the SysTick handler.
#ifndef SPOOR_FIRMWARE_EVENTS_H
#define SPOOR_FIRMWARE_EVENTS_H

#include "spoor/spoor.hpp"

namespace firmware {

inline constinit spoor::Provider g_provider{"Spoor.Firmware"};

// Start of a job. `pc`: where in the program it was raised, for
// `spoor symbolize -e firmware.elf`.
SPOOR_EVENT(kJobStart, g_provider,
            (spoor::EventInfo{.name = "JobStart", .id = 1, .opcode = spoor::Opcode::start,
                              .task = 1}),
            spoor::Field<uint32_t>{"job"}, spoor::Field<spoor::Ptr>{"pc"});

SPOOR_EVENT(kJobStop, g_provider,
            (spoor::EventInfo{.name = "JobStop", .id = 2, .opcode = spoor::Opcode::stop,
                              .task = 1}),
            spoor::Field<uint32_t>{"job"}, spoor::Field<uint32_t>{"checksum"});

SPOOR_EVENT(kCounter, g_provider, (spoor::EventInfo{.name = "Counter", .id = 3}),
            spoor::Field<uint32_t>{"index"}, spoor::Field<uint32_t>{"value"});

SPOOR_EVENT(kMessage, g_provider, (spoor::EventInfo{.name = "Message", .id = 4}),
            spoor::Field<spoor::Str>{"text"});

SPOOR_EVENT(kTick, g_provider, (spoor::EventInfo{.name = "Tick", .id = 5}),
            spoor::Field<uint32_t>{"tick"});

}  // namespace firmware

#endif  // SPOOR_FIRMWARE_EVENTS_H

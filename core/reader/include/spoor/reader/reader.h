// The whole reader API in one include.
#ifndef SPOOR_READER_READER_H
#define SPOOR_READER_READER_H

#include "spoor/reader/activity.h"
#include "spoor/reader/event.h"
#include "spoor/reader/event_reader.h"
#include "spoor/reader/guid.h"
#include "spoor/reader/model.h"
#include "spoor/reader/names.h"
#include "spoor/reader/result.h"
#include "spoor/reader/stream_stats.h"
#include "spoor/reader/trace.h"

#endif  // SPOOR_READER_READER_H

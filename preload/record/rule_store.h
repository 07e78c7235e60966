// The recording's shared store of unwind rules (../shared_rules.h), made
// once by spoor record and handed to every traced process with its region.
#ifndef SPOOR_PRELOAD_RECORD_RULE_STORE_H
#define SPOOR_PRELOAD_RECORD_RULE_STORE_H

namespace spoor::record {

// A memfd (mode 0600, close-on-exec) holding an empty store; -1 when it
// cannot be made, and the processes then build their rules alone.
int create_rule_store();

}  // namespace spoor::record

#endif  // SPOOR_PRELOAD_RECORD_RULE_STORE_H

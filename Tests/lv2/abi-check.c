/* Checks that our declaration of the LV2 core ABI (Sources/CLV2/include/lv2_core_abi.h) lays
 * out as LV2's own header does (lv2-dev's lv2/core/lv2.h): it compiles only if they agree.
 *   gcc -fsyntax-only -I Sources/CLV2/include Tests/lv2/abi-check.c */
#include <stddef.h>
#include <lv2/core/lv2.h>
#include "lv2_core_abi.h"

#define SAME(type, ours, field) \
    _Static_assert(offsetof(type, field) == offsetof(ours, field), #field " is not where LV2 puts it")
_Static_assert(sizeof(LV2_Descriptor) == sizeof(LV2Descriptor), "LV2Descriptor's size");
_Static_assert(sizeof(LV2_Feature) == sizeof(LV2Feature), "LV2Feature's size");
SAME(LV2_Descriptor, LV2Descriptor, URI);
SAME(LV2_Descriptor, LV2Descriptor, instantiate);
SAME(LV2_Descriptor, LV2Descriptor, connect_port);
SAME(LV2_Descriptor, LV2Descriptor, activate);
SAME(LV2_Descriptor, LV2Descriptor, run);
SAME(LV2_Descriptor, LV2Descriptor, deactivate);
SAME(LV2_Descriptor, LV2Descriptor, cleanup);
SAME(LV2_Descriptor, LV2Descriptor, extension_data);
SAME(LV2_Feature, LV2Feature, URI);
SAME(LV2_Feature, LV2Feature, data);

/* the function types too: assigning LV2's to ours compiles only if they match */
static void same_functions(LV2_Descriptor *theirs, LV2Descriptor *ours) {
    ours->instantiate = (LV2Handle (*)(const struct LV2Descriptor *, double, const char *, const LV2Feature *const *))theirs->instantiate;
    ours->connect_port = theirs->connect_port;
    ours->activate = theirs->activate;
    ours->run = theirs->run;
    ours->deactivate = theirs->deactivate;
    ours->cleanup = theirs->cleanup;
    ours->extension_data = theirs->extension_data;
}
const LV2_Descriptor *lv2_descriptor(uint32_t index) { (void)index; (void)same_functions; return NULL; }

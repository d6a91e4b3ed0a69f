#ifndef MIXFX_LV2_CORE_ABI_H
#define MIXFX_LV2_CORE_ABI_H

/* The few types of the LV2 core ABI a plugin library needs, declared here so that building
 * mixfx never needs lv2-dev. They follow LV2 core 1.18 (lv2/core/lv2.h, the same layout since
 * LV2 1.0): a plugin library exports `lv2_descriptor(index)`, which hands the host one
 * descriptor per plugin, a URI and seven function pointers. Named LV2Descriptor and so on
 * (without LV2's underscore) so that a C file can include both and check that the layouts are
 * equal (Tests/lv2/abi-check.c). */

#include <stdint.h>

/* An instance, opaque to the host (LV2_Handle). */
typedef void *LV2Handle;

/* A feature the host offers to `instantiate` (LV2_Feature): its URI and its data. */
typedef struct {
    const char *URI;
    void *data;
} LV2Feature;

/* One plugin (LV2_Descriptor). `features` is a NULL-terminated array; `run` takes the frame
 * count ("sample_count"); `activate` resets all state that depends on the instance's history. */
typedef struct LV2Descriptor {
    const char *URI;
    LV2Handle (*instantiate)(const struct LV2Descriptor *descriptor, double sample_rate,
                             const char *bundle_path, const LV2Feature *const *features);
    void (*connect_port)(LV2Handle instance, uint32_t port, void *data_location);
    void (*activate)(LV2Handle instance);
    void (*run)(LV2Handle instance, uint32_t sample_count);
    void (*deactivate)(LV2Handle instance);
    void (*cleanup)(LV2Handle instance);
    const void *(*extension_data)(const char *uri);
} LV2Descriptor;

#endif

/* Built by InstallTests against an installed mixfx with `pkg-config --cflags --libs mixfx`:
 * the header and the library are found, and the library runs (a time-pitch and a shelf EQ
 * made, used and freed). Prints "ok VERSION". */
#include <mixfx.h>
#include <stdio.h>

int main(void) {
    mixfx_timepitch *tp;
    mixfx_shelf_eq *eq;
    float in[2][256] = {{0}}, out[2][256];
    const float *inputs[2] = {in[0], in[1]};
    float *outputs[2] = {out[0], out[1]};
    in[0][0] = in[1][0] = 1.0f;
    if (mixfx_timepitch_create(48000, 2, MIXFX_OFFLINE, 1024, &tp) != MIXFX_OK
        || mixfx_timepitch_set_pitch_cents(tp, 300) != MIXFX_OK
        || mixfx_timepitch_destroy(tp) != MIXFX_OK
        || mixfx_shelf_eq_create(48000, 2, &eq) != MIXFX_OK
        || mixfx_shelf_eq_set_bass(eq, 6, 100) != MIXFX_OK
        || mixfx_shelf_eq_process(eq, inputs, outputs, 256) != MIXFX_OK
        || mixfx_shelf_eq_destroy(eq) != MIXFX_OK) {
        fprintf(stderr, "%s\n", mixfx_last_error());
        return 1;
    }
    if (!(out[0][0] != 0.0f && out[0][0] == out[0][0])) { fprintf(stderr, "the EQ lost the impulse\n"); return 1; }
    printf("ok %s\n", mixfx_version());
    return 0;
}

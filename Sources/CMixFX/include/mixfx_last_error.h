/* Internal to libmixfx (not installed; mixfx.h is the API): how the Swift side records the
 * calling thread's message for mixfx_last_error(). */
#ifndef MIXFX_LAST_ERROR_H
#define MIXFX_LAST_ERROR_H

/* Copies message (truncated to the slot, at a UTF-8 character boundary) into the calling
 * thread's slot. */
void mixfx_internal_set_last_error(const char *message);

#endif

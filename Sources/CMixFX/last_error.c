/* The calling thread's last error message (mixfx_last_error). C rather than Swift: a
 * thread-local array needs no key, no allocation per message and no destructor. */
#include <string.h>
#include "mixfx.h"
#include "mixfx_last_error.h"

/* One line naming a value and its range fits with room to spare. */
#define MESSAGE_BYTES 1024

static _Thread_local char message[MESSAGE_BYTES];

const char *mixfx_last_error(void) { return message; }

void mixfx_internal_set_last_error(const char *text) {
    size_t n = text ? strlen(text) : 0;
    if (n >= MESSAGE_BYTES) {
        n = MESSAGE_BYTES - 1;
        /* do not cut a UTF-8 character in two: back off continuation bytes */
        while (n > 0 && ((unsigned char)text[n] & 0xC0) == 0x80) n--;
    }
    if (n) memcpy(message, text, n);
    message[n] = '\0';
}

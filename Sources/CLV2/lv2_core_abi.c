// The LV2 core ABI's types are all in include/lv2_core_abi.h; a C target needs one source file.
#include "lv2_core_abi.h"

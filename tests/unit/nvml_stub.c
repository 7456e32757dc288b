/* A library that looks like NVML but has only nvmlInit_v2: gp_nvml_open must refuse it and name
 * the first function it lacks (test_nvml). */
#include "agent/nvml_abi.h"

nvmlReturn_t nvmlInit_v2(void)
{
    return NVML_SUCCESS;
}

/* What names a simulated device beside its UUID (sim_devices.c): its PCI bus id; and the
 * models the simulator knows, for tools that offer them (gctxsim_models). */
#include <stdio.h>

#include "greenctx_sim.h"
#include "sim_internal.h"

/* Slot d on bus 0x18 + 0x10 * d, as an 8-GPU HGX board numbers them ("0000:18:00.0"): the
 * same in every run, distinct per slot. */
gcu_result sim_cuDeviceGetPCIBusId(char *bus_id, int len, gcu_device dev)
{
    SIM_BEGIN(cuDeviceGetPCIBusId);
    if (!bus_id || len <= 0)
        SIM_FAIL(GCU_ERROR_INVALID_VALUE);
    SIM_CHECK(sim_check_device(dev));
    snprintf(bus_id, (size_t)len, "0000:%02x:00.0", (0x18 + 0x10 * (unsigned)dev) & 0xff);
    SIM_END();
}

GCTXSIM_API const char *gctxsim_models(void) { return sim_model_keys(); }

/* The core clock, measured: a chain of dependent integer adds, one cycle of
 * latency each, on every current x86-64 and Arm core. The TSC (or any fixed
 * reference clock) is not the core clock under turbo, power capping or a
 * hypervisor, so cycles are derived from this measurement only. */
#ifndef FLEETSCOPE_CORECLOCK_H
#define FLEETSCOPE_CORECLOCK_H

/* Core clock in GHz (cycles per ns), the best of a few ~10 ms trials. */
double coreclock_measure_ghz(void);

#endif

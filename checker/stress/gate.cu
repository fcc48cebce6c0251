/*
 * gate.cu -- the two kernels of libstress.so (stress.c does everything else).
 *
 * The gate is queued before each op the shim holds back; the signal lets
 * held work go once a poison has landed. stress.c launches them through the
 * runtime's own cudaLaunchKernel, by the addresses these functions return.
 */
#include <cuda_runtime.h>

static __device__ unsigned long long gpu_now_ns(void)
{
    unsigned long long t;

    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/*
 * Wait until the host has released stream `sid` up to `seq` and nothing
 * holds this op's slot, then `delay_ns` more. After `timeout_ns` it opens
 * anyway and says so: a wait the shim cannot see (a flag polled by the host,
 * say) makes the program slow, never hang it.
 */
__global__ void stress_gate_kernel(const volatile unsigned *rel, unsigned sid,
                                   unsigned seq, const volatile unsigned *hold,
                                   volatile unsigned *timed_out,
                                   unsigned long long delay_ns,
                                   unsigned long long timeout_ns)
{
    unsigned long long t0 = gpu_now_ns(), t1;

    while ((int)(rel[sid] - seq) < 0 || *hold != 0) {
        if (gpu_now_ns() - t0 > timeout_ns) {
            *timed_out = 1;
            break;
        }
        __nanosleep(2000);
    }
    t1 = gpu_now_ns();
    while (gpu_now_ns() - t1 < delay_ns)
        __nanosleep(1000);
}

/* Queued after a poison: the work held on it may go. */
__global__ void stress_signal_kernel(volatile unsigned *hold)
{
    __threadfence_system();
    *hold = 0;
    __threadfence_system();
}

/* The kernels' host-side handles, for cudaLaunchKernel in stress.c. */
extern "C" const void *stress_gate_fn(void)
{
    return (const void *)stress_gate_kernel;
}

extern "C" const void *stress_signal_fn(void)
{
    return (const void *)stress_signal_kernel;
}

/*
 * init_only.cu -- creates a CUDA context and does nothing else: under
 * `streamtrace run`, its extra wall time is the trace tool's fixed cost per
 * process (loading CUPTI, enabling the records, writing the file at exit).
 * Build: nvcc -o init_only init_only.cu     Exit 0, or 77 with no device.
 */
#include <cuda_runtime.h>
#include <stdio.h>

int main(void)
{
    if (cudaFree(0) != cudaSuccess) {
        fprintf(stderr, "init_only: no usable CUDA device\n");
        return 77;
    }
    return 0;
}

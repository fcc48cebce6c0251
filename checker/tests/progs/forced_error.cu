/*
 * forced_error.cu -- makes CUDA_CHECK and CUDA_CHECK_LAUNCH fire, for the
 * kit's tests of common/check.h. Works with or without a GPU: device 9999
 * never exists, and 4096 threads per block is never a valid launch; with no
 * driver at all the first call fails anyway.
 *
 *   forced_error call     CUDA_CHECK(cudaSetDevice(9999)) fails: exit 1
 *   forced_error launch   a launch with too many threads fails: exit 1
 */
#include "lab.h"

__global__ void nothing_kernel(void) { }

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "call") == 0) {
        CUDA_CHECK(cudaSetDevice(9999));
    } else if (argc == 2 && strcmp(argv[1], "launch") == 0) {
        nothing_kernel<<<1, 4096>>>();
        CUDA_CHECK_LAUNCH();
    } else {
        fprintf(stderr, "usage: forced_error call|launch\n");
        return LAB_EXIT_USAGE;
    }
    printf("no error was reported\n");
    return 0;
}

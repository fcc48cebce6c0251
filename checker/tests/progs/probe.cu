/*
 * probe.cu -- is there a usable CUDA device? Prints its name and copy-engine
 * count and exits 0, or says why not and exits 77 (lab_pick_device). The
 * kit's tests use it to decide between running GPU checks and skipping them.
 */
#include "lab.h"

int main(void)
{
    cudaDeviceProp prop = lab_pick_device();

    printf("%s, compute capability %d.%d, %d copy engine%s\n", prop.name,
           prop.major, prop.minor, prop.asyncEngineCount,
           prop.asyncEngineCount == 1 ? "" : "s");
    return 0;
}

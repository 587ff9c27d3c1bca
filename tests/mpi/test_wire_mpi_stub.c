/* test_wire_mpi_stub.c: a build without MPI (none found, or -DTRD_MPI=OFF)
 * still has the MPI wire's functions, and they say so instead of failing
 * to link or crashing. */
#include <stdio.h>
#include <string.h>

#include "wire_mpi/mpi_wire.h"

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            return 1;                                                                \
        }                                                                            \
    } while (0)

int main(void)
{
    trd_wire *w = (trd_wire *)&w; /* any non-NULL value: create must clear it */
    int comm = 0;
    CHECK(!trd_wire_mpi_available());
    CHECK(trd_wire_mpi_create(&w, &comm) == TRD_EUNSUPPORTED);
    CHECK(w == NULL);
    CHECK(strstr(trd_errmsg(), "built without MPI") != NULL);
    CHECK(trd_wire_mpi_set_timeout(NULL, 1.0) == TRD_EUNSUPPORTED);
    double rings = -1, mpi = -1;
    CHECK(!trd_wire_mpi_shm_probe(NULL, &rings, &mpi) && rings == 0 && mpi == 0);
    CHECK(trd_wire_mpi_choose_long_path(NULL) == TRD_OK);
    CHECK(!trd_wire_mpi_long_choice(NULL, 1 << 20) && trd_wire_mpi_long_path(NULL, true) == TRD_OK);
    printf("test_wire_mpi_stub: the MPI wire reports it is not built\n");
    return 0;
}

/* test_wire_mpi_stub.c: a build without MPI (none found, or -DTRD_MPI=OFF)
 * still has the MPI wire's functions, and they say so instead of failing
 * to link or crashing. */
#include <stdio.h>
#include <string.h>

#include "wire/mpi_wire.h"

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
    printf("test_wire_mpi_stub: the MPI wire reports it is not built\n");
    return 0;
}

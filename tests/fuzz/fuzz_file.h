/* fuzz_file.h: what the libFuzzer harnesses share.  Every loader of
 * treduce reads a path, so each input is handed to the real entry point as
 * a file: an in-memory file (memfd) reached through /proc/self/fd, written
 * anew for every input, with nothing touching the disk. */
#ifndef TRD_FUZZ_FILE_H
#define TRD_FUZZ_FILE_H

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* The path of a file holding data[0..size); aborts when the system cannot
 * make one (a harness fault, not a finding). */
static const char *fuzz_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("treduce-fuzz", 0);
        if (fd < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || (size > 0 && pwrite(fd, data, size, 0) != (ssize_t)size)) {
        perror("fuzz_file");
        abort();
    }
    return path;
}

#endif

/* Times llama.cpp's decode calls in a native binary (LD_PRELOAD), for
 * vs_speculative_simple.py: at exit, writes each llama_process call's start and end
 * (seconds, monotonic clock) to $DECODE_TIMER_OUT, one "start end" line per call. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_CALLS 65536
static double starts[MAX_CALLS], ends[MAX_CALLS];
static int n_calls;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int llama_process(void *ctx, int type, void *batch) {
    static int (*real)(void *, int, void *);
    if (!real) real = (int (*)(void *, int, void *)) dlsym(RTLD_NEXT, "llama_process");
    double t0 = now();
    int ret = real(ctx, type, batch);
    if (n_calls < MAX_CALLS) {
        starts[n_calls] = t0;
        ends[n_calls++] = now();
    }
    return ret;
}

__attribute__((destructor)) static void write_calls(void) {
    const char *path = getenv("DECODE_TIMER_OUT");
    FILE *f = path ? fopen(path, "w") : NULL;
    if (!f) return;
    for (int i = 0; i < n_calls; i++) fprintf(f, "%.9f %.9f\n", starts[i], ends[i]);
    fclose(f);
}

/* Many threads at once: no lost or leaked object. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "selftest.h"

static void *worker(void *arg)
{
    (void)arg;
    gcu_dev_resource dev = device_resource(0);
    int bad = 0;
    for (int i = 0; i < 100; i++) {
        CUcontext c;
        CUstream s;
        CUevent e;
        split_out *o = malloc(sizeof *o);
        bad |= D.cuDevicePrimaryCtxRetain(&c, 0) | D.cuCtxPushCurrent(c);
        bad |= D.cuStreamCreate(&s, 0) | D.cuEventCreate(&e, 0) | D.cuEventRecord(e, s);
        bad |= D.cuEventDestroy(e) | D.cuStreamDestroy(s);
        split(o, &dev, 0, 8, 4);
        CUgreenCtx g = make_ctx(&o->res[i % 4], 1);
        bad |= (g == NULL) | D.cuGreenCtxStreamCreate(&s, g, 1, 0) | D.cuStreamDestroy(s);
        bad |= D.cuGreenCtxDestroy(g) | D.cuCtxPopCurrent(NULL) | D.cuDevicePrimaryCtxRelease(0);
        free(o);
    }
    return (void *)(intptr_t)bad;
}

void check_threads(void)
{
    configure("h200", "13000", NULL);
    pthread_t t[8];
    for (int i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    int bad = 0;
    for (int i = 0; i < 8; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad |= (int)(intptr_t)r;
    }
    check(!bad && live("all") == 0 && live("desc") == 800, "8 threads");
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/slab_automove.c - memcached 1.6.18's automove decision (see
 * slab_automove.h for the rules).
 */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "memcached/slab_automove.h"

/* A class gives a page to the pool when it has more free chunks than this
 * many pages hold; a source keeps at least this many pages. */
#define RECLAIM_PAGES     2.5
#define SOURCE_MIN_PAGES  2
#define EVICT_SHARE_YOUNG 0.25

struct slot {
    uint64_t age;
    bool dirty;
    bool evicted;        /* evicted at all in this interval */
    float evicted_share; /* of all classes' evictions in this interval */
};

struct automove {
    unsigned window;
    double ratio;
    uint64_t runs;
    struct slot *slots; /* SLABS_MAX_CLASSES rows of window slots */
    struct automove_sample before[SLABS_MAX_CLASSES];
};

struct automove *automove_new(unsigned window, double ratio,
                              const struct automove_sample *first)
{
    struct automove *a;

    if (window == 0)
        return NULL;
    a = calloc(1, sizeof(*a));
    if (a == NULL)
        return NULL;
    a->slots = calloc((size_t)window * SLABS_MAX_CLASSES, sizeof(*a->slots));
    if (a->slots == NULL) {
        free(a);
        return NULL;
    }
    a->window = window;
    a->ratio = ratio;
    memcpy(a->before, first, sizeof(a->before));
    return a;
}

void automove_free(struct automove *a)
{
    if (a == NULL)
        return;
    free(a->slots);
    free(a);
}

/* The window's totals for one class. */
struct window_sum {
    uint64_t age, dirty, evicted;
    float evicted_share;
};

static struct window_sum window_sum(const struct slot *row, unsigned n)
{
    struct window_sum s = {0};

    for (unsigned i = 0; i < n; i++) {
        s.age += row[i].age;
        s.dirty += row[i].dirty;
        s.evicted += row[i].evicted;
        s.evicted_share += row[i].evicted_share;
    }
    return s;
}

void automove_run(struct automove *a, const struct automove_sample *now,
                  int *src, int *dst)
{
    uint64_t all_evicted = 0, oldest_age = 0, youngest_age = UINT64_MAX;
    int oldest = -1, youngest = -1;
    bool youngest_evicting = false;

    *src = *dst = -1;
    for (unsigned n = 1; n < SLABS_MAX_CLASSES; n++)
        all_evicted += now[n].evicted - a->before[n].evicted;
    a->runs++;

    for (unsigned n = 1; n < SLABS_MAX_CLASSES; n++) {
        const struct automove_sample *b = &a->before[n], *c = &now[n];
        struct slot *row = &a->slots[(size_t)n * a->window];
        struct slot *s = &row[a->runs % a->window];
        uint64_t evicted = c->evicted - b->evicted;

        *s = (struct slot){.age = c->age};
        if (evicted > 0) {
            s->evicted = s->dirty = true;
            s->evicted_share = (float)evicted / (float)all_evicted;
        }
        if (c->outofmemory > b->outofmemory || c->pages > b->pages)
            s->dirty = true;

        struct window_sum w = window_sum(row, a->window);
        uint64_t age = w.age / a->window;

        if (c->free_chunks > (double)c->perslab * RECLAIM_PAGES &&
            w.dirty == 0) {
            /* Idle memory goes back first; the other classes' slots
             * are left as they were for this run (as memcached). */
            *src = (int)n;
            *dst = 0;
            oldest = youngest = -1;
            break;
        }
        if (age > oldest_age && c->pages > SOURCE_MIN_PAGES) {
            oldest = (int)n;
            oldest_age = age;
        }
        if (age < youngest_age &&
            (w.evicted > a->window / 2 ||
             w.evicted_share / (float)a->window > EVICT_SHARE_YOUNG)) {
            youngest = (int)n;
            youngest_age = age;
            youngest_evicting = s->evicted;
        }
    }
    memcpy(a->before, now, sizeof(a->before));

    /* Decide only once the window has been filled. */
    if (youngest != -1 && oldest != -1 && a->runs > a->window &&
        youngest_evicting &&
        (double)youngest_age < (double)oldest_age * a->ratio) {
        *src = oldest;
        *dst = youngest;
    }
}

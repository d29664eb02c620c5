/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/mr.c - memory the engine maps (areas) and the MR table.
 *
 * An area is one memfd the application shares (rnic_mem_alloc memory, a
 * CQ, a QP's rings); the engine maps it at its own address and records the
 * application's address. An MR is a range of one area with a key and
 * access bits; the engine-wide MR table (indexed by key >> 8, with an 8-bit
 * tag) is what sn_xlate() reads on the data path. The tag is random for
 * each registration (1..255, never the slot's previous one, as mlx5's key
 * variant), so a stale key never names a new MR and a key cannot be
 * computed from the registration order. Eight bits are no secret, though:
 * a peer that may send requests can try all 255 tags. The defence against
 * hostile peers is the responder QP's access (rnic_qp_init_attr.access),
 * not the key. Keys are never 0 and never MLX5_INVALID_LKEY (tag >= 1).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "rdn/softnic/obj_int.h"

int sn_fail(struct sn_ctl_resp *resp, int err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(resp->msg, sizeof(resp->msg), fmt, ap);
    va_end(ap);
    resp->err = err;
    return err;
}

static bool sn_overlaps(struct sn_dev *d, uint64_t va, uint64_t len)
{
    for (struct sn_link *l = d->areas.next; l != &d->areas; l = l->next) {
        struct sn_area *a = sn_container_of(l, struct sn_area, node);

        if (va < a->app + a->len && a->app < va + len)
            return true;
    }
    return false;
}

int sn_area_new(struct sn_dev *d, int fd, uint64_t va, uint64_t len,
                bool registrable, struct sn_ctl_resp *resp,
                struct sn_area **out)
{
    struct sn_area *a;
    void *eng;
    int rc;

    if (fd < 0 || len == 0 || len % SN_PAGE || va % SN_PAGE)
        return sn_fail(resp, -EINVAL, "shared memory: bad fd or length");
    rc = sn_memfd_check(fd, len);
    if (rc < 0)
        return sn_fail(resp, rc,
                       "shared memory: not a sealed memfd of "
                       "%llu bytes",
                       (unsigned long long)len);
    if (registrable && sn_overlaps(d, va, len))
        return sn_fail(resp, -EEXIST,
                       "shared memory at %#llx overlaps "
                       "memory the device has",
                       (unsigned long long)va);
    a = calloc(1, sizeof(*a));
    if (!a)
        return sn_fail(resp, -ENOMEM, "out of memory");
    rc = sn_map(fd, len, NULL, &eng);
    if (rc < 0) {
        sn_fail(resp, rc, "engine cannot map shared memory");
        goto err_free_a;
    }
    a->fd = dup(fd);
    if (a->fd < 0) {
        rc = sn_fail(resp, -errno, "dup: out of descriptors");
        goto err_unmap;
    }
    a->app = va;
    a->len = len;
    a->eng = eng;
    a->refs = 1;
    sn_list_init(&a->node);
    if (registrable)
        sn_list_add_tail(&d->areas, &a->node);
    *out = a;
    return 0;

err_unmap:
    munmap(eng, len);
err_free_a:
    free(a);
    return rc;
}

void sn_area_unlink(struct sn_area *a)
{
    sn_list_del(&a->node);
}

void sn_area_put(struct sn_area *a)
{
    if (--a->refs > 0)
        return;
    sn_list_del(&a->node);
    munmap(a->eng, a->len);
    close(a->fd);
    free(a);
}

/* The registrable area containing va (is_mem: rnic_mem_alloc ones only). */
struct sn_area *sn_area_find(struct sn_dev *d, uint64_t va, bool is_mem)
{
    for (struct sn_link *l = d->areas.next; l != &d->areas; l = l->next) {
        struct sn_area *a = sn_container_of(l, struct sn_area, node);

        if (va >= a->app && va - a->app < a->len && (!is_mem || a->is_mem))
            return a;
    }
    return NULL;
}

int sn_mem_dereg(struct sn_dev *d, uint64_t va, struct sn_ctl_resp *resp)
{
    struct sn_area *a = sn_area_find(d, va, true);

    if (!a || a->app != va)
        return sn_fail(resp, -ENOENT,
                       "rnic_mem_free: %#llx was not "
                       "allocated by rnic_mem_alloc",
                       (unsigned long long)va);
    if (a->refs > 1)
        return sn_fail(resp, -EBUSY,
                       "rnic_mem_free: MRs still cover "
                       "this memory");
    sn_area_put(a); /* no MR: the engine cannot be using it */
    return 0;
}

/* Whether [va, va+len) overlaps the receive doorbell record of QP area a */
static bool sn_covers_rq_db(const struct sn_area *a, uint64_t va, uint64_t len)
{
    uint64_t db = a->app + offsetof(struct sn_qp_shm, rq_db);

    return va < db + sizeof(uint32_t) && db < va + len;
}

void sn_rq_db_stored(struct sn_thread *t, const struct sn_mr *mr, uint64_t addr,
                     uint64_t len)
{
    struct sn_qp *qp;

    if (!sn_covers_rq_db(mr->area, addr, len))
        return;
    qp = sn_qp_lookup(t->eng, mr->rq_db_qpn);
    if (qp && qp->area == mr->area)
        sn_poke(t, qp);
}

/* A random tag for MR slot idx: 1..255 and not the slot's previous tag. */
static uint8_t sn_mr_new_tag(struct sn_engine *e, uint32_t idx)
{
    uint8_t tag = 0;

    while (tag == 0 || tag == e->mr_tag[idx]) {
        if (getrandom(&tag, 1, GRND_NONBLOCK) != 1) /* entropy not ready */
            tag = (uint8_t)(sn_now_ns() >> 3 ^ idx);
    }
    return tag;
}

int sn_mr_reg(struct sn_dev *d, uint64_t va, uint64_t len, uint32_t access,
              struct sn_ctl_resp *resp, struct sn_mr **out)
{
    struct sn_engine *e = d->eng;
    struct sn_area *a = sn_area_find(d, va, false);
    struct sn_mr *mr;
    uint32_t idx = 0;

    if (!a || len > a->len - (va - a->app))
        return sn_fail(resp, -EINVAL,
                       "rnic_reg_mr: [%#llx, +%llu) is not "
                       "inside NIC-shared memory",
                       (unsigned long long)va, (unsigned long long)len);
    for (uint32_t n = 1; n < SN_MAX_MRS && !idx; n++) {
        uint32_t i = (e->mr_hint + n) % SN_MAX_MRS;

        if (i && !e->mrs[i])
            idx = i;
    }
    mr = idx ? calloc(1, sizeof(*mr)) : NULL;
    if (!mr)
        return sn_fail(resp, -ENOMEM, "rnic_reg_mr: MR table full");
    e->mr_hint = idx;
    e->mr_tag[idx] = sn_mr_new_tag(e, idx);
    mr->key = idx << 8 | e->mr_tag[idx];
    mr->access = access;
    mr->addr = va;
    mr->len = len;
    mr->eng = a->eng + (va - a->app);
    mr->dev = d;
    mr->area = a;
    if (a->rq_db_qpn && sn_covers_rq_db(a, va, len))
        mr->rq_db_qpn = a->rq_db_qpn;
    a->refs++;
    sn_list_add_tail(&d->mrs, &mr->node);
    store_release(&e->mrs[idx], mr);
    *out = mr;
    return 0;
}

struct sn_mr *sn_mr_find(struct sn_dev *d, uint32_t key)
{
    struct sn_mr *mr = d->eng->mrs[(key >> 8) % SN_MAX_MRS];

    return mr && mr->key == key && mr->dev == d ? mr : NULL;
}

void sn_mr_dereg(struct sn_mr *mr)
{
    struct sn_engine *e = mr->dev->eng;

    store_release(&e->mrs[(mr->key >> 8) % SN_MAX_MRS], NULL);
    sn_engine_sync(e);
    sn_list_del(&mr->node);
    sn_area_put(mr->area);
    free(mr);
}

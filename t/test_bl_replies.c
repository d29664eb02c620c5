/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_bl_replies.c - the RPC baseline server (rdn/baseline/baseline_srv.c)
 * on "softnic-inproc" against a client that sends requests but never posts a
 * receive for the replies: the replies pile up unacknowledged. The server
 * must drop that client and release every item reference it took exactly
 * once (a reference released twice, or never, corrupts the cache).
 */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "proto/barrier.h"
#include "proto/rdn_framing.h"
#include "rdn/baseline/baseline_srv.h"
#include "rdn/baseline/baseline_wire.h"
#include "rdn/chain/chain.h"
#include "t/support/testutil.h"

#define NREQ    200 /* more than the server's send ring holds */
#define DEPTH   64
#define SLOT    4096
#define WAIT_MS 10000

static struct {
    struct rdn_item *item;
    int refs[NREQ + 1]; /* puts per reference handed out */
    int ngets;
    int nputs;
} cache;

static const struct rdn_item *cache_get(void *ctx, const char *key, size_t nkey,
                                        void **ref)
{
    (void)ctx;
    (void)key;
    (void)nkey;
    if (load_seq_cst(&cache.ngets) >= NREQ) {
        *ref = NULL;
        return NULL;
    }
    *ref = &cache.refs[fetch_add_seq_cst(&cache.ngets, 1)];
    return cache.item;
}

static void cache_put(void *ctx, void *ref)
{
    (void)ctx;
    fetch_add_seq_cst((int *)ref, 1);
    fetch_add_seq_cst(&cache.nputs, 1);
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

    nanosleep(&ts, NULL);
}

static int tcp_to(int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    ck_assert_int_ge(fd, 0);
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

START_TEST(unanswered_replies_release_each_ref_once)
{
    static const struct bl_cache_ops ops = {.get = cache_get, .put = cache_put};
    struct rnic_device *sdev = NULL, *cdev = NULL;
    struct chain_q_attr qa = {.sq_wqebb = 256, .rq_wqe = 1, .cq_depth = 1024};
    struct chain_buf slots, reqs;
    struct chain_q q;
    struct bl_srv *srv;
    struct bl_hello h;
    struct bl_welcome w;
    struct rnic_addr a;
    uint16_t type;
    void *mem;
    int fd;

    ck_assert_int_eq(rnic_open("softnic-inproc", NULL, &sdev), 0);
    ck_assert_int_eq(rnic_open("softnic-inproc", NULL, &cdev), 0);
    ck_assert_int_eq(rnic_mem_alloc(sdev, 4096, &mem), 0);
    cache.item = mem;
    memset(cache.item, 0, 64);
    cache.item->stamp = 7;
    cache.item->nkey = 1;
    rdn_item_key(cache.item)[0] = 'k';
    *rdn_item_tail(cache.item) = 7;

    ck_assert_int_eq(bl_srv_open(sdev, "127.0.0.1", 0, &ops, &srv), 0);
    ck_assert_int_eq(bl_srv_expose(srv, mem, 4096), 0);
    ck_assert_int_eq(bl_srv_start(srv), 0);

    ck_assert_int_eq(chain_q_open(cdev, &qa, &q), 0);
    ck_assert_int_eq(
        chain_buf_open(cdev, (size_t)DEPTH * SLOT,
                       RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE,
                       &slots),
        0);
    ck_assert_int_eq(chain_buf_open(cdev, NREQ * sizeof(struct bl_rpc_req),
                                    RNIC_ACCESS_LOCAL_WRITE, &reqs),
                     0);
    memset(&h, 0, sizeof(h));
    ck_assert_int_eq(rnic_qp_addr(q.qp, &a), 0);
    memcpy(h.qp_addr, a.bytes, sizeof(h.qp_addr));
    h.kind = BL_RPC_EVENT;
    h.depth = DEPTH;
    h.buf_addr = (uint64_t)(uintptr_t)slots.ptr;
    h.buf_rkey = slots.mr->rkey;
    h.slot_size = SLOT;
    fd = tcp_to(bl_srv_port(srv));
    ck_assert_int_eq(ofl_wire_send(fd, BL_MSG_HELLO, &h, sizeof(h), 0), 0);
    ck_assert_int_eq(ofl_wire_recv(fd, WAIT_MS, &type, &w, sizeof(w)),
                     (int)sizeof(w));
    ck_assert_int_eq(type, BL_MSG_WELCOME);
    memcpy(a.bytes, w.qp_addr, sizeof(a.bytes));
    ck_assert_int_eq(rnic_connect(q.qp, &a), 0);

    /* Requests for the item, and no receive for any reply. */
    for (uint32_t i = 0; i < NREQ; i++) {
        struct bl_rpc_req *r = (struct bl_rpc_req *)reqs.ptr + i;
        struct rnic_sge sg;

        r->req_id = i;
        r->nkey = 1;
        r->key[0] = 'k';
        sg = chain_loc_sge(
            chain_buf_loc(&reqs, i * sizeof(*r), sizeof(struct bl_rpc_req)));
        ck_assert_int_eq(chain_send(&q, &sg, 1, 0, NULL), 0);
    }
    ck_assert_int_eq(chain_q_doorbell(&q), 0);

    /* The server drops the client by itself and releases what it took. */
    for (int t = 0; t < WAIT_MS / 10; t++) {
        int gets = load_seq_cst(&cache.ngets);

        if (gets >= DEPTH && load_seq_cst(&cache.nputs) == gets)
            break;
        nap_ms(10);
    }
    close(fd);
    bl_srv_close(srv);
    ck_assert_int_gt(cache.ngets, 0);
    ck_assert_int_eq(cache.nputs, cache.ngets);
    for (int i = 0; i < cache.ngets; i++)
        ck_assert_msg(cache.refs[i] == 1, "reference %d released %d times", i,
                      cache.refs[i]);
    chain_q_close(&q);
    chain_buf_close(&slots);
    chain_buf_close(&reqs);
    rnic_mem_free(sdev, mem);
    rnic_close(cdev);
    rnic_close(sdev);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bl_replies");
    TCase *tc = tcase_create("rpc");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, unanswered_replies_release_each_ref_once);
    suite_add_tcase(s, tc);
    return run_suite(s);
}

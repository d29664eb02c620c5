/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_softnic_handoff.c - packets handed from one engine thread to
 * another: a READ's request goes from the requester's thread to the
 * responder's and its response comes back. The hand-off must not wait for
 * the sending thread to finish its idle spin, even when the threads share
 * one CPU; a thread that sleeps must be woken by the packet; idle threads
 * must end up asleep. Asserted through the engine's per-thread counters
 * (futex sleeps), never through latencies.
 */
#include "config.h"

#include <check.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "rdn/softnic/client.h"
#include "t/support/test_softnic_util.h"

#define ALL_ACCESS                                                             \
    (RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE |                      \
     RNIC_ACCESS_REMOTE_READ | RNIC_ACCESS_REMOTE_ATOMIC)

#define NREADS     100 /* round trips per chain */
#define READ_BYTES 64
#define REMOTE_OFF 65536 /* remote slots start here in D.mem */

static struct tdev D;
static struct tq A, B; /* A reads from B; on two engine threads */

/*
 * Opens the device with at least two engine threads (a hand-off needs
 * two), spinning spin_us when idle.
 */
static void open_with_spin(const char *spin_us)
{
    const char *threads = getenv("RDN_SOFTNIC_THREADS");

    if (!threads || atoi(threads) < 2)
        setenv("RDN_SOFTNIC_THREADS", "2", 1);
    setenv("RDN_SOFTNIC_SPIN_US", spin_us, 1);
    tdev_open(&D, NULL, 1 << 20, ALL_ACCESS);
    /* QPs go to engine threads round robin: A and B differ. */
    tq_create(&A, &D, 0, 256, 0);
    tq_create(&B, &D, 0, 64, 0);
    tq_connect(&A, &B);
}

/* Pins every engine thread to the first CPU this process may use. */
static void pin_engine_together(void)
{
    cpu_set_t set;
    char cpu[16];
    int c;

    ck_assert_int_eq(sched_getaffinity(0, sizeof(set), &set), 0);
    for (c = 0; c < CPU_SETSIZE && !CPU_ISSET(c, &set); c++)
        ;
    ck_assert_int_lt(c, CPU_SETSIZE);
    snprintf(cpu, sizeof(cpu), "%d", c);
    setenv("RDN_SOFTNIC_CPUS", cpu, 1);
}

static void setup_shared_cpu(void)
{
    pin_engine_together();
    open_with_spin("1000");
}

static void setup_no_spin(void)
{
    unsetenv("RDN_SOFTNIC_CPUS");
    open_with_spin("0");
}

static void teardown(void)
{
    unsetenv("RDN_SOFTNIC_SPIN_US");
    unsetenv("RDN_SOFTNIC_CPUS");
    tdev_close(&D);
}

/* Sums the engine threads' counters; returns how many threads there are. */
static unsigned engine_stats(uint64_t *sleeps, unsigned *asleep)
{
    struct sn_thread_stats st;
    unsigned n = 0;

    *sleeps = 0;
    *asleep = 0;
    while (sn_client_thread_stats(D.dev, n, &st) == 0) {
        *sleeps += st.sleeps;
        *asleep += st.asleep;
        n++;
    }
    return n;
}

/*
 * Posts NREADS READs from A to B, each fenced behind the previous one (so
 * every one is a full round trip between the two threads), only the last
 * signaled; rings once, waits for it and checks every byte read.
 */
static void run_read_chain(uint8_t seed)
{
    uint8_t *local = D.mem, *remote = D.mem + REMOTE_OFF;
    struct rnic_wc wc;
    struct tw w;

    for (size_t i = 0; i < NREADS * READ_BYTES; i++)
        remote[i] = (uint8_t)(seed + i * 13);
    memset(local, 0, NREADS * READ_BYTES);
    for (unsigned i = 0; i < NREADS; i++) {
        uint8_t flags = MLX5_WQE_CTRL_FENCE;

        if (i == NREADS - 1)
            flags |= MLX5_WQE_CTRL_CQ_UPDATE;
        tw_ctrl(&w, MLX5_OPCODE_RDMA_READ, flags);
        tw_raddr(&w, (uintptr_t)(remote + i * READ_BYTES), D.mr->rkey);
        tw_data(&w, READ_BYTES, D.mr->lkey, local + i * READ_BYTES);
        tq_post(&A, &w);
    }
    tq_ring(&A);
    ck_assert_int_eq(tpoll(D.scq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(wc.opcode, RNIC_WC_RDMA_READ);
    ck_assert_mem_eq(local, remote, NREADS * READ_BYTES);
}

/*
 * All engine threads on one CPU, spinning 1 ms when idle: a thread that
 * handed a packet to a peer and spins must let the peer run. If it did not,
 * each hand-off would wait until the sender's spin ended and it went to
 * sleep (at least one futex sleep per round trip); with the CPU handed
 * over, the chain runs without sleeping, except around preemptions longer
 * than the spin on a loaded machine.
 */
START_TEST(handoff_on_shared_cpu_needs_no_sleep)
{
    uint64_t before, after;
    unsigned asleep, n;

    run_read_chain(1); /* warm up: pools, first wake-ups */
    n = engine_stats(&before, &asleep);
    ck_assert_uint_ge(n, 2);
    run_read_chain(2);
    engine_stats(&after, &asleep);
    ck_assert_msg(after - before < NREADS / 4,
                  "%llu futex sleeps for %d cross-thread round trips",
                  (unsigned long long)(after - before), NREADS);
}
END_TEST

/*
 * No spin at all: every thread sleeps as soon as it is idle, so every
 * hand-off goes to a sleeping thread, which the packet must wake.
 */
START_TEST(packet_wakes_sleeping_thread)
{
    uint64_t before, after;
    unsigned asleep;

    engine_stats(&before, &asleep);
    run_read_chain(3);
    engine_stats(&after, &asleep);
    ck_assert_uint_ge(after - before, 2);
}
END_TEST

/* Idle threads stop spinning: after the work, every one is asleep. */
START_TEST(idle_threads_fall_asleep)
{
    uint64_t end, sleeps;
    unsigned asleep = 0, n;
    struct timespec ts;

    run_read_chain(4);
    clock_gettime(CLOCK_MONOTONIC, &ts);
    end = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000 + TMS;
    do {
        struct timespec pause = {0, 1000000};

        nanosleep(&pause, NULL);
        n = engine_stats(&sleeps, &asleep);
        clock_gettime(CLOCK_MONOTONIC, &ts);
    } while (asleep < n &&
             (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000 < end);
    ck_assert_uint_eq(asleep, n);
}
END_TEST

static Suite *handoff_suite(void)
{
    Suite *s = suite_create("softnic_handoff");
    TCase *shared = tcase_create("shared_cpu");
    TCase *nospin = tcase_create("no_spin");

    tcase_add_checked_fixture(shared, setup_shared_cpu, teardown);
    tcase_set_timeout(shared, 30);
    tcase_add_test(shared, handoff_on_shared_cpu_needs_no_sleep);
    tcase_add_test(shared, idle_threads_fall_asleep);
    suite_add_tcase(s, shared);
    tcase_add_checked_fixture(nospin, setup_no_spin, teardown);
    tcase_set_timeout(nospin, 30);
    tcase_add_test(nospin, packet_wakes_sleeping_thread);
    suite_add_tcase(s, nospin);
    return s;
}

int main(void)
{
    /* A hand-off needs two engine threads. */
    return trun(handoff_suite, "2,3");
}

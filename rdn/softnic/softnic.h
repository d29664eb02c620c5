/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/softnic.h - softnic's two providers for rdn/rnic/rnic.c:
 * "softnic-inproc" (an engine inside the calling process) and "softnic"
 * (the rdn-nicd daemon, started if absent).
 */
#ifndef RDN_SOFTNIC_SOFTNIC_H
#define RDN_SOFTNIC_SOFTNIC_H

#include "rdn/rnic/provider.h"

/*
 * rnic_open() tries these in its provider list. Each open() answers
 * -ENODEV for a name that is not its own ("softnic-inproc", "softnic"),
 * otherwise rnic_open()'s contract (rdn/rnic/rnic.h) holds. Any thread.
 */
extern const struct rnic_provider sn_provider_inproc;
extern const struct rnic_provider sn_provider_daemon;

#endif /* RDN_SOFTNIC_SOFTNIC_H */

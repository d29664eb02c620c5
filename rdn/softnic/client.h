/*
 * rdn/softnic/client.h - the application side of softnic, shared by both
 * providers: a transport carries control requests (a direct call into an
 * in-process engine, or rdn-nicd's socket); everything else goes through
 * shared memory.
 */
#ifndef RDN_SOFTNIC_CLIENT_H
#define RDN_SOFTNIC_CLIENT_H

#include "rdn/provider.h"
#include "rdn/softnic/ctl.h"

struct sn_transport {
    /* Sends req (with fd_in if >= 0), fills resp and *fd_out (or -1). */
    int (*call)(struct sn_transport *tp, const struct sn_ctl_req *req,
                int fd_in, struct sn_ctl_resp *resp, int *fd_out);
    void (*close)(struct sn_transport *tp);
    int persistence; /* the transport's engine outlives the process */
};

/*
 * Opens a device named name over tp (which it owns from then on, even on
 * failure): HELLO, map the control page, DEV_OPEN with opts and the
 * RDN_SOFTNIC_* environment.
 */
int sn_client_open(const char *name, struct sn_transport *tp,
                   const struct rnic_open_opts *opts, struct rnic_device **out);

#endif /* RDN_SOFTNIC_CLIENT_H */

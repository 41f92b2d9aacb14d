/*
 * stub.c - placeholder p2p layer so other layers can link while the real
 * channels are written. Every call reports HOP_ERR_NOT_SUPPORTED.
 */
#include <hop/hop.h>

#include "core/core.h"
#include "p2p/p2p.h"
#include "p2p/request.h"

int hop_p2p_init(struct hop_comm *comm) { (void)comm; return 0; }
void hop_p2p_fini(struct hop_comm *comm) { (void)comm; }
int hop_p2p_isend(struct hop_comm *comm, struct hop_p2p_req *req, int peer,
		  uint64_t tag, const void *buf, size_t len, uint32_t sig)
{ (void)comm; (void)req; (void)peer; (void)tag; (void)buf; (void)len; (void)sig; return HOP_ERR_NOT_SUPPORTED; }
int hop_p2p_irecv(struct hop_comm *comm, struct hop_p2p_req *req, int peer,
		  uint64_t tag, void *buf, size_t len, uint32_t sig)
{ (void)comm; (void)req; (void)peer; (void)tag; (void)buf; (void)len; (void)sig; return HOP_ERR_NOT_SUPPORTED; }
int hop_p2p_progress(struct hop_comm *comm) { (void)comm; return 0; }
int hop_p2p_wait_until(struct hop_comm *comm, int (*done)(void *arg), void *arg, const char *what)
{ (void)comm; (void)done; (void)arg; (void)what; return HOP_ERR_NOT_SUPPORTED; }
int hop_p2p_wait(struct hop_comm *comm, struct hop_p2p_req *req) { (void)comm; (void)req; return HOP_ERR_NOT_SUPPORTED; }
int hop_p2p_put(struct hop_comm *comm, struct hop_prov_mr *lmr, const void *src, size_t len, int peer,
		uint64_t raddr, uint64_t rkey, uint32_t imm)
{ (void)comm; (void)lmr; (void)src; (void)len; (void)peer; (void)raddr; (void)rkey; (void)imm; return HOP_ERR_NOT_SUPPORTED; }
int hop_p2p_wait_imm(struct hop_comm *comm, int peer, uint32_t *imm, int *source, size_t *bytes)
{ (void)comm; (void)peer; (void)imm; (void)source; (void)bytes; return HOP_ERR_NOT_SUPPORTED; }
int hop_p2p_reg_cached(struct hop_comm *comm, void *addr, size_t len, unsigned access, struct hop_prov_mr **out)
{ (void)comm; (void)addr; (void)len; (void)access; (void)out; return HOP_ERR_NOT_SUPPORTED; }
struct hop_request *hop_request_get(struct hop_comm *comm, int kind) { (void)comm; (void)kind; return NULL; }
void hop_request_put(struct hop_request *req) { (void)req; }

int hop_send(hop_comm_t *comm, const void *buf, size_t len, int peer, int tag)
{ (void)comm; (void)buf; (void)len; (void)peer; (void)tag; return HOP_ERR_NOT_SUPPORTED; }
int hop_recv(hop_comm_t *comm, void *buf, size_t len, int peer, int tag, hop_status_t *status)
{ (void)comm; (void)buf; (void)len; (void)peer; (void)tag; (void)status; return HOP_ERR_NOT_SUPPORTED; }
int hop_isend(hop_comm_t *comm, const void *buf, size_t len, int peer, int tag, hop_request_t **req)
{ (void)comm; (void)buf; (void)len; (void)peer; (void)tag; (void)req; return HOP_ERR_NOT_SUPPORTED; }
int hop_irecv(hop_comm_t *comm, void *buf, size_t len, int peer, int tag, hop_request_t **req)
{ (void)comm; (void)buf; (void)len; (void)peer; (void)tag; (void)req; return HOP_ERR_NOT_SUPPORTED; }
int hop_test(hop_request_t **req, int *done, hop_status_t *status)
{ (void)req; (void)done; (void)status; return HOP_ERR_NOT_SUPPORTED; }
int hop_wait(hop_request_t **req, hop_status_t *status) { (void)req; (void)status; return HOP_ERR_NOT_SUPPORTED; }
int hop_put(hop_comm_t *comm, hop_mr_t *local_mr, const void *src, size_t len, const hop_rkey_t *rkey,
	    uint64_t offset, uint32_t imm)
{ (void)comm; (void)local_mr; (void)src; (void)len; (void)rkey; (void)offset; (void)imm; return HOP_ERR_NOT_SUPPORTED; }
int hop_wait_imm(hop_comm_t *comm, int peer, uint32_t *imm, int *source, size_t *bytes)
{ (void)comm; (void)peer; (void)imm; (void)source; (void)bytes; return HOP_ERR_NOT_SUPPORTED; }
int hop_mem_register(hop_comm_t *comm, void *buf, size_t len, unsigned access, hop_mr_t **mr)
{ (void)comm; (void)buf; (void)len; (void)access; (void)mr; return HOP_ERR_NOT_SUPPORTED; }
int hop_mem_deregister(hop_comm_t *comm, hop_mr_t *mr) { (void)comm; (void)mr; return HOP_ERR_NOT_SUPPORTED; }
int hop_mr_rkey(const hop_mr_t *mr, hop_rkey_t *rkey) { (void)mr; (void)rkey; return HOP_ERR_NOT_SUPPORTED; }

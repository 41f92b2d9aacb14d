/*
 * tcp_plugin.c - the built-in tcp provider exported as a plugin named
 * "tcpplug": the same sources as libhop's tcp (src/transport/tcp and the
 * shared emulation pieces), linked into libhop-provider-tcpplug.so with
 * only this descriptor visible. tests/plugin/builtin_plugin.sh runs hop's
 * p2p and collective integration tests over it, which shows that a
 * provider needs nothing of hop beyond hop/provider.h.
 */
#include <hop/provider.h>

#include "transport/tcp/tcp.h"

extern const struct hop_prov_ops hop_prov_tcp;

HOP_PROV_PLUGIN("tcpplug", &hop_prov_tcp);

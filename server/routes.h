/* The routing table of spaa-relay: every endpoint, one row each. */
#ifndef SPAA_SERVER_ROUTES_H
#define SPAA_SERVER_ROUTES_H

#include <stddef.h>

#include "server/http.h"

/* The table and its length (static storage). */
extern const struct spaa_route spaa_routes[];
extern const size_t spaa_n_routes;

#endif

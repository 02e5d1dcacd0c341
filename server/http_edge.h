/* libmicrohttpd's own answers (a head over its memory, a malformed Content-Length, bad
 * chunked framing, an unknown HTTP version) made ours: JSON, once. http_edge.c defines
 * MHD_create_response_from_buffer and MHD_queue_response, which every caller in the program
 * then reaches first; see there for how and why. */
#ifndef SPAA_SERVER_HTTP_EDGE_H
#define SPAA_SERVER_HTTP_EDGE_H

/* Find libmicrohttpd's own response functions behind the definitions of http_edge.c: 0, or
 * -1 when they cannot be found (nothing could be answered; *why, when why is not NULL, says
 * so). Called once before the daemon starts; later calls return the first result. */
int http__edge_init(const char **why);

#endif

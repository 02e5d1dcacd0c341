/* libmicrohttpd's own answers made ours. libmicrohttpd 0.9.75 (Debian bookworm's) answers
 * some requests itself before any handler of ours runs: a head over its per-connection
 * memory (431, 414), a malformed or too large Content-Length (400, 413), bad chunked framing
 * (400), a malformed request line or header line (400), an HTTP version it does not speak
 * (505). Its answers are HTML, and for Content-Length it sends its status line and headers
 * twice. It has no option or callback to shape them, but it builds them by calling two of
 * its exported functions, MHD_create_response_from_buffer and MHD_queue_response, through
 * its procedure linkage table (as any shared library calls its default-visibility
 * functions), so a program that defines functions of those names receives those calls
 * (ELF symbol preemption). This file defines them, and calls the library's own (found with
 * dlsym(RTLD_NEXT)). Every call goes through unchanged but one: a response whose body is the
 * library's HTML (it makes those, and only those, from its static texts), queued on the same
 * thread right after it was made. That answer is swapped for our JSON one,
 * {"error": ..., "detail": ...}, with Connection: close, counted and logged once per
 * interval (conns.h). Where libmicrohttpd
 * would send the head twice (Content-Length), the answer is written to the socket here and
 * the socket's sending side shut, so that libmicrohttpd's copy goes nowhere.
 * tests/e2e/http_edges.sh holds each case to one JSON answer: a libmicrohttpd that stops
 * calling through its PLT fails it rather than going back to HTML unseen. */
#include "server/http_edge.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/sockios.h>
#include <time.h>

#include <microhttpd.h>

#include "base/limits.h"
#include "server/conns.h"
#include "server/log.h"

typedef struct MHD_Response *(*create_fn)(size_t, void *, enum MHD_ResponseMemoryMode);
typedef enum MHD_Result (*queue_fn)(struct MHD_Connection *, unsigned int,
                                    struct MHD_Response *);

static pthread_once_t edge_once = PTHREAD_ONCE_INIT;
static create_fn real_create; /* libmicrohttpd's, set once */
static queue_fn real_queue;
static const char *edge_why;  /* why they were not found, or NULL */

/* What libmicrohttpd's last error answer on this thread said (its HTML), between its call
 * to create the answer and its call to queue it. */
static __thread struct MHD_Response *edge_resp;
static __thread const char *edge_msg;
static __thread size_t edge_msg_len;

static void edge_find(void)
{
  real_create = (create_fn)dlsym(RTLD_NEXT, "MHD_create_response_from_buffer");
  real_queue = (queue_fn)dlsym(RTLD_NEXT, "MHD_queue_response");
  if (!real_create || !real_queue)
    edge_why = "libmicrohttpd's MHD_queue_response was not found behind the server's own "
               "(is libmicrohttpd linked statically?)";
}

int http__edge_init(const char **why)
{
  pthread_once(&edge_once, edge_find);
  if (why)
    *why = edge_why;
  return edge_why ? -1 : 0;
}

/* Whether libmicrohttpd's text for the answer names s. */
static int msg_has(const char *s)
{
  size_t n = strlen(s), i;
  for (i = 0; edge_msg && i + n <= edge_msg_len; i++)
    if (memcmp(edge_msg + i, s, n) == 0)
      return 1;
  return 0;
}

/* Our error code and detail for libmicrohttpd's answer (status and its text): 1 when its
 * head would go out twice (the Content-Length answers), else 0. */
static int edge_kind(unsigned status, const char **error, char *detail, size_t n)
{
  int twice = 0;
  *error = "bad_request";
  switch (status) {
  case 431:
    *error = "headers_too_large";
    snprintf(detail, n, "the request head is over the %d-byte cap (it does not fit in the %zu "
             "bytes a connection reads a head into)", SPAA_HTTP_MAX_HEAD, SPAA_HTTP_MHD_MEMORY);
    break;
  case 414:
    *error = "uri_too_long";
    snprintf(detail, n, "the request line is over the %d-byte cap on a URI (it does not fit in "
             "the %zu bytes a connection reads a head into)", SPAA_HTTP_MAX_URI,
             SPAA_HTTP_MHD_MEMORY);
    break;
  case 413:
    *error = "payload_too_large";
    twice = msg_has("Content-Length");
    snprintf(detail, n, "%s", twice ? "the Content-Length header is larger than any body "
             "(it does not fit in 64 bits)" : "a chunk's size is larger than any body (it does "
             "not fit in 64 bits)");
    break;
  case 505:
    *error = "http_version_not_supported";
    snprintf(detail, n, "only HTTP/1.0 and HTTP/1.1 are served on this port");
    break;
  case 400:
    if (msg_has("chunked"))
      snprintf(detail, n, "the chunked body is malformed: each chunk starts with its size in "
               "hexadecimal and a line end, and ends with a line end");
    else if ((twice = msg_has("Content-Length")))
      snprintf(detail, n, "the Content-Length header is not a length: one decimal number of "
               "bytes is expected");
    else if (msg_has("Host"))
      snprintf(detail, n, "an HTTP/1.1 request must carry a Host header");
    else
      snprintf(detail, n, "the request line or a header line is malformed");
    break;
  default:
    *error = status >= 500 ? "internal" : "bad_request";
    snprintf(detail, n, "the request could not be read (HTTP status %u)", status);
  }
  return twice;
}

static const char *reason(unsigned status)
{
  switch (status) {
  case 400: return "Bad Request";
  case 413: return "Content Too Large";
  case 414: return "URI Too Long";
  case 431: return "Request Header Fields Too Large";
  case 505: return "HTTP Version Not Supported";
  default: return status >= 500 ? "Internal Server Error" : "Bad Request";
  }
}

/* Write the whole answer (head and body) to the connection's socket and shut its sending
 * side: 0, or -1 when nothing was written (bytes of an earlier answer are still waiting to
 * be sent, the send buffer lacks room, or the kernel took none). */
static int write_direct(struct MHD_Connection *c, unsigned status, const char *body,
                        size_t body_len)
{
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
  char head[256], date[64];
  struct iovec iov[2];
  struct msghdr mh;
  struct tm tm;
  time_t now = time(NULL);
  int unsent = -1, unacked = -1, sndbuf = 0, hl;
  socklen_t sl = sizeof(sndbuf);
  ssize_t sent;
  /* an earlier answer wholly handed to the network, and room for this one beside what the
   * peer has not acknowledged yet: the kernel takes all of it at once */
  if (!ci || ioctl(ci->connect_fd, SIOCOUTQNSD, &unsent) || unsent != 0 ||
      ioctl(ci->connect_fd, SIOCOUTQ, &unacked) || unacked < 0 ||
      getsockopt(ci->connect_fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &sl) ||
      (size_t)sndbuf / 2 < (size_t)unacked + 1024 + body_len)
    return -1;
  gmtime_r(&now, &tm);
  strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  hl = snprintf(head, sizeof(head),
                "HTTP/1.1 %u %s\r\nDate: %s\r\nConnection: close\r\n"
                "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                status, reason(status), date, body_len);
  if (hl < 0 || (size_t)hl >= sizeof(head))
    return -1;
  iov[0].iov_base = head;
  iov[0].iov_len = (size_t)hl;
  iov[1].iov_base = (void *)body;
  iov[1].iov_len = body_len;
  memset(&mh, 0, sizeof(mh));
  mh.msg_iov = iov;
  mh.msg_iovlen = 2;
  sent = sendmsg(ci->connect_fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (sent <= 0)
    return -1;
  /* all of it, or a part: either way nothing more may follow on this connection */
  shutdown(ci->connect_fd, SHUT_WR);
  return 0;
}

/* A response being made: libmicrohttpd's own error answer when its body is the library's
 * HTML (made PERSISTENT from its static texts; nothing of ours makes one so), kept for the
 * queue call that follows it on this thread. */
struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer,
                                                     enum MHD_ResponseMemoryMode mode)
{
  struct MHD_Response *r;
  if (http__edge_init(NULL))
    return NULL;
  r = real_create(size, buffer, mode);
  edge_resp = NULL;
  if (r && mode == MHD_RESPMEM_PERSISTENT && size >= 6 && memcmp(buffer, "<html>", 6) == 0) {
    edge_resp = r;
    edge_msg = buffer;
    edge_msg_len = size;
  }
  return r;
}

/* A response queued: libmicrohttpd's own error answer is swapped for ours (or ours is
 * written, see above); every other goes through as it is. */
enum MHD_Result MHD_queue_response(struct MHD_Connection *c, unsigned int status,
                                   struct MHD_Response *r)
{
  const union MHD_ConnectionInfo *ci;
  const char *error;
  char detail[256], body[400];
  struct MHD_Response *ours = NULL;
  enum MHD_Result ok;
  int len, twice;
  if (http__edge_init(NULL))
    return MHD_NO;
  if (!r || r != edge_resp)
    return real_queue(c, status, r);
  edge_resp = NULL;
  twice = edge_kind(status, &error, detail, sizeof(detail));
  edge_msg = NULL;
  edge_msg_len = 0;
  len = snprintf(body, sizeof(body), "{\"error\":\"%s\",\"detail\":\"%s\"}", error, detail);
  ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  spaa_conn_edge(ci ? ci->socket_context : NULL, status);
  spaa_log(SPAA_LOG_DEBUG, "request", "method=- path=\"-\" status=%u route=\"-\" "
           "answer=\"%s\" by=libmicrohttpd", status, detail);
  if (twice && write_direct(c, status, body, (size_t)len) == 0)
    return real_queue(c, status, r); /* its copy goes to a socket shut for sending */
  if (len > 0 && (size_t)len < sizeof(body))
    ours = real_create((size_t)len, body, MHD_RESPMEM_MUST_COPY);
  if (!ours)
    return real_queue(c, status, r);
  MHD_add_response_header(ours, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
  MHD_add_response_header(ours, MHD_HTTP_HEADER_CONNECTION, "close");
  ok = real_queue(c, status, ours);
  MHD_destroy_response(ours);
  return ok;
}

/* spaa-relay healthcheck [--url URL] [--timeout SECONDS]: GET a URL of a running server
 * (default http://127.0.0.1:8080/readyz) and exit 0 on 200, 1 on anything else, so that a
 * container HEALTHCHECK or a supervisor needs no curl in the image. Plain HTTP/1.0 only. */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "config/suggest.h"
#include "server/cli.h"

#define HC_DEFAULT_URL "http://127.0.0.1:8080/readyz"
#define HC_MAX_HOST 256
#define HC_MAX_PATH 1024

static const char hc_usage[] =
    "usage: spaa-relay healthcheck [--url URL] [--timeout SECONDS]\n"
    "  GET URL (default " HC_DEFAULT_URL ") and exit 0 when the answer is 200,\n"
    "  1 otherwise (not listening, no answer within the timeout, 503 not ready), 2 on a usage\n"
    "  error. URL: http://HOST:PORT/PATH (HOST a name, an IPv4 address or [IPv6]).\n"
    "  --url URL          what to ask; /readyz is 200 once the store is open and its writer\n"
    "                     alive, /healthz as soon as the process serves HTTP\n"
    "  --timeout SECONDS  connect and answer deadline, 1..60 (default 3)\n"
    "  -h, --help         this text\n";

/* http://HOST[:PORT][/PATH] into its parts. 0 or -1. */
static int split_url(const char *url, char *host, char *port, char *path)
{
  const char *h, *end, *colon;
  if (strncmp(url, "http://", 7) != 0)
    return -1;
  h = url + 7;
  end = h + strcspn(h, "/");
  if (*h == '[') {
    const char *close = memchr(h, ']', (size_t)(end - h));
    if (!close)
      return -1;
    colon = close[1] == ':' ? close + 1 : NULL;
    snprintf(host, HC_MAX_HOST, "%.*s", (int)(close - h - 1), h + 1);
  } else {
    colon = memchr(h, ':', (size_t)(end - h));
    snprintf(host, HC_MAX_HOST, "%.*s", (int)((colon ? colon : end) - h), h);
  }
  if (!host[0] || (size_t)(end - h) >= HC_MAX_HOST || strlen(end) >= HC_MAX_PATH)
    return -1;
  snprintf(port, 8, "%.*s", colon ? (int)(end - colon - 1) : 2, colon ? colon + 1 : "80");
  if (!port[0] || strspn(port, "0123456789") != strlen(port))
    return -1;
  snprintf(path, HC_MAX_PATH, "%s", *end ? end : "/");
  return 0;
}

/* Connect to host:port within `timeout` seconds; a socket or -1 (message printed). */
static int hc_connect(const char *host, const char *port, int timeout)
{
  struct addrinfo hints, *res = NULL, *ai;
  struct timeval tv = {timeout, 0};
  int fd = -1, rc;
  memset(&hints, 0, sizeof(hints));
  hints.ai_socktype = SOCK_STREAM;
  if ((rc = getaddrinfo(host, port, &hints, &res))) {
    fprintf(stderr, "spaa-relay healthcheck: %s: %s\n", host, gai_strerror(rc));
    return -1;
  }
  for (ai = res; ai; ai = ai->ai_next) {
    if ((fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol)) < 0)
      continue;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
      break;
    close(fd);
    fd = -1;
  }
  if (fd < 0)
    fprintf(stderr, "spaa-relay healthcheck: cannot connect to %s port %s: %s\n", host, port,
            strerror(errno));
  freeaddrinfo(res);
  return fd;
}

/* One GET; the status code, or -1 (message printed). */
static int hc_get(const char *host, const char *port, const char *path, int timeout)
{
  char req[HC_MAX_PATH + HC_MAX_HOST + 64], resp[512];
  size_t got = 0;
  int fd, n, status = -1;
  if ((fd = hc_connect(host, port, timeout)) < 0)
    return -1;
  n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: %s\r\nConnection: close\r\n\r\n",
               path, host);
  if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
    fprintf(stderr, "spaa-relay healthcheck: send: %s\n", strerror(errno));
    goto out;
  }
  while (got < sizeof(resp) - 1 && !memchr(resp, '\n', got)) {
    ssize_t r = recv(fd, resp + got, sizeof(resp) - 1 - got, 0);
    if (r <= 0)
      break;
    got += (size_t)r;
  }
  resp[got] = 0;
  if (sscanf(resp, "HTTP/%*d.%*d %d", &status) != 1) {
    fprintf(stderr, "spaa-relay healthcheck: no HTTP answer from %s port %s%s\n", host, port,
            got ? "" : " (timed out or closed)");
    status = -1;
  }
out:
  close(fd);
  return status;
}

int spaa_cmd_healthcheck(int argc, char **argv)
{
  static const char *const flags[] = {"--url", "--timeout", "--help"};
  const char *url = HC_DEFAULT_URL;
  char host[HC_MAX_HOST], port[8], path[HC_MAX_PATH];
  int i, timeout = 3, status;
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(hc_usage, stdout);
      return 0;
    }
    if ((!strcmp(a, "--url") || !strcmp(a, "--timeout")) && i + 1 < argc) {
      if (!strcmp(a, "--url"))
        url = argv[++i];
      else if ((timeout = atoi(argv[++i])) < 1 || timeout > 60) {
        fprintf(stderr, "spaa-relay healthcheck: --timeout wants 1..60, not '%s'\n", argv[i]);
        return 2;
      }
      continue;
    }
    spaa_cli_bad_option("healthcheck", a, flags, sizeof(flags) / sizeof(flags[0]), hc_usage);
    return 2;
  }
  if (split_url(url, host, port, path)) {
    fprintf(stderr, "spaa-relay healthcheck: bad URL '%s': expected http://HOST:PORT/PATH\n",
            url);
    return 2;
  }
  status = hc_get(host, port, path, timeout);
  if (status == 200) {
    printf("%s: 200\n", url);
    return 0;
  }
  if (status > 0)
    fprintf(stderr, "spaa-relay healthcheck: %s answered %d\n", url, status);
  return 1;
}

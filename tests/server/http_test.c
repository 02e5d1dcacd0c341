/* server/http.c: path normalization, route matching (params, slashes, 405 + Allow), auth
 * helpers, error bodies; then a live daemon on a free port with a test routing table,
 * spoken to over raw sockets: caps (Content-Length and chunked), decoding, custom error
 * dialects, raw bodies, large bodies kept in a file, tokens and quiesce. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <zlib.h>

#include "config/config.h"
#include "server/http.h"
#include "server/log.h"

/* ---- pure parts ---------------------------------------------------------------------- */

static void test_normalize(void **state)
{
  static const struct {
    const char *in, *out;
  } t[] = {
      {"/", "/"},         {"//", "/"},           {"/a", "/a"},          {"/a/", "/a"},
      {"//a//b///", "/a/b"}, {"/api/1/envelope/", "/api/1/envelope"}, {"/a/b/c", "/a/b/c"},
  };
  char out[64];
  size_t i;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    assert_int_equal(spaa_http_normalize_path(t[i].in, out, sizeof(out)), 0);
    assert_string_equal(out, t[i].out);
  }
  assert_int_equal(spaa_http_normalize_path("a/b", out, sizeof(out)), -1);
  assert_int_equal(spaa_http_normalize_path("", out, sizeof(out)), -1);
  assert_int_equal(spaa_http_normalize_path("/0123456789", out, 8), -1);
}

static void h_dummy(const struct spaa_req *req, struct spaa_resp *resp) {}
static void h_other(const struct spaa_req *req, struct spaa_resp *resp) {}

static const struct spaa_route match_routes[] = {
    {"GET", "/healthz", h_dummy, .auth = SPAA_AUTH_NONE},
    {"GET", "/api/v1/profiles", h_dummy, .auth = SPAA_AUTH_READ},
    {"GET", "/api/v1/profiles/{id}", h_other, .auth = SPAA_AUTH_READ},
    {"GET", "/api/v1/profiles/{id}/spaa", h_dummy, .auth = SPAA_AUTH_READ},
    {"POST", "/api/{project_id}/envelope/", h_other, .auth = SPAA_AUTH_NONE},
    {"PUT", "/api/{project_id}/envelope", h_dummy, .auth = SPAA_AUTH_NONE},
    {"POST", "/x/{a}/{b}/{c}", h_dummy, .auth = SPAA_AUTH_NONE},
};
#define N_MATCH (sizeof(match_routes) / sizeof(match_routes[0]))

static const struct spaa_route *route(const char *method, const char *raw_path,
                                      struct spaa_req *req, int *known, char *allow,
                                      char *scratch)
{
  static char path[256];
  memset(req, 0, sizeof(*req));
  assert_int_equal(spaa_http_normalize_path(raw_path, path, sizeof(path)), 0);
  return spaa_http_route(match_routes, N_MATCH, method, path, scratch, req, known, allow, 64);
}

static void test_route(void **state)
{
  struct spaa_req req;
  char allow[64], scratch[256];
  int known;
  const struct spaa_route *r;

  r = route("GET", "/healthz/", &req, &known, allow, scratch);
  assert_ptr_equal(r, &match_routes[0]);
  r = route("HEAD", "//healthz", &req, &known, allow, scratch);
  assert_ptr_equal(r, &match_routes[0]);

  r = route("GET", "/api/v1/profiles/abc123", &req, &known, allow, scratch);
  assert_ptr_equal(r, &match_routes[2]);
  assert_int_equal(req.n_params, 1);
  assert_string_equal(spaa_req_param(&req, "id"), "abc123");
  assert_null(spaa_req_param(&req, "ID"));

  r = route("GET", "/api/v1/profiles//abc123/spaa/", &req, &known, allow, scratch);
  assert_ptr_equal(r, &match_routes[3]);
  assert_string_equal(spaa_req_param(&req, "id"), "abc123");

  /* the envelope pattern ends with '/': both forms match, slash runs fold */
  r = route("POST", "/api/42/envelope/", &req, &known, allow, scratch);
  assert_ptr_equal(r, &match_routes[4]);
  assert_string_equal(spaa_req_param(&req, "project_id"), "42");
  r = route("POST", "//api//42//envelope", &req, &known, allow, scratch);
  assert_ptr_equal(r, &match_routes[4]);
  r = route("PUT", "/api/42/envelope", &req, &known, allow, scratch);
  assert_ptr_equal(r, &match_routes[5]);

  r = route("POST", "/x/1/22/333", &req, &known, allow, scratch);
  assert_ptr_equal(r, &match_routes[6]);
  assert_int_equal(req.n_params, 3);
  assert_string_equal(spaa_req_param(&req, "a"), "1");
  assert_string_equal(spaa_req_param(&req, "b"), "22");
  assert_string_equal(spaa_req_param(&req, "c"), "333");

  /* 405 with the methods of every route of that path */
  r = route("DELETE", "/api/7/envelope", &req, &known, allow, scratch);
  assert_null(r);
  assert_int_equal(known, 1);
  assert_string_equal(allow, "POST, PUT");
  r = route("POST", "/healthz", &req, &known, allow, scratch);
  assert_null(r);
  assert_int_equal(known, 1);
  assert_string_equal(allow, "GET");

  /* 404 */
  static const char *const missing[] = {"/", "/health", "/healthz/x", "/api/v1",
                                        "/api/v1/profiles/a/b", "/api/v1/profiles/a/spaa/x",
                                        "/x/1/2", "/api/envelope"};
  size_t i;
  for (i = 0; i < sizeof(missing) / sizeof(missing[0]); i++) {
    r = route("GET", missing[i], &req, &known, allow, scratch);
    assert_null(r);
    if (known)
      fail_msg("%s: should be unknown", missing[i]);
    assert_string_equal(allow, "");
  }
}

static void test_ct_equal(void **state)
{
  assert_true(spaa_http_ct_equal("secret", 6, "secret", 6));
  assert_false(spaa_http_ct_equal("secreT", 6, "secret", 6));
  assert_false(spaa_http_ct_equal("secre", 5, "secret", 6));
  assert_false(spaa_http_ct_equal("secrets", 7, "secret", 6));
  assert_false(spaa_http_ct_equal("", 0, "secret", 6));
  assert_true(spaa_http_ct_equal("", 0, "", 0));
}

static void test_resp_helpers(void **state)
{
  struct spaa_resp resp;
  json_t *j;
  json_error_t je;
  int i;
  memset(&resp, 0, sizeof(resp));
  spaa_buf_init(&resp.body, 0);
  spaa_resp_error(&resp, SPAA_E_BUSY, "queue full (%d waiting)", 256);
  assert_int_equal(resp.status, 503);
  assert_string_equal(resp.content_type, "application/json");
  j = json_loadb(resp.body.p, resp.body.len, 0, &je);
  assert_non_null(j);
  assert_string_equal(json_string_value(json_object_get(j, "error")), "busy");
  assert_string_equal(json_string_value(json_object_get(j, "detail")), "queue full (256 waiting)");
  json_decref(j);
  assert_int_equal(resp.n_headers, 1);
  assert_string_equal(resp.headers[0].name, "Retry-After");
  assert_string_equal(resp.headers[0].value, "1");
  for (i = 1; i < SPAA_HTTP_MAX_HEADERS; i++)
    assert_int_equal(spaa_resp_header(&resp, "X-N", "v"), 0);
  assert_int_equal(spaa_resp_header(&resp, "X-Over", "v"), -1);
  spaa_buf_free(&resp.body);

  memset(&resp, 0, sizeof(resp));
  spaa_buf_init(&resp.body, 0);
  spaa_resp_error(&resp, SPAA_E_TOO_LARGE, "quote \" and\nnewline");
  assert_int_equal(resp.status, 413);
  assert_string_equal(resp.body.p,
                      "{\"error\":\"too_large\",\"detail\":\"quote \\\" and\\nnewline\"}");
  spaa_buf_free(&resp.body);
}

/* ---- a live daemon ----------------------------------------------------------------------- */

/* Echo: {"method","path","len","wire","decoded","file","nul","ce","params":{},"q":[...],
 * "hdr"}. */
static void h_echo(const struct spaa_req *req, struct spaa_resp *resp)
{
  json_t *o = json_object(), *params = json_object();
  size_t i;
  const char *h = spaa_req_header(req, "x-test");
  const char *one = spaa_req_query(req, "one");
  for (i = 0; i < req->n_params; i++) {
    char name[32];
    snprintf(name, sizeof(name), "%.*s", (int)req->params[i].name_len, req->params[i].name);
    json_object_set_new(params, name, json_string(req->params[i].value));
  }
  json_object_set_new(o, "method", json_string(req->method));
  json_object_set_new(o, "path", json_string(req->path));
  json_object_set_new(o, "len", json_integer((json_int_t)req->body_len));
  json_object_set_new(o, "wire", json_integer((json_int_t)req->wire_len));
  json_object_set_new(o, "decoded", json_integer(req->body_decoded));
  json_object_set_new(o, "file", json_integer(req->body_file));
  json_object_set_new(o, "nul", json_boolean(req->body[req->body_len] == 0));
  json_object_set_new(o, "ce", req->content_encoding ? json_string(req->content_encoding)
                                                     : json_null());
  json_object_set_new(o, "sum", json_integer((json_int_t)crc32(0, req->body, (uInt)req->body_len)));
  json_object_set_new(o, "params", params);
  json_object_set_new(o, "hdr", h ? json_string(h) : json_null());
  json_object_set_new(o, "one", one ? json_string(one) : json_null());
  {
    size_t n = spaa_req_query_each(req, "l", NULL, NULL);
    json_object_set_new(o, "nl", json_integer((json_int_t)n));
  }
  spaa_resp_json(resp, 200, o);
  spaa_resp_header(resp, "X-Echo", "1");
}

/* A dialect with its own error shape. */
static void dialect_error(const struct spaa_req *req, struct spaa_resp *resp, int code,
                          const char *detail)
{
  json_t *o = json_pack("{s:s,s:i}", "detail", detail, "code", spaa_err_status(code));
  spaa_resp_json(resp, spaa_err_status(code), o);
}

static const struct spaa_route live_routes[] = {
    {"POST", "/echo/{name}", h_echo, .auth = SPAA_AUTH_NONE},
    {"GET", "/echo/{name}", h_echo, .auth = SPAA_AUTH_NONE},
    {"POST", "/small", h_echo, .max_body = 100, .max_decoded = 1000,
     .on_error = dialect_error},
    {"POST", "/raw", h_echo, .raw_body = 1},
    {"GET", "/read", h_echo, .auth = SPAA_AUTH_READ},
    {"POST", "/ingest", h_echo, .auth = SPAA_AUTH_INGEST},
    {"POST", "/big", h_echo, .max_body = (size_t)16 << 20, .max_decoded = (size_t)16 << 20},
};

static struct spaa_config *cfg;
static struct spaa_http *srv;
static struct spaa_app app;
static uint16_t port;

static char data_dir[] = "/tmp/spaa-http-test-XXXXXX";

static int start(void **state)
{
  char *argv[] = {"serve", "--listen", "127.0.0.1:0", "--max-body", "64k",
                  "--max-decompressed", "256k", "--workers", "8", "--read-token", "rt-1",
                  "--ingest-token", "it-1", "--log-level", "error", "--data-dir", data_dir,
                  NULL};
  char *env[] = {NULL};
  struct spaa_err err;
  signal(SIGPIPE, SIG_IGN);
  if (!mkdtemp(data_dir))
    fail_msg("mkdtemp: %s", strerror(errno));
  if (spaa_config_load(17, argv, env, &cfg, &err))
    fail_msg("config: %s", err.msg);
  spaa_log_set_level(cfg->log_level);
  app.cfg = cfg;
  app.store = NULL;
  if (spaa_http_start(&app, live_routes, sizeof(live_routes) / sizeof(live_routes[0]), &srv,
                      &err))
    fail_msg("start: %s", err.msg);
  port = spaa_http_port(srv);
  assert_true(port > 0);
  return 0;
}

static int stop(void **state)
{
  spaa_http_stop(srv);
  spaa_config_free(cfg);
  rmdir(data_dir);
  return 0;
}

/* The names in the data directory (the body files are unlinked: none stays). */
static int dir_entries(const char *dir)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0;
  assert_non_null(d);
  while ((e = readdir(d)))
    n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  closedir(d);
  return n;
}

static int dial(void)
{
  struct sockaddr_in sa;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  memset(&sa, 0, sizeof(sa));
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
    close(fd);
    return -1;
  }
  return fd;
}

/* Send head, then body_len bytes of filler (chunked in 64 KiB chunks when chunked), then
 * read the answer until the server closes. Returns the status (0 when none came) and the
 * body in *body (static). */
static int exchange(const char *head, const void *body, size_t body_len, int chunked,
                    const char **resp_body, char **resp_all)
{
  static char buf[1 << 16];
  size_t got = 0, off = 0;
  int fd = dial(), status = 0;
  char *p;
  assert_true(fd >= 0);
  if (write(fd, head, strlen(head)) < 0)
    goto read;
  while (off < body_len) {
    size_t n = body_len - off > 65536 ? 65536 : body_len - off;
    char hdr[32];
    ssize_t w;
    if (chunked) {
      snprintf(hdr, sizeof(hdr), "%zx\r\n", n);
      if (write(fd, hdr, strlen(hdr)) < 0)
        goto read;
    }
    w = write(fd, body ? (const char *)body + off : (const char *)memset(buf, 'z', n), n);
    if (w <= 0)
      goto read;
    off += (size_t)w;
    if (chunked && write(fd, "\r\n", 2) < 0)
      goto read;
  }
  if (chunked && write(fd, "0\r\n\r\n", 5) < 0)
    goto read;
read:
  for (;;) {
    ssize_t r = read(fd, buf + got, sizeof(buf) - 1 - got);
    if (r <= 0)
      break;
    got += (size_t)r;
  }
  buf[got] = 0;
  close(fd);
  if (sscanf(buf, "HTTP/1.1 %d", &status) != 1)
    status = 0;
  p = strstr(buf, "\r\n\r\n");
  *resp_body = p ? p + 4 : "";
  if (resp_all)
    *resp_all = buf;
  return status;
}

static json_t *parse(const char *s)
{
  json_error_t je;
  json_t *j = json_loads(s, 0, &je);
  if (!j)
    fail_msg("not JSON: '%s'", s);
  return j;
}

static void test_live_echo(void **state)
{
  const char *body;
  char *all;
  json_t *j;
  int st = exchange("GET //echo/abc/?one=1&l=a&l=b&l HTTP/1.1\r\nHost: x\r\nX-Test: hi\r\n"
                    "Connection: close\r\n\r\n",
                    NULL, 0, 0, &body, &all);
  assert_int_equal(st, 200);
  assert_non_null(strstr(all, "X-Echo: 1\r\n"));
  assert_non_null(strstr(all, "Content-Type: application/json\r\n"));
  j = parse(body);
  assert_string_equal(json_string_value(json_object_get(j, "path")), "/echo/abc");
  assert_string_equal(json_string_value(json_object_get(json_object_get(j, "params"), "name")),
                      "abc");
  assert_string_equal(json_string_value(json_object_get(j, "hdr")), "hi");
  assert_string_equal(json_string_value(json_object_get(j, "one")), "1");
  assert_int_equal(json_integer_value(json_object_get(j, "nl")), 3);
  json_decref(j);
}

static void test_live_body_and_gzip(void **state)
{
  char head[256];
  const char *body;
  json_t *j;
  static char data[60000];
  uLongf gl = compressBound(sizeof(data)) + 32;
  unsigned char *gz = malloc(gl);
  z_stream zs;
  size_t i;
  for (i = 0; i < sizeof(data); i++)
    data[i] = (char)('a' + i % 7);
  /* plain body, Content-Length */
  snprintf(head, sizeof(head), "POST /echo/p HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n"
           "Connection: close\r\n\r\n", sizeof(data));
  assert_int_equal(exchange(head, data, sizeof(data), 0, &body, NULL), 200);
  j = parse(body);
  assert_int_equal(json_integer_value(json_object_get(j, "len")), sizeof(data));
  assert_int_equal(json_integer_value(json_object_get(j, "sum")),
                   crc32(0, (const Bytef *)data, sizeof(data)));
  assert_int_equal(json_integer_value(json_object_get(j, "decoded")), 0);
  json_decref(j);
  /* chunked gzip body: decoded by the core */
  memset(&zs, 0, sizeof(zs));
  deflateInit2(&zs, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
  zs.next_in = (Bytef *)data;
  zs.avail_in = sizeof(data);
  zs.next_out = gz;
  zs.avail_out = (uInt)gl;
  assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
  gl = zs.total_out;
  deflateEnd(&zs);
  assert_int_equal(exchange("POST /echo/g HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                            "Content-Encoding: gzip\r\nConnection: close\r\n\r\n",
                            gz, gl, 1, &body, NULL),
                   200);
  j = parse(body);
  assert_int_equal(json_integer_value(json_object_get(j, "len")), sizeof(data));
  assert_int_equal(json_integer_value(json_object_get(j, "wire")), gl);
  assert_int_equal(json_integer_value(json_object_get(j, "decoded")), 1);
  assert_string_equal(json_string_value(json_object_get(j, "ce")), "gzip");
  assert_int_equal(json_integer_value(json_object_get(j, "sum")),
                   crc32(0, (const Bytef *)data, sizeof(data)));
  json_decref(j);
  free(gz);
}

/* A body past SPAA_HTTP_FILE_BODY, declared so or grown so (chunked), or decoded so from its
 * Content-Encoding, reaches the handler whole, NUL-terminated, from a file that does not
 * outlive the request; a smaller one from memory; a file that cannot be made is a 503 that
 * says where and why. */
static void test_live_body_file(void **state)
{
  static const struct {
    size_t len;
    int chunked, file;
  } t[] = {
      {(size_t)5 << 20, 0, 1},
      {(size_t)5 << 20, 1, 1},
      {((size_t)4 << 20) + 1, 1, 1},
      {(size_t)3 << 20, 0, 0},
      {(size_t)3 << 20, 1, 0},
  };
  size_t i, k, max = (size_t)5 << 20;
  char *data = malloc(max), head[256], *saved;
  const char *body;
  json_t *j;
  (void)state;
  assert_non_null(data);
  for (k = 0; k < max; k++)
    data[k] = (char)('A' + (k * 7919) % 61);
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    if (t[i].chunked)
      snprintf(head, sizeof(head), "POST /big HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: "
               "chunked\r\nConnection: close\r\n\r\n");
    else
      snprintf(head, sizeof(head), "POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n"
               "Connection: close\r\n\r\n", t[i].len);
    assert_int_equal(exchange(head, data, t[i].len, t[i].chunked, &body, NULL), 200);
    j = parse(body);
    assert_int_equal(json_integer_value(json_object_get(j, "len")), t[i].len);
    assert_int_equal(json_integer_value(json_object_get(j, "sum")),
                     crc32(0, (const Bytef *)data, (uInt)t[i].len));
    assert_int_equal(json_integer_value(json_object_get(j, "file")), t[i].file);
    assert_true(json_is_true(json_object_get(j, "nul")));
    json_decref(j);
  }
  for (k = 0; k < 500 && spaa_http_inflight(srv) != 0; k++)
    usleep(10000); /* the completion callback, which closes the file, may run just after */
  assert_int_equal(dir_entries(data_dir), 0);
  /* decoded past SPAA_HTTP_FILE_BODY: decoded into a file as well (gzip, then zlib's format
   * as deflate); a smaller result stays in memory; a result past the route's cap is 413 */
  {
    static const struct {
      size_t len;
      const char *ce;
      int file, status;
    } d[] = {
        {(size_t)5 << 20, "gzip", 1, 200},
        {(size_t)5 << 20, "deflate", 1, 200},
        {(size_t)1 << 20, "gzip", 0, 200},
        {(size_t)17 << 20, "gzip", 1, 413},
    };
    char *big = malloc((size_t)17 << 20);
    assert_non_null(big);
    for (k = 0; k < ((size_t)17 << 20); k++)
      big[k] = data[k % max];
    for (i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
      uLongf zl = compressBound((uLong)d[i].len) + 32;
      unsigned char *z = malloc(zl);
      z_stream zs;
      memset(&zs, 0, sizeof(zs));
      assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, strcmp(d[i].ce, "gzip") ? 15 : 31, 8,
                                    Z_DEFAULT_STRATEGY), Z_OK);
      zs.next_in = (Bytef *)big;
      zs.avail_in = (uInt)d[i].len;
      zs.next_out = z;
      zs.avail_out = (uInt)zl;
      assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
      zl = zs.total_out;
      deflateEnd(&zs);
      snprintf(head, sizeof(head), "POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: %lu\r\n"
               "Content-Encoding: %s\r\nConnection: close\r\n\r\n", (unsigned long)zl,
               d[i].ce);
      assert_int_equal(exchange(head, z, zl, 0, &body, NULL), d[i].status);
      free(z);
      if (d[i].status != 200) {
        assert_non_null(strstr(body, "too_large"));
        continue;
      }
      j = parse(body);
      assert_int_equal(json_integer_value(json_object_get(j, "len")), d[i].len);
      assert_int_equal(json_integer_value(json_object_get(j, "decoded")), 1);
      assert_int_equal(json_integer_value(json_object_get(j, "file")), d[i].file);
      assert_true(json_is_true(json_object_get(j, "nul")));
      assert_int_equal(json_integer_value(json_object_get(j, "sum")),
                       crc32(0, (const Bytef *)big, (uInt)d[i].len));
      json_decref(j);
    }
    free(big);
  }
  for (k = 0; k < 500 && spaa_http_inflight(srv) != 0; k++)
    usleep(10000);
  assert_int_equal(dir_entries(data_dir), 0);
  /* nowhere to put it */
  saved = cfg->data_dir;
  cfg->data_dir = "/nonexistent/spaa-data";
  snprintf(head, sizeof(head), "POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n"
           "Connection: close\r\n\r\n", max);
  assert_int_equal(exchange(head, data, max, 0, &body, NULL), 503);
  assert_non_null(strstr(body, "could not be kept in a file in /nonexistent/spaa-data"));
  cfg->data_dir = saved;
  free(data);
}

static void test_live_errors(void **state)
{
  const char *body;
  char *all;
  json_t *j;
  /* 404 and 405 */
  assert_int_equal(exchange("GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                            NULL, 0, 0, &body, NULL),
                   404);
  j = parse(body);
  assert_string_equal(json_string_value(json_object_get(j, "error")), "not_found");
  assert_string_equal(json_string_value(json_object_get(j, "detail")),
                      "no such endpoint: GET /nowhere");
  json_decref(j);
  assert_int_equal(exchange("DELETE /echo/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                            NULL, 0, 0, &body, &all),
                   405);
  assert_non_null(strstr(all, "\r\nAllow: POST, GET\r\n"));
  j = parse(body);
  assert_string_equal(json_string_value(json_object_get(j, "error")), "method");
  json_decref(j);
  /* Content-Length over the config cap, client waiting for 100-continue: 413 before the body */
  assert_int_equal(exchange("POST /echo/x HTTP/1.1\r\nHost: x\r\nContent-Length: 70000\r\n"
                            "Expect: 100-continue\r\nConnection: close\r\n\r\n",
                            NULL, 0, 0, &body, NULL),
                   413);
  j = parse(body);
  assert_string_equal(json_string_value(json_object_get(j, "detail")),
                      "the body is 70000 bytes, over the 65536-byte cap on this endpoint");
  json_decref(j);
  /* the same without Expect: the body is read, thrown away, and answered 413 at its end */
  assert_int_equal(exchange("POST /echo/x HTTP/1.1\r\nHost: x\r\nContent-Length: 70000\r\n"
                            "Connection: close\r\n\r\n",
                            NULL, 70000, 0, &body, NULL),
                   413);
  j = parse(body);
  assert_string_equal(json_string_value(json_object_get(j, "detail")),
                      "the body is 70000 bytes, over the 65536-byte cap on this endpoint");
  json_decref(j);
  /* chunked past the cap: read, thrown away, 413 at the end */
  assert_int_equal(exchange("POST /echo/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                            "Connection: close\r\n\r\n",
                            NULL, 300000, 1, &body, NULL),
                   413);
  j = parse(body);
  assert_string_equal(json_string_value(json_object_get(j, "detail")),
                      "the body passed the 65536-byte cap on this endpoint (300000 bytes "
                      "received)");
  json_decref(j);
  /* unknown coding: 415; corrupt: 400 */
  assert_int_equal(exchange("POST /echo/x HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
                            "Content-Encoding: compress\r\nConnection: close\r\n\r\n",
                            "abc", 3, 0, &body, NULL),
                   415);
  assert_int_equal(exchange("POST /echo/x HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
                            "Content-Encoding: gzip\r\nConnection: close\r\n\r\n",
                            "abc", 3, 0, &body, NULL),
                   400);
  j = parse(body);
  assert_string_equal(json_string_value(json_object_get(j, "error")), "bad_compression");
  json_decref(j);
}

static void test_live_route_caps_and_dialect(void **state)
{
  const char *body;
  json_t *j;
  static char zeros[5000];
  unsigned char gz[200];
  uLongf gl = sizeof(gz);
  /* the route's own cap (100), answered in the route's own error shape */
  assert_int_equal(exchange("POST /small HTTP/1.1\r\nHost: x\r\nContent-Length: 101\r\n"
                            "Connection: close\r\n\r\n",
                            NULL, 101, 0, &body, NULL),
                   413);
  j = parse(body);
  assert_null(json_object_get(j, "error"));
  assert_int_equal(json_integer_value(json_object_get(j, "code")), 413);
  assert_non_null(strstr(json_string_value(json_object_get(j, "detail")), "100-byte cap"));
  json_decref(j);
  /* its decoded cap (1000): 5000 zeros in a tiny zlib stream */
  assert_int_equal(compress2(gz, &gl, (const Bytef *)zeros, sizeof(zeros), 9), Z_OK);
  {
    char head[200];
    snprintf(head, sizeof(head), "POST /small HTTP/1.1\r\nHost: x\r\nContent-Length: %lu\r\n"
             "Content-Encoding: deflate\r\nConnection: close\r\n\r\n", (unsigned long)gl);
    assert_int_equal(exchange(head, gz, gl, 0, &body, NULL), 413);
    j = parse(body);
    assert_non_null(strstr(json_string_value(json_object_get(j, "detail")),
                           "deflate body decodes to more than the 1000-byte cap"));
    json_decref(j);
  }
  /* a raw route gets the bytes as sent, whatever the coding */
  assert_int_equal(exchange("POST /raw HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
                            "Content-Encoding: compress\r\nConnection: close\r\n\r\n",
                            "xyz", 3, 0, &body, NULL),
                   200);
  j = parse(body);
  assert_int_equal(json_integer_value(json_object_get(j, "len")), 3);
  assert_int_equal(json_integer_value(json_object_get(j, "decoded")), 0);
  assert_string_equal(json_string_value(json_object_get(j, "ce")), "compress");
  json_decref(j);
}

static void test_live_tokens(void **state)
{
  const char *body;
  char *all;
  json_t *j;
  assert_int_equal(exchange("GET /read HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", NULL,
                            0, 0, &body, &all),
                   401);
  assert_non_null(strstr(all, "WWW-Authenticate: Bearer\r\n"));
  j = parse(body);
  assert_string_equal(json_string_value(json_object_get(j, "error")), "unauthorized");
  json_decref(j);
  assert_int_equal(exchange("GET /read HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer rt-2\r\n"
                            "Connection: close\r\n\r\n",
                            NULL, 0, 0, &body, NULL),
                   401);
  assert_int_equal(exchange("GET /read HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer it-1\r\n"
                            "Connection: close\r\n\r\n",
                            NULL, 0, 0, &body, NULL),
                   401); /* an ingest token does not read */
  assert_int_equal(exchange("GET /read HTTP/1.1\r\nHost: x\r\nAuthorization: bearer rt-1\r\n"
                            "Connection: close\r\n\r\n",
                            NULL, 0, 0, &body, NULL),
                   200);
  /* ingest: bearer, or basic with the token as password ("user:it-1") */
  assert_int_equal(exchange("POST /ingest HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer it-1\r\n"
                            "Content-Length: 0\r\nConnection: close\r\n\r\n",
                            NULL, 0, 0, &body, NULL),
                   200);
  assert_int_equal(exchange("POST /ingest HTTP/1.1\r\nHost: x\r\n"
                            "Authorization: Basic dXNlcjppdC0x\r\n"
                            "Content-Length: 0\r\nConnection: close\r\n\r\n",
                            NULL, 0, 0, &body, NULL),
                   200);
  assert_int_equal(exchange("POST /ingest HTTP/1.1\r\nHost: x\r\n"
                            "Authorization: Basic dXNlcjppdC0y\r\n" /* user:it-2 */
                            "Content-Length: 0\r\nConnection: close\r\n\r\n",
                            NULL, 0, 0, &body, NULL),
                   401);
  /* refused from the headers: the body is never read (Content-Length far over the cap) */
  assert_int_equal(exchange("POST /ingest HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n"
                            "Connection: close\r\n\r\n",
                            NULL, 0, 0, &body, NULL),
                   401);
}

/* Far past the cap (cap + 64 MiB) a chunked sender is cut off rather than answered. */
static void test_live_drop(void **state)
{
  const char *body;
  int st = exchange("POST /echo/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                    "Connection: close\r\n\r\n",
                    NULL, (size_t)70 << 20, 1, &body, NULL);
  assert_int_equal(st, 0);
  assert_int_equal(exchange("GET /echo/after HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                            NULL, 0, 0, &body, NULL),
                   200); /* and the server goes on */
}

/* Read one answer with a Content-Length from fd into buf; returns its total length. */
static size_t read_answer(int fd, char *buf, size_t cap)
{
  size_t got = 0;
  for (;;) {
    char *end = strstr(buf, "\r\n\r\n"), *cl;
    ssize_t n;
    if (got && end && (cl = strstr(buf, "Content-Length: ")) && cl < end) {
      size_t total = (size_t)(end + 4 - buf) + strtoul(cl + 16, NULL, 10);
      if (got >= total)
        return got;
    }
    n = read(fd, buf + got, cap - 1 - got);
    if (n <= 0)
      return got;
    got += (size_t)n;
    buf[got] = 0;
  }
}

static void test_live_quiesce(void **state)
{
  const char *req = "GET /echo/k HTTP/1.1\r\nHost: x\r\n\r\n";
  char buf[4096];
  int fd = dial();
  assert_true(fd >= 0);
  /* a kept-alive connection from before quiesce... */
  memset(buf, 0, sizeof(buf));
  assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
  read_answer(fd, buf, sizeof(buf));
  assert_non_null(strstr(buf, "HTTP/1.1 200"));
  assert_null(strstr(buf, "Connection: close"));
  spaa_http_quiesce(srv);
  spaa_http_quiesce(srv); /* idempotent */
  { /* no new connections, once the polling thread let go of the listening socket */
    int i, nfd = -2;
    for (i = 0; i < 500 && (nfd = dial()) >= 0; i++) {
      close(nfd);
      usleep(10000);
    }
    assert_int_equal(nfd, -1);
  }
  /* ...is still served, and told to close */
  memset(buf, 0, sizeof(buf));
  assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
  read_answer(fd, buf, sizeof(buf));
  assert_non_null(strstr(buf, "HTTP/1.1 200"));
  assert_non_null(strstr(buf, "Connection: close\r\n"));
  assert_int_equal(read(fd, buf, sizeof(buf)), 0); /* closed by the server */
  close(fd);
  { /* the completion callback may run just after the socket closed */
    int i;
    for (i = 0; i < 500 && spaa_http_inflight(srv) != 0; i++)
      usleep(10000);
  }
  assert_int_equal(spaa_http_inflight(srv), 0);
}

int main(void)
{
  const struct CMUnitTest pure[] = {
      cmocka_unit_test(test_normalize),
      cmocka_unit_test(test_route),
      cmocka_unit_test(test_ct_equal),
      cmocka_unit_test(test_resp_helpers),
  };
  const struct CMUnitTest live[] = {
      cmocka_unit_test(test_live_echo),   cmocka_unit_test(test_live_body_and_gzip),
      cmocka_unit_test(test_live_body_file),
      cmocka_unit_test(test_live_errors), cmocka_unit_test(test_live_route_caps_and_dialect),
      cmocka_unit_test(test_live_tokens), cmocka_unit_test(test_live_drop),
      cmocka_unit_test(test_live_quiesce),
  };
  int rc = cmocka_run_group_tests_name("pure", pure, NULL, NULL);
  return rc | cmocka_run_group_tests_name("live", live, start, stop);
}

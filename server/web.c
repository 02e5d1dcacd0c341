/* Serving the embedded web page (see web.h): lookup by name, media types, ETags and the
 * headers that keep the page to its own origin's scripts and styles. */
#include "server/web.h"

#include <string.h>
#include <strings.h>

/* Scripts and styles from the page's own files only (no inline script or style element),
 * API calls to the same origin, no plugins, no framing. img-src allows blob: and data:
 * for images the page makes itself. */
#define WEB_CSP "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' " \
                "data: blob:; object-src 'none'; base-uri 'none'; form-action 'self'; "    \
                "frame-ancestors 'none'"

const struct spaa_web_file *spaa_web_find(const char *name)
{
  size_t lo = 0, hi = spaa_web_n_files;
  if (!name)
    return NULL;
  while (lo < hi) { /* the generator sorts the table by name (CMake's byte order) */
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(name, spaa_web_files[mid].name);
    if (c == 0)
      return &spaa_web_files[mid];
    if (c < 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  return NULL;
}

const char *spaa_web_media_type(const char *name)
{
  static const struct {
    const char *ext, *type;
  } types[] = {
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".ico", "image/x-icon"},
      {".json", "application/json"},
      {".txt", "text/plain; charset=utf-8"},
      {".woff2", "font/woff2"},
  };
  const char *dot = name ? strrchr(name, '.') : NULL;
  size_t i;
  for (i = 0; dot && i < sizeof(types) / sizeof(types[0]); i++)
    if (strcasecmp(dot, types[i].ext) == 0)
      return types[i].type;
  return "application/octet-stream";
}

int spaa_web_etag_match(const char *inm, const char *etag)
{
  size_t el = strlen(etag);
  const char *p = inm;
  if (!inm)
    return 0;
  while (*p) {
    const char *b = p, *e;
    size_t l;
    while (*b == ' ' || *b == '\t' || *b == ',')
      b++;
    if (!*b)
      break;
    e = strchr(b, ',');
    l = e ? (size_t)(e - b) : strlen(b);
    while (l && (b[l - 1] == ' ' || b[l - 1] == '\t'))
      l--;
    if (l == 1 && *b == '*')
      return 1;
    if (l >= 2 && b[0] == 'W' && b[1] == '/') { /* weak comparison: W/ does not matter */
      b += 2;
      l -= 2;
    }
    if (l == el && memcmp(b, etag, el) == 0)
      return 1;
    if (!e)
      break;
    p = e + 1;
  }
  return 0;
}

/* Answer file f: 304 when the client holds it already, else its bytes. */
static void answer_file(const struct spaa_req *req, struct spaa_resp *resp,
                        const struct spaa_web_file *f)
{
  if (spaa_web_etag_match(spaa_req_header(req, "If-None-Match"), f->etag)) {
    resp->status = 304;
    resp->content_type = NULL;
    resp->body.len = 0;
  } else {
    spaa_resp_bytes(resp, 200, spaa_web_media_type(f->name), f->data, f->len);
  }
  /* revalidated on every use: a new binary's page is never mixed with an old one's */
  spaa_resp_header(resp, "ETag", f->etag);
  spaa_resp_header(resp, "Cache-Control", "no-cache");
  spaa_resp_header(resp, "Content-Security-Policy", WEB_CSP);
  spaa_resp_header(resp, "X-Content-Type-Options", "nosniff");
  spaa_resp_header(resp, "Referrer-Policy", "no-referrer");
  spaa_resp_header(resp, "X-Frame-Options", "DENY");
}

void spaa_web_index(const struct spaa_req *req, struct spaa_resp *resp)
{
  const struct spaa_web_file *f = spaa_web_find("index.html");
  if (!f) {
    spaa_resp_error(resp, SPAA_E_NOT_FOUND, "this build has no web page");
    return;
  }
  answer_file(req, resp, f);
}

void spaa_web_asset(const struct spaa_req *req, struct spaa_resp *resp)
{
  const char *name = spaa_req_param(req, "file");
  const struct spaa_web_file *f = spaa_web_find(name);
  if (!f) {
    spaa_resp_error(resp, SPAA_E_NOT_FOUND, "no file '%.64s' in the web page", name ? name : "");
    return;
  }
  answer_file(req, resp, f);
}

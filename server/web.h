/* The web page (server/web/, embedded in the binary at build time by cmake/embed_web.cmake):
 * GET / answers index.html, GET /web/{file} any file of the folder, each with its media
 * type, an ETag (If-None-Match answered 304), a strict Content-Security-Policy and nosniff.
 * The page itself needs no token; the API it calls reads them as usual. */
#ifndef SPAA_SERVER_WEB_H
#define SPAA_SERVER_WEB_H

#include <stddef.h>

#include "server/http.h"

/* One embedded file. */
struct spaa_web_file {
  const char *name;          /* the file's name in server/web/ ("app.js") */
  const unsigned char *data; /* its bytes (static; a NUL follows the last one) */
  size_t len;                /* bytes in data, the NUL not counted */
  const char *etag;          /* quoted strong ETag: "\"<16 hex digits of its SHA-256>\"" */
};

/* The generated table (static storage), sorted by name. */
extern const struct spaa_web_file spaa_web_files[];
extern const size_t spaa_web_n_files;

/* The file named `name`, or NULL. */
const struct spaa_web_file *spaa_web_find(const char *name);
/* The media type of a file name by its extension ("text/javascript; charset=utf-8"...);
 * application/octet-stream for an unknown one. Static string. */
const char *spaa_web_media_type(const char *name);
/* 1 when an If-None-Match value (a list of entity tags, weak or strong, or "*") names
 * etag, 0 otherwise (NULL: 0). Weak comparison, as RFC 9110 asks for If-None-Match. */
int spaa_web_etag_match(const char *if_none_match, const char *etag);

/* GET / (index.html) and GET /web/{file}. An unknown file is a 404 JSON answer. */
void spaa_web_index(const struct spaa_req *req, struct spaa_resp *resp);
void spaa_web_asset(const struct spaa_req *req, struct spaa_resp *resp);

#endif

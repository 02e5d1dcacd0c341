/* gzip, deflate and zstd through zlib and libzstd, brotli (decoding only) through libbrotlidec
 * (see compress.h): one streaming decoder per coding, the capped one-buffer decoder driving
 * it (snappy and lz4: base/snappy_lz4, one buffer only), and the compressing sink. */
#include "base/compress.h"

#include <stdlib.h>
#include <string.h>

#include <brotli/decode.h>
#include <zlib.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_createDCtx_advanced: the decoder's allocator */
#include <zstd.h>
#include <zstd_errors.h>

#include "base/snappy_lz4.h"

#define CHUNK_MIN ((size_t)64 * 1024)  /* first output room when the size is not known */
#define ZLIB_STEP ((size_t)1 << 30)    /* zlib counts in uInt: at most 1 GiB per call */
#define SINK_CHUNK ((size_t)64 * 1024) /* compressed bytes handed downstream at a time */
#define ZSTD_WLOG_DEFAULT 27           /* zstd's own window limit without a cap */

/* ---- the decoders' memory ---------------------------------------------------------------- */

/* The decoders' allocator (spaa_decoder_alloc_set): malloc and free unless set. */
static void *plain_alloc(void *opaque, size_t n)
{
  (void)opaque;
  return malloc(n);
}

static void plain_release(void *opaque, void *p)
{
  (void)opaque;
  free(p);
}

static spaa_alloc_fn dec_alloc = plain_alloc;
static spaa_release_fn dec_release = plain_release;

void spaa_decoder_alloc_set(spaa_alloc_fn alloc, spaa_release_fn release)
{
  dec_alloc = alloc ? alloc : plain_alloc;
  dec_release = alloc && release ? release : plain_release;
}

static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
  return dec_alloc(opaque, (size_t)items * size);
}

static void z_release(voidpf opaque, voidpf p) { dec_release(opaque, p); }

static BrotliDecoderState *br_new(void)
{
  return BrotliDecoderCreateInstance(dec_alloc, dec_release, NULL);
}

static const char *const coding_names[] = {"gzip",   "deflate",         "zstd", "br",
                                           "snappy", "x-snappy-framed", "lz4"};

/* snappy and lz4: decoded by spaa_decompress only, from one buffer into one buffer. */
static int whole_only(enum spaa_coding c)
{
  return c == SPAA_CODING_SNAPPY || c == SPAA_CODING_SNAPPY_FRAMED || c == SPAA_CODING_LZ4;
}

static int no_stream(enum spaa_coding c, struct spaa_err *err)
{
  return spaa_err_set(err, SPAA_E_USAGE, 0, 0,
                      "%s is decoded from one buffer at once (spaa_decompress), not as a stream",
                      spaa_coding_name(c));
}

const char *spaa_coding_name(enum spaa_coding c)
{
  return (unsigned)c < sizeof(coding_names) / sizeof(coding_names[0]) ? coding_names[c] : "?";
}

int spaa_is_gzip(const void *buf, size_t len)
{
  const unsigned char *b = buf;
  return len >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

int spaa_is_zstd(const void *buf, size_t len)
{
  return len >= 4 && memcmp(buf, "\x28\xb5\x2f\xfd", 4) == 0;
}

/* ---- streaming decoder ----------------------------------------------------------------- */

struct spaa_dstream {
  enum spaa_coding coding;
  const char *noun;   /* what the data is, in messages: "body" (one buffer) or "input" */
  z_stream zs;        /* gzip, deflate */
  int zs_ready;       /* inflateInit2 done (on the first step: deflate reads its header) */
  ZSTD_DCtx *zd;      /* zstd */
  BrotliDecoderState *bd; /* brotli */
  size_t window;      /* zstd: the cap frames' windows must respect, in bytes (messages) */
  size_t window_max;  /* zstd: the largest window a frame may declare (1 << windowLogMax) */
  int whole;          /* the first step gets all the input (deflate: no waiting for 2 bytes) */
  int in_frame;       /* a member or frame began and has not ended */
  int ended;          /* the last step ended a member: the next one starts another */
  size_t frames;      /* members or frames that ended */
  size_t in_total;    /* input bytes consumed so far */
};

static int dstream_init(struct spaa_dstream *d, enum spaa_coding c, size_t max_window,
                        const char *noun, struct spaa_err *err)
{
  int wlog = 10; /* the smallest window zstd knows */
  memset(d, 0, sizeof(*d));
  d->coding = c;
  d->noun = noun;
  if (whole_only(c))
    return no_stream(c, err);
  if (c == SPAA_CODING_BR) {
    /* no large windows (the default): at most 16 MiB of ring buffer, whatever the stream */
    if (!(d->bd = br_new()))
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, "cannot start the br decoder");
    return 0;
  }
  if (c != SPAA_CODING_ZSTD)
    return 0;
  {
    ZSTD_customMem mem = {dec_alloc, dec_release, NULL};
    if (!(d->zd = ZSTD_createDCtx_advanced(mem)))
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, "cannot start the zstd decoder");
  }
  /* a window larger than the cap is never needed: refuse frames that ask for one */
  if (!max_window)
    max_window = (size_t)1 << ZSTD_WLOG_DEFAULT;
  while (wlog < ZSTD_WLOG_DEFAULT && ((size_t)1 << wlog) < max_window)
    wlog++;
  ZSTD_DCtx_setParameter(d->zd, ZSTD_d_windowLogMax, wlog);
  d->window = max_window;
  d->window_max = (size_t)1 << wlog;
  return 0;
}

static void dstream_end(struct spaa_dstream *d)
{
  if (d->zs_ready)
    inflateEnd(&d->zs);
  ZSTD_freeDCtx(d->zd);
  if (d->bd)
    BrotliDecoderDestroyInstance(d->bd);
  d->zs_ready = 0;
  d->zd = NULL;
  d->bd = NULL;
}

int spaa_dstream_new(enum spaa_coding c, size_t max_window, struct spaa_dstream **out,
                     struct spaa_err *err)
{
  struct spaa_dstream *d = malloc(sizeof(*d));
  int rc;
  *out = NULL;
  if (!d)
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  if ((rc = dstream_init(d, c, max_window, "input", err))) {
    free(d);
    return rc;
  }
  *out = d;
  return 0;
}

void spaa_dstream_free(struct spaa_dstream *d)
{
  if (!d)
    return;
  dstream_end(d);
  free(d);
}

/* zlib: gzip (windowBits 16+15) or deflate (zlib wrapper, or raw when the first two bytes
 * are not an RFC 1950 header, as some clients send "deflate"). */
static int step_zlib(struct spaa_dstream *d, const uint8_t *in, size_t in_len, size_t *in_used,
                     void *out, size_t out_cap, size_t *out_made, struct spaa_err *err)
{
  const char *name = spaa_coding_name(d->coding);
  uInt give_in = (uInt)(in_len > ZLIB_STEP ? ZLIB_STEP : in_len);
  uInt give_out = (uInt)(out_cap > ZLIB_STEP ? ZLIB_STEP : out_cap);
  int zrc;
  if (!d->zs_ready && d->coding == SPAA_CODING_DEFLATE && in_len < 2 && !d->whole) {
    *in_used = *out_made = 0; /* the first two bytes tell a zlib header from raw deflate */
    return 0;
  }
  if (!d->zs_ready) {
    int wbits = d->coding == SPAA_CODING_GZIP ? 16 + MAX_WBITS
                : in_len >= 2 && (in[0] & 0x0f) == 8 && ((in[0] << 8) | in[1]) % 31 == 0
                    ? MAX_WBITS
                    : -MAX_WBITS;
    d->zs.zalloc = z_alloc;
    d->zs.zfree = z_release;
    if (inflateInit2(&d->zs, wbits) != Z_OK)
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, "cannot start the %s decoder", name);
    d->zs_ready = 1;
  } else if (d->ended) {
    inflateReset(&d->zs); /* another gzip member */
  }
  d->ended = 0;
  d->zs.next_in = (Bytef *)(uintptr_t)in;
  d->zs.avail_in = give_in;
  d->zs.next_out = out;
  d->zs.avail_out = give_out;
  zrc = inflate(&d->zs, Z_NO_FLUSH);
  *in_used = give_in - d->zs.avail_in;
  *out_made = give_out - d->zs.avail_out;
  d->in_total += *in_used;
  if (*in_used)
    d->in_frame = 1;
  if (zrc == Z_STREAM_END) {
    d->ended = 1;
    d->in_frame = 0;
    d->frames++;
    return 1;
  }
  if (zrc == Z_OK || zrc == Z_BUF_ERROR) /* Z_BUF_ERROR: no progress was possible */
    return 0;
  if (zrc == Z_MEM_ERROR)
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  return spaa_err_set(err, SPAA_E_BAD_COMPRESSION, 0, d->in_total,
                      "corrupt %s %s: %s (near input byte %zu)", name, d->noun,
                      d->zs.msg ? d->zs.msg : "invalid data", d->in_total);
}

static int window_too_large(const struct spaa_dstream *d, struct spaa_err *err)
{
  return spaa_err_set(err, SPAA_E_TOO_LARGE, 0, d->in_total,
                      "zstd %s needs a window larger than the %zu-byte cap", d->noun, d->window);
}

static int step_zstd(struct spaa_dstream *d, const void *in, size_t in_len, size_t *in_used,
                     void *out, size_t out_cap, size_t *out_made, struct spaa_err *err)
{
  ZSTD_inBuffer ib = {in, in_len, 0};
  ZSTD_outBuffer ob = {out, out_cap, 0};
  ZSTD_frameHeader fh;
  size_t r;
  *in_used = *out_made = 0;
  /* A frame given whole with room for its content is decoded by libzstd in one pass, without
   * its window check: the rule is checked here, so that a frame is refused or taken alike
   * whatever the pieces it arrives in. */
  if (!d->in_frame && ZSTD_getFrameHeader(&fh, in, in_len) == 0 && fh.frameType == ZSTD_frame) {
    if (fh.windowSize > d->window_max && fh.windowSize > 1024)
      return window_too_large(d, err);
    /* a frame of no content given whole would be decoded in that one pass, which takes
     * blocks libzstd's streaming refuses for a window of 0 (an RLE block): its header alone
     * first, so that it is streamed, and refused alike however it arrives */
    if (fh.windowSize == 0 && in_len > fh.headerSize)
      ib.size = fh.headerSize;
  }
  r = ZSTD_decompressStream(d->zd, &ob, &ib);
  *in_used = ib.pos;
  *out_made = ob.pos;
  d->in_total += ib.pos;
  if (ZSTD_isError(r)) {
    if (ZSTD_getErrorCode(r) == ZSTD_error_frameParameter_windowTooLarge)
      return window_too_large(d, err);
    return spaa_err_set(err, SPAA_E_BAD_COMPRESSION, 0, d->in_total,
                        "corrupt zstd %s: %s (near input byte %zu)", d->noun,
                        ZSTD_getErrorName(r), d->in_total);
  }
  if (r == 0) { /* a frame ended and everything it held was given out */
    d->in_frame = 0;
    d->frames++;
    return 1;
  }
  if (ib.pos || ob.pos)
    d->in_frame = 1;
  return 0;
}

/* brotli: one stream (RFC 7932 has no members or frames: a step after its end starts a new
 * decoder, as gzip starts another member). */
static int step_br(struct spaa_dstream *d, const void *in, size_t in_len, size_t *in_used,
                   void *out, size_t out_cap, size_t *out_made, struct spaa_err *err)
{
  const uint8_t *next_in = in;
  uint8_t *next_out = out;
  size_t avail_in = in_len, avail_out = out_cap;
  BrotliDecoderResult r;
  if (d->ended) {
    BrotliDecoderDestroyInstance(d->bd);
    if (!(d->bd = br_new()))
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, "cannot start the br decoder");
    d->ended = 0;
  }
  r = BrotliDecoderDecompressStream(d->bd, &avail_in, &next_in, &avail_out, &next_out, NULL);
  *in_used = in_len - avail_in;
  *out_made = out_cap - avail_out;
  d->in_total += *in_used;
  if (r == BROTLI_DECODER_RESULT_ERROR) {
    BrotliDecoderErrorCode ec = BrotliDecoderGetErrorCode(d->bd);
    const char *what = BrotliDecoderErrorString(ec);
    if (ec <= BROTLI_DECODER_ERROR_ALLOC_CONTEXT_MODES && ec >= BROTLI_DECODER_ERROR_UNREACHABLE)
      return spaa_err_set(err, ec == BROTLI_DECODER_ERROR_UNREACHABLE ? SPAA_E_INTERNAL
                                                                      : SPAA_E_NOMEM,
                          0, 0, "br decoder: %s", what);
    while (*what == '_')
      what++;
    return spaa_err_set(err, SPAA_E_BAD_COMPRESSION, 0, d->in_total,
                        "corrupt br %s: invalid brotli data, %s (near input byte %zu)", d->noun,
                        what, d->in_total);
  }
  if (r == BROTLI_DECODER_RESULT_SUCCESS) { /* the stream ended and all its output was given */
    d->ended = 1;
    d->in_frame = 0;
    d->frames++;
    return 1;
  }
  if (*in_used || *out_made)
    d->in_frame = 1;
  return 0;
}

int spaa_dstream_step(struct spaa_dstream *d, const void *in, size_t in_len, size_t *in_used,
                      void *out, size_t out_cap, size_t *out_made, struct spaa_err *err)
{
  if (d->coding == SPAA_CODING_BR)
    return step_br(d, in, in_len, in_used, out, out_cap, out_made, err);
  if (d->coding == SPAA_CODING_ZSTD)
    return step_zstd(d, in, in_len, in_used, out, out_cap, out_made, err);
  return step_zlib(d, in, in_len, in_used, out, out_cap, out_made, err);
}

int spaa_dstream_finish(struct spaa_dstream *d, struct spaa_err *err)
{
  if (d->frames && !d->in_frame)
    return 0;
  return spaa_err_set(err, SPAA_E_BAD_COMPRESSION, 0, d->in_total,
                      "corrupt %s %s: the stream is truncated after %zu bytes",
                      spaa_coding_name(d->coding), d->noun, d->in_total);
}

/* ---- helpers of the pulled and one-buffer decoders -------------------------------------- */

/* Make at least some room in `out` for more output, never past `limit` bytes in total.
 * Returns the room (0 when `limit` is reached) or a negative code. */
static long long grow(struct spaa_buf *out, size_t limit)
{
  size_t room = out->cap > out->len + 1 ? out->cap - out->len - 1 : 0;
  size_t want;
  int rc;
  if (room > limit - out->len)
    room = limit - out->len;
  if (room)
    return (long long)room;
  if (out->len >= limit)
    return 0;
  want = out->len > CHUNK_MIN ? out->len : CHUNK_MIN; /* double */
  if (want > limit - out->len)
    want = limit - out->len;
  if ((rc = spaa_buf_reserve(out, want)))
    return rc;
  room = out->cap - out->len - 1;
  return (long long)(room > limit - out->len ? limit - out->len : room);
}

static int too_large(struct spaa_err *err, enum spaa_coding c, size_t max_out)
{
  return spaa_err_set(err, SPAA_E_TOO_LARGE, 0, 0, "%s body decodes to more than the %zu-byte cap",
                      spaa_coding_name(c), max_out);
}

size_t spaa_gzip_size_hint(const void *buf, size_t len)
{
  const unsigned char *in = buf;
  if (len < 18 || !spaa_is_gzip(buf, len))
    return 0;
  return (size_t)in[len - 4] | (size_t)in[len - 3] << 8 | (size_t)in[len - 2] << 16 |
         (size_t)in[len - 1] << 24;
}

/* Room for the whole output at once when a gzip trailer tells its size (spaa_gzip_size_hint),
 * plus one byte to see the end without growing and one for the NUL. `out` is empty. */
static int reserve_hint(const uint8_t *in, size_t len, size_t max_out, struct spaa_buf *out)
{
  size_t hint = spaa_gzip_size_hint(in, len);
  if (!hint || hint > max_out)
    return 0;
  /* exactly that (out is empty): spaa_buf_reserve would round up to a power of two */
  if (!(out->p = malloc(hint + 2)))
    return SPAA_E_NOMEM;
  out->cap = hint + 2;
  return 0;
}

/* ---- pulled from memory under a cap ------------------------------------------------------ */

struct spaa_dreader {
  struct spaa_dstream d;
  const uint8_t *in;  /* the encoded input */
  size_t len, pos;    /* its size, and what was consumed */
  size_t max_out;     /* cap on the decoded bytes */
  size_t made;        /* decoded so far */
  int done;           /* the input ended cleanly: nothing more to give */
};

static int dreader_init(struct spaa_dreader *r, enum spaa_coding c, const void *in, size_t len,
                        size_t max_out, struct spaa_err *err)
{
  int rc;
  memset(r, 0, sizeof(*r));
  r->in = in;
  r->len = len;
  r->max_out = max_out;
  if (c == SPAA_CODING_ZSTD && len == 0)
    return spaa_err_set(err, SPAA_E_BAD_COMPRESSION, 0, 0, "corrupt zstd body: it is empty");
  if ((rc = dstream_init(&r->d, c, max_out, "body", err)))
    return rc;
  r->d.whole = 1;
  return 0;
}

int spaa_dreader_new(enum spaa_coding c, const void *in, size_t len, size_t max_out,
                     struct spaa_dreader **out, struct spaa_err *err)
{
  struct spaa_dreader *r = malloc(sizeof(*r));
  int rc;
  *out = NULL;
  if (!r)
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  if ((rc = dreader_init(r, c, in, len, max_out, err))) {
    dstream_end(&r->d);
    free(r);
    return rc;
  }
  *out = r;
  return 0;
}

void spaa_dreader_free(struct spaa_dreader *r)
{
  if (!r)
    return;
  dstream_end(&r->d);
  free(r);
}

int spaa_dreader_read(struct spaa_dreader *r, void *out, size_t cap, size_t *made,
                      struct spaa_err *err)
{
  enum spaa_coding c = r->d.coding;
  size_t got = 0, used = 0, m = 0;
  int rc;
  *made = 0;
  while (got < cap && !r->done) {
    rc = spaa_dstream_step(&r->d, r->in + r->pos, r->len - r->pos, &used, (uint8_t *)out + got,
                           cap - got, &m, err);
    r->pos += used;
    got += m;
    r->made += m;
    if (rc < 0)
      return rc;
    if (r->made > r->max_out)
      return too_large(err, c, r->max_out);
    /* after the end: zstd reads on (a frame or garbage), gzip only into another member,
     * deflate and brotli not at all */
    if (rc == 1 && r->pos < r->len && c != SPAA_CODING_ZSTD &&
        (c != SPAA_CODING_GZIP || !spaa_is_gzip(r->in + r->pos, r->len - r->pos)))
      return spaa_err_set(err, SPAA_E_BAD_COMPRESSION, 0, r->pos,
                          "corrupt %s body: %zu unexpected bytes after the end of the stream at "
                          "byte %zu", spaa_coding_name(c), r->len - r->pos, r->pos);
    if ((rc == 1 && r->pos == r->len) || (rc == 0 && !used && !m)) {
      /* the end, or the input ran out inside a member or frame */
      if ((rc = spaa_dstream_finish(&r->d, err)))
        return rc;
      r->done = 1;
    }
  }
  *made = got;
  return 0;
}

/* ---- one buffer under a cap ------------------------------------------------------------ */

/* snappy and lz4 (base/snappy_lz4) into out, which is empty and capped by limit. */
static int decompress_whole(enum spaa_coding c, const uint8_t *in, size_t len, size_t max_out,
                            struct spaa_buf *out, struct spaa_err *err)
{
  const char *name = spaa_coding_name(c);
  if (c == SPAA_CODING_LZ4)
    return spaa__lz4_frame_decode(in, len, max_out, name, out, err);
  if (c == SPAA_CODING_SNAPPY_FRAMED ||
      (len >= SPAA__SNAPPY_STREAM_ID_LEN &&
       memcmp(in, SPAA__SNAPPY_STREAM_ID, SPAA__SNAPPY_STREAM_ID_LEN) == 0))
    return spaa__snappy_framed_decode(in, len, max_out, name, out, err);
  return spaa__snappy_block_decode(in, len, max_out, name, out, err);
}

int spaa_decompress(enum spaa_coding c, const void *in, size_t len, size_t max_out,
                    struct spaa_buf *out, struct spaa_err *err)
{
  struct spaa_dreader r;
  size_t limit = max_out < SIZE_MAX - 1 ? max_out + 1 : SIZE_MAX - 1; /* one more: too large */
  size_t made;
  int rc;
  spaa_buf_free(out);
  spaa_buf_init(out, limit);
  memset(&r, 0, sizeof(r));
  if (whole_only(c)) {
    rc = decompress_whole(c, in, len, max_out, out, err);
    goto out;
  }
  if ((rc = dreader_init(&r, c, in, len, max_out, err)))
    goto out;
  if (c == SPAA_CODING_GZIP && reserve_hint(in, len, max_out, out)) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    goto out;
  }
  while (!r.done) {
    long long room = grow(out, limit);
    if (room <= 0) {
      rc = room == 0 || room == SPAA_E_TOO_LARGE ? too_large(err, c, max_out)
                                                 : spaa_err_set(err, (int)room, 0, 0, NULL);
      goto out;
    }
    rc = spaa_dreader_read(&r, out->p + out->len, (size_t)room, &made, err);
    out->len += made;
    out->p[out->len] = 0;
    if (rc)
      goto out;
  }
out:
  dstream_end(&r.d);
  if (rc) {
    spaa_buf_free(out);
    spaa_buf_init(out, max_out);
  } else {
    out->max = max_out ? max_out : SIZE_MAX;
  }
  return rc;
}

/* ---- compressing sink ------------------------------------------------------------------ */

struct spaa_csink {
  enum spaa_coding coding;
  spaa_sink_cb down;  /* where compressed bytes go */
  void *down_ctx;
  ZSTD_CCtx *zc;      /* zstd */
  z_stream zs;        /* gzip, deflate */
  int zs_ready;       /* deflateInit2 done */
  unsigned char tmp[SINK_CHUNK]; /* compressed bytes on their way downstream */
};

int spaa_csink_open(enum spaa_coding c, int level, spaa_sink_cb down, void *down_ctx,
                    struct spaa_csink **out, struct spaa_err *err)
{
  struct spaa_csink *s = calloc(1, sizeof(*s));
  int rc = 0;
  *out = NULL;
  if (!s)
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  s->coding = c;
  s->down = down;
  s->down_ctx = down_ctx;
  if (c == SPAA_CODING_BR || whole_only(c)) {
    rc = spaa_err_set(err, SPAA_E_USAGE, 0, 0, "no %s encoder: %s is decoded only",
                      spaa_coding_name(c), spaa_coding_name(c));
  } else if (c == SPAA_CODING_ZSTD) {
    if (!(s->zc = ZSTD_createCCtx()))
      rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, "cannot start the zstd encoder");
    else if (level < ZSTD_minCLevel() || level > ZSTD_maxCLevel() ||
             ZSTD_isError(ZSTD_CCtx_setParameter(s->zc, ZSTD_c_compressionLevel, level)))
      rc = spaa_err_set(err, SPAA_E_USAGE, 0, 0, "bad zstd level %d", level);
  } else {
    int zrc = deflateInit2(&s->zs, level, Z_DEFLATED,
                           c == SPAA_CODING_GZIP ? 16 + MAX_WBITS : MAX_WBITS, 8,
                           Z_DEFAULT_STRATEGY);
    s->zs_ready = zrc == Z_OK;
    if (zrc == Z_STREAM_ERROR)
      rc = spaa_err_set(err, SPAA_E_USAGE, 0, 0, "bad %s level %d", spaa_coding_name(c), level);
    else if (zrc != Z_OK)
      rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, "cannot start the %s encoder",
                        spaa_coding_name(c));
  }
  if (rc) {
    spaa_csink_free(s);
    return rc;
  }
  *out = s;
  return 0;
}

/* Pass tmp[0..n) downstream. */
static int pass(struct spaa_csink *s, size_t n) { return n ? s->down(s->down_ctx, s->tmp, n) : 0; }

static int run_zstd(struct spaa_csink *s, const void *data, size_t len, int end)
{
  ZSTD_inBuffer in = {data, len, 0};
  int rc;
  for (;;) {
    ZSTD_outBuffer o = {s->tmp, sizeof(s->tmp), 0};
    size_t left = ZSTD_compressStream2(s->zc, &o, &in, end ? ZSTD_e_end : ZSTD_e_continue);
    if (ZSTD_isError(left))
      return SPAA_E_INTERNAL;
    if ((rc = pass(s, o.pos)))
      return rc;
    if (end ? left == 0 : in.pos == in.size)
      return 0;
  }
}

static int run_zlib(struct spaa_csink *s, const void *data, size_t len, int end)
{
  const unsigned char *p = data;
  int rc;
  for (;;) {
    size_t give = len > ZLIB_STEP ? ZLIB_STEP : len;
    int last = end && give == len, zrc;
    s->zs.next_in = (Bytef *)(uintptr_t)p;
    s->zs.avail_in = (uInt)give;
    do {
      s->zs.next_out = s->tmp;
      s->zs.avail_out = (uInt)sizeof(s->tmp);
      zrc = deflate(&s->zs, last ? Z_FINISH : Z_NO_FLUSH);
      if (zrc == Z_STREAM_ERROR)
        return SPAA_E_INTERNAL;
      if ((rc = pass(s, sizeof(s->tmp) - s->zs.avail_out)))
        return rc;
    } while (last ? zrc != Z_STREAM_END : s->zs.avail_in || !s->zs.avail_out);
    if (!give) /* finishing: no data, maybe no pointer either */
      return 0;
    p += give;
    len -= give;
    if (!len)
      return 0;
  }
}

int spaa_csink_write(void *ctx, const void *data, size_t len)
{
  struct spaa_csink *s = ctx;
  if (!len)
    return 0;
  return s->zc ? run_zstd(s, data, len, 0) : run_zlib(s, data, len, 0);
}

int spaa_csink_finish(struct spaa_csink *s, struct spaa_err *err)
{
  int rc = s->zc ? run_zstd(s, NULL, 0, 1) : run_zlib(s, NULL, 0, 1);
  if (rc)
    spaa_err_set(err, rc, 0, 0, "%s compression failed: %s", spaa_coding_name(s->coding),
                 spaa_err_default(rc));
  return rc;
}

void spaa_csink_free(struct spaa_csink *s)
{
  if (!s)
    return;
  ZSTD_freeCCtx(s->zc);
  if (s->zs_ready)
    deflateEnd(&s->zs);
  free(s);
}

int spaa_zstd_compress(const void *in, size_t len, int level, struct spaa_buf *out,
                       struct spaa_err *err)
{
  size_t bound, n;
  int rc;
  if (len > ZSTD_MAX_INPUT_SIZE)
    return spaa_err_set(err, SPAA_E_TOO_LARGE, 0, 0, "%zu bytes are more than zstd can compress",
                        len);
  bound = ZSTD_compressBound(len);
  if ((rc = spaa_buf_reserve(out, bound)))
    return spaa_err_set(err, rc, 0, 0, "no room for %zu compressed bytes", bound);
  n = ZSTD_compress(out->p + out->len, bound, in, len, level);
  if (ZSTD_isError(n))
    return spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "zstd: %s", ZSTD_getErrorName(n));
  out->len += n;
  out->p[out->len] = 0;
  return 0;
}

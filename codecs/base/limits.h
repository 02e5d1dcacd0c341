/* Every size and count cap of spaa-relay, in one place: what a request, a file or a setting
 * may make the program read, keep or build. Each is defined here once, by the layer it
 * belongs to; a cap that is hit becomes an error (mostly SPAA_E_TOO_LARGE, 413), never a
 * silent truncation. Settings with defaults (listen address, workers...) live in
 * config/config.h; their bounds are here. */
#ifndef SPAA_BASE_LIMITS_H
#define SPAA_BASE_LIMITS_H

#include <stddef.h>
#include <stdint.h>

/* ---- the product's cap ---------------------------------------------------------------------
 * 50 MB (MiB), as Sentry's Relay: a body as received, the same body once decompressed, a
 * Sentry profile item, a pprof's protobuf after gunzip. A 50 KB gzip bomb must not become
 * gigabytes. */
#define SPAA_MAX_PAYLOAD (50u * 1024 * 1024)

/* ---- codecs/base: JSON scanning ------------------------------------------------------------ */
#define SPAA_JSCAN_MAXDEPTH 64   /* containers open at once through the pull API */
#define SPAA_JSCAN_SKIPDEPTH 256 /* nesting accepted inside a skipped value */
#define SPAA_JSCAN_MAXNUM 512    /* longest number token accepted, in bytes */

/* ---- codecs/spaa: SPAA files --------------------------------------------------------------- */
#define SPAA_MAX_LINE (64u * 1024 * 1024)     /* bytes of one NDJSON line (a record) */
#define SPAA_VALIDATE_MAX_WARNED_BYTES 4096   /* unknown context keys remembered so as to warn
                                               * once each: bytes of their names */

/* ---- codecs/pprof -------------------------------------------------------------------------- */
#define SPAA_PPROF_MAX_RAW SPAA_MAX_PAYLOAD           /* protobuf bytes (after gunzip) */
#define SPAA_PPROF_MAX_DECODED (512u * 1024 * 1024)   /* unpacked structures in memory */
#define SPAA_PPROF_STREAM_OVER ((size_t)2 * 1024 * 1024) /* gzip bytes past which a pprof is
                                                         * inflated window by window at each
                                                         * pass instead of held gunzipped */
#define SPAA_PPROF_WINDOW ((size_t)256 * 1024)       /* that window (grows for a larger sample) */
#define SPAA_PPROF_MAX_DEPTH 16384                    /* frames of one stack, inlines expanded */
#define SPAA_PPROF_MAX_FRAME_REFS (32u * 1024 * 1024) /* frame ids over all stacks */

/* ---- codecs/folded ------------------------------------------------------------------------- */
#define SPAA_FOLDED_MAX_LINE (1u << 20)                  /* bytes of one line */
#define SPAA_FOLDED_MAX_DEPTH SPAA_PPROF_MAX_DEPTH       /* frames of one stack */
#define SPAA_FOLDED_MAX_FRAME_REFS SPAA_PPROF_MAX_FRAME_REFS /* frame ids over all stacks */
#define SPAA_FOLDED_SNIFF 4096                           /* bytes looked at to tell text from
                                                          * a binary profile */

/* ---- codecs/otlp: what a request may make us build, past what its bytes already bound --- */
#define OTLP_MAX_DEPTH 48               /* nesting of messages (AnyValue arrays, kvlists) */
#define OTLP_MAX_JSON_ARRAY (16u << 20) /* elements of one JSON array */
#define OTLP_MAX_REPORTED 3             /* rejections named in a partial_success message */

/* ---- codecs/sentry ------------------------------------------------------------------------- */
#define SENTRY_MAX_ITEMS 1000                    /* items in one envelope */
#define SENTRY_MAX_HEADER_LINE (1024u * 1024)    /* bytes of one envelope or item header line */
#define SENTRY_MAX_PROFILE_BYTES SPAA_MAX_PAYLOAD /* a profile item's payload (Relay's cap) */
#define SENTRY_MAX_V1_DURATION_NS 30000000000ull /* last sample of a V1 profile (Relay: 30 s) */
#define SENTRY_MAX_V2_DURATION_NS 66000000000ull /* last - first sample of a V2 chunk */
#define SENTRY_MAX_AUTH_VALUE 8192               /* bytes of one auth header value or query */
#define SENTRY_MAX_PROJECT 20                    /* digits of a project id */

/* ---- storage ------------------------------------------------------------------------------- */
#define SPAA_STORE_MAX_ID 256         /* bytes of a profile id */
#define SPAA_STORE_MAX_LABELS 256     /* labels of one profile */
#define SPAA_STORE_MAX_LABEL_LEN 4096 /* bytes of a label key or value */
#define SPAA_STORE_MAX_BLOCK ((size_t)1 << 30) /* bytes of a raw per-profile block */
#define SPAA_STORE_MAX_DICT ((size_t)4 << 20) /* bytes of a service's block dictionary */
/* content id -> row id entries the writer keeps: 4 MiB, 3 of entries and 1 of a table of 2^18
 * slots at most half full (docs/storage.md) */
#define SPAA_STORE_CID_CACHE 131072
#define SPAA_STORE_DICT_CACHE 64 /* service dictionaries the writer keeps in memory */
#define SPAA_STORE_DICT_CACHE_BYTES ((size_t)32 << 20) /* ... and the bytes they may hold */
#define SPAA_STORE_DELETE_BATCH 256 /* profiles deleted per transaction (short write locks) */
#define SPAA_QUERY_MAX_CURSOR 600     /* hex characters of a list cursor */

/* ---- the query API (server/api.c, storage/query.c) ------------------------------------------ */
#define SPAA_QUERY_MAX_LABELS 64      /* label filters in one list request */
#define SPAA_QUERY_MAX_ATTRS 8        /* attribute filters (release, trace_id...) in one list request */
#define SPAA_QUERY_MAX_ATTR_KEY 48    /* bytes of an attribute filter's key */
#define SPAA_QUERY_MAX_LABEL_ITEM 256 /* bytes of one "key:value" filter, NUL included */
#define SPAA_QUERY_MAX_PAGE 1000      /* profiles in one page of the list */
#define SPAA_QUERY_MAX_ID 64          /* characters of a profile id in a URL */

/* ---- server: HTTP -------------------------------------------------------------------------- */
#define SPAA_HTTP_MAX_PARAMS 4                  /* {params} in one route pattern */
#define SPAA_HTTP_MAX_HEADERS 8                 /* extra headers of one response */
#define SPAA_HTTP_LONG_HEADER 8192              /* the one of them that may be long (an upload's
                                                   X-Spaa-Profile-Ids), bytes */
#define SPAA_HTTP_MAX_PATH 2048                 /* longest request path (400 beyond) */
#define SPAA_HTTP_RESP_MAX ((size_t)1 << 30)    /* bytes of a response body */
#define SPAA_HTTP_QUICK_MAX ((size_t)16 << 10) /* bodies a route may answer on the I/O thread */
#define SPAA_HTTP_FILE_BODY ((size_t)4 << 20) /* a body longer is kept in an unlinked file */
#define SPAA_HTTP_TRIM_ANSWER ((size_t)256 << 10) /* an answer this large: free pages go back to the OS */
#define SPAA_HTTP_MIN_DISCARD ((size_t)64 << 20) /* bytes past a body's cap read and thrown away
                                                  * before the connection is dropped (or the
                                                  * cap itself when larger) */
#define SPAA_HTTP_IO_THREADS 2                  /* libmicrohttpd threads reading sockets */
#define SPAA_HTTP_POOL_QUEUE 1024               /* finished bodies waiting for a worker */
#define SPAA_HTTP_BUDGET_WAIT_MS 2000           /* a worker's wait for the memory budget */
#define SPAA_BUDGET_GROW_STEP ((size_t)8 << 20) /* models past their advance charge take
                                                  * the budget in steps of this (twice) */
#define SPAA_BUDGET_GROW_WAIT_MS 250            /* a growing conversion's wait for them */
#define SPAA_BUDGET_READ_COST ((size_t)1 << 20) /* the advance charge of a request that reads
                                                  * stored profiles (its models are metered
                                                  * as they grow) */
#define SPAA_BUDGET_MIN_CEILING ((size_t)256 << 20) /* what one conversion's charge may reach
                                                  * when the budget is smaller (else: the
                                                  * budget); past it, 413 */
#define SPAA_HTTP_MODEL_FACTOR 16               /* budget charge per decoded byte: the decoded
                                                  * body, the wire format's decoded messages and
                                                  * the model (routes may say otherwise); models
                                                  * past it take more as they grow (budget.h),
                                                  * as an OTLP request's can: its dictionary
                                                  * lets a few bytes name a deep stack again */
#define SPAA_HTTP_PPROF_FACTOR 2                /* pprof routes, per decoded byte (the gzip
                                                  * trailer's size when the body is gzip): a
                                                  * 48 MiB pprof peaks 81 MB above idle, 1.6x */
#define SPAA_HTTP_SENTRY_FACTOR 6               /* the Sentry route, per decoded byte: its
                                                  * payload is read in place, without a JSON
                                                  * tree (a 9 MB chunk peaks 34 MB above idle,
                                                  * 3.7x); chunks dense in stacks grow past it,
                                                  * metered as any model */
#define SPAA_HTTP_GUESS_RATIO 6                 /* decoded/encoded guess before decoding */
#define SPAA_HTTP_TRIM_AFTER ((size_t)32 << 20) /* bytes charged before a malloc_trim */
#define SPAA_HTTP_LOG_INTERVAL_S 10             /* counted refusals and drops logged this often */
#define SPAA_HTTP_MHD_MEMORY ((size_t)32 << 10) /* libmicrohttpd's per-connection memory: it
                                                  * zeroes all of it for every request (64 KiB
                                                  * cost a third of the requests/s at 1,024
                                                  * connections); heads up to it get our 431 */
#define SPAA_HTTP_MAX_URI 8192                  /* bytes of a request URI (414 beyond) */
#define SPAA_HTTP_MAX_HEAD 16384                /* bytes of a request head (431 beyond) */
#define SPAA_DECODE_MAX_CODINGS 4               /* codings stacked in one Content-Encoding */
#define SPAA_MULTIPART_MAX_BOUNDARY 70          /* RFC 2046: 1 to 70 characters */
#define SPAA_MULTIPART_MAX_PARTS 16             /* parts in one body */
#define SPAA_MULTIPART_MAX_HEADERS 8            /* header lines of one part */
#define SPAA_MULTIPART_MAX_HEADER_LINE 1024     /* bytes of one header line */
#define SPAA_MULTIPART_MAX_NAME 128             /* bytes of a field name or file name */

/* ---- server: dialects ---------------------------------------------------------------------- */
#define SPAA_OTLP_MAX_BODY ((size_t)64 << 20)  /* an OTLP body, as received and decoded (the
                                               * OTLP specification recommends 64 MiB) */
#define SPAA_OTLP_MAX_MSG 1024                 /* bytes of a partial_success or Status message */
#define SPAA_PPROF_MAX_NAME 8192               /* bytes of the Pyroscope `name` parameter */
#define SPAA_PPROF_MAX_LABELS 32               /* labels in `name` */
#define SPAA_PPROF_MAX_LABEL_VALUE 2048        /* bytes of one label key or value in `name`
                                                  (Pyroscope's default max_label_value_length) */
#define SPAA_PPROF_MAX_STC (64u * 1024)        /* bytes of a sample_type_config field */
#define SPAA_PPROF_MAX_SAMPLE_RATE 1000000000LL /* Hz, the largest sampleRate accepted */
#define SPAA_PPROF_PUSH_MAX_SAMPLES 1024       /* profiles in one push.v1 PushRequest */
#define SPAA_PPROF_PUSH_MAX_LABELS 64          /* labels of one push.v1 series */

/* ---- server: the process ------------------------------------------------------------------- */
#define SPAA_SERVE_MAX_BATCH 64                /* profiles in one store transaction */
#define SPAA_LOG_MAX_LINE 4096                 /* bytes of a log line's key=value part */
#define SPAA_CONVERT_MAX_INPUT ((size_t)4 << 30) /* `convert` reads inputs whole: 4 GiB at most */
#define SPAA_METRICS_MAX_SERIES 192            /* label value pairs per metric family; more
                                               * share one "_overflow" series */
#define SPAA_METRICS_MAX_VALUE 96              /* bytes of a metric label value (cut past it) */
#define SPAA_METRICS_MAX_TEXT ((size_t)4 << 20) /* bytes of one /metrics answer */

/* ---- config: the bounds of every setting, and the size defaults ---------------------------- */
#define SPAA_CONFIG_DEFAULT_MAX_BODY ((size_t)SPAA_MAX_PAYLOAD)         /* max_body, unset */
#define SPAA_CONFIG_DEFAULT_MAX_DECOMPRESSED ((size_t)SPAA_MAX_PAYLOAD) /* max_decompressed */
#define SPAA_CONFIG_MAX_SIZE ((size_t)16 * 1024 * 1024 * 1024)        /* any size setting */
#define SPAA_CONFIG_MAX_DURATION ((uint64_t)100 * 366 * 86400) /* any duration setting: 100 years */
#define SPAA_CONFIG_MAX_WORKERS 4096
#define SPAA_CONFIG_MAX_CONNECTIONS 65536
#define SPAA_CONFIG_MAX_QUEUE_DEPTH 1000000
#define SPAA_CONFIG_MAX_IDLE_TIMEOUT 86400 /* seconds */
#define SPAA_CONFIG_MAX_LINE 4096          /* bytes of a config file line */
#define SPAA_CONFIG_MAX_LIST 1024          /* keys or tokens of one kind */

#endif
